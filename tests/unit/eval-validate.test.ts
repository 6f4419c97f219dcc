/**
 * `holon validate` on evaluation suites (services/cli/validate.ts): recognised by the file name suite.yaml or a
 * top-level `cases`, every problem with its path, fixtures looked for in files/ beside the suite, exit codes as for
 * manifests (0 valid, 1 invalid, 2 misuse).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatReport, recogniseKind, validateFile } from '../../services/cli/validate.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function holon(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

let dir: string;
const at = (...p: string[]) => path.join(dir, ...p);
async function put(file: string, text: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

const GOOD = `capability: data.table
version: 2
pass_threshold: "0.8"
cases:
  - id: small
    input: { file: "holon://evals/data.table/small.csv" }
    expect: { paths: { /rows: 2 } }
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'holon-validate-suite-'));
  await put(at('data.table', 'suite.yaml'), GOOD);
  await put(at('data.table', 'files', 'small.csv'), 'a\n1\n2\n');
  await put(
    at('broken', 'data.broken', 'suite.yaml'),
    `capability: data.broken
version: 0
pass_threshold: 0.8
surprise: true
cases:
  - id: Bad
    input: { file: "holon://evals/data.broken/missing.csv" }
    expect: { error: empty_input, output: {} }
  - id: escape
    input: { file: "holon://evals/data.broken/../../etc/passwd" }
    expect: { paths: { rows: 1 } }
  - id: escape
    input: { file: "holon://evals/data.broken/absent.csv" }
    expect: {}
`,
  );
  await put(at('broken', 'data.broken', 'files', 'present.csv'), 'x');
  // Not named suite.yaml: a suite by its `cases`; fixtures beside it; no directory rule.
  await put(at('drafts', 'my-draft.yaml'), GOOD);
  await put(at('drafts', 'files', 'small.csv'), 'a\n1\n2\n');
  await put(at('drafts-b', 'no-fixture.yaml'), GOOD);
  await put(at('drafts-b', 'files', 'other.csv'), 'x');
  // Named suite.yaml, in a directory named otherwise.
  await put(at('elsewhere', 'suite.yaml'), GOOD.replace('holon://evals/data.table/small.csv', 'no fixture'));
  // Named suite.yaml, but a manifest inside: judged as a suite.
  await put(
    at('data.manifest', 'suite.yaml'),
    'id: lena/x\nversion: 1.0.0\nsummary: s\ncapabilities: [a.b]\nlicense: MIT\ninterface: {input: {}, output: {}}\npricing: {model: free}\nruntime: {kind: node}\n',
  );
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('holon validate: evaluation suites', () => {
  it('recognises a suite by a top-level cases list', () => {
    expect(recogniseKind({ capability: 'a.b', cases: [] })).toBe('suite');
    expect(recogniseKind({ cases: 1, version: 1, interface: {} })).toBe('suite');
    expect(recogniseKind({ id: 'a/b', version: '1.0.0', interface: {} })).toBe('manifest');
  });

  it('a valid suite, its fixtures found in files/ beside it', async () => {
    const r = await validateFile(at('data.table', 'suite.yaml'));
    expect(r).toEqual({ file: at('data.table', 'suite.yaml'), kind: 'suite', valid: true, id: 'data.table v2, 1 case', problems: [] });
    expect(formatReport(r)).toBe(`✓ ${at('data.table', 'suite.yaml')}: valid suite data.table v2, 1 case\n`);
  });

  it('every problem with its path, fixtures included', async () => {
    const r = await validateFile(at('broken', 'data.broken', 'suite.yaml'));
    expect(r.kind).toBe('suite');
    expect(r.valid).toBe(false);
    expect(r.problems.map((p) => p.path)).toEqual([
      '$.cases[0].expect',
      '$.cases[0].id',
      '$.cases[1].expect.paths.rows',
      '$.cases[1].input.file',
      '$.cases[2].id',
      '$.pass_threshold',
      '$.surprise',
      '$.version',
    ]);
    expect(formatReport(r)).toMatch(/^✗ .*suite\.yaml: invalid suite, 8 problems\n/);
    // Once the document is valid, missing fixtures are found.
    const fixed = await put(
      at('broken', 'data.broken', 'suite.yaml'),
      'capability: data.broken\nversion: 1\npass_threshold: "1"\ncases:\n  - id: a\n    input: ["holon://evals/data.broken/missing.csv", "holon://evals/data.broken/present.csv"]\n    expect: {}\n',
    );
    const again = await validateFile(fixed);
    expect(again.problems).toEqual([{ path: '$.cases[0].input', message: expect.stringMatching(/^fixture "missing.csv": there is no file missing.csv in /) }]);
  });

  it('a draft not named suite.yaml: fixtures beside it, no directory rule', async () => {
    expect(await validateFile(at('drafts', 'my-draft.yaml'))).toMatchObject({ kind: 'suite', valid: true });
    const r = await validateFile(at('drafts-b', 'no-fixture.yaml'));
    expect(r.kind).toBe('suite');
    expect(r.problems).toEqual([{ path: '$.cases[0].input', message: expect.stringContaining('fixture "small.csv": there is no file small.csv in ') }]);
    expect(r.problems[0]!.message).toMatch(/drafts-b.files/);
  });

  it('suite.yaml must sit in a directory named like its capability', async () => {
    const r = await validateFile(at('elsewhere', 'suite.yaml'));
    expect(r.problems).toEqual([
      { path: '$.capability', message: expect.stringContaining('"data.table" is not the name of the directory holding the suite ("elsewhere")') },
    ]);
  });

  it('a file named suite.yaml is judged as a suite, whatever it holds', async () => {
    const r = await validateFile(at('data.manifest', 'suite.yaml'));
    expect(r.kind).toBe('suite');
    expect(r.problems.map((p) => p.path)).toEqual(expect.arrayContaining(['$.capability', '$.cases', '$.pass_threshold', '$.interface']));
  });

  it('end to end: exit 0 for the shipped suites and a manifest, 1 when any is invalid, 2 on misuse', async () => {
    const ok = await holon('validate', 'evals/data.profile/suite.yaml', 'evals/text.count/suite.yaml', 'examples/word-count/holon.yaml');
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('✓ evals/data.profile/suite.yaml: valid suite data.profile v1, 15 cases');
    expect(ok.stdout).toContain('valid manifest examples/word-count@1.0.0');

    const bad = await holon('validate', at('data.table', 'suite.yaml'), at('elsewhere', 'suite.yaml'), '--json');
    expect(bad.code).toBe(1);
    const reports = JSON.parse(bad.stdout);
    expect(reports.map((r: { kind: string; valid: boolean }) => [r.kind, r.valid])).toEqual([
      ['suite', true],
      ['suite', false],
    ]);
    expect(reports[1].problems[0].path).toBe('$.capability');

    expect((await holon('validate', '--suite', 'x')).code).toBe(2);
    const help = await holon('validate', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('suite.yaml');
    expect(help.stdout).toContain('files/');
  });
});
