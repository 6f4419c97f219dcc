/**
 * Where the evaluator finds the suite of a capability (services/evaluator/suites.ts, spec/evals.md §1–§2).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { locateSuites } from '../../services/evaluator/suites.js';

let root: string;
const suite = async (dir: string, capability: string) => {
  await mkdir(path.join(dir, capability), { recursive: true });
  await writeFile(path.join(dir, capability, 'suite.yaml'), `capability: ${capability}\nversion: 1\ncases: []\n`);
};

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'holon-suites-'));
  await suite(path.join(root, 'public'), 'text.count');
  await suite(path.join(root, 'public'), 'data.csv-profile');
  await suite(path.join(root, 'private'), 'data.csv-profile');
  await suite(path.join(root, 'private'), 'extraction.table');
  // A directory named like a capability but outside the suites: never reached.
  await suite(root, 'escaped');
});
afterAll(async () => rm(root, { recursive: true, force: true }));

describe('locateSuites', () => {
  test('public suites; a private suite replaces the public one of its capability; no suite, no entry', async () => {
    const found = await locateSuites(['text.count', 'data.csv-profile', 'extraction.table', 'text.summarize'], {
      publicDir: path.join(root, 'public'),
      privateDir: path.join(root, 'private'),
    });
    expect(found).toEqual([
      { capability: 'text.count', file: path.join(root, 'public', 'text.count', 'suite.yaml'), hidden: false },
      { capability: 'data.csv-profile', file: path.join(root, 'private', 'data.csv-profile', 'suite.yaml'), hidden: true },
      { capability: 'extraction.table', file: path.join(root, 'private', 'extraction.table', 'suite.yaml'), hidden: true },
    ]);
  });

  test('without HOLON_PRIVATE_EVALS only the public samples count', async () => {
    const found = await locateSuites(['data.csv-profile', 'extraction.table'], { publicDir: path.join(root, 'public') });
    expect(found).toEqual([{ capability: 'data.csv-profile', file: path.join(root, 'public', 'data.csv-profile', 'suite.yaml'), hidden: false }]);
  });

  test('a capability never names a path outside the suites directory', async () => {
    const found = await locateSuites(['../escaped', '..', '/etc', 'a/../../escaped'], {
      publicDir: path.join(root, 'public'),
      privateDir: path.join(root, 'private'),
    });
    expect(found).toEqual([]);
  });
});
