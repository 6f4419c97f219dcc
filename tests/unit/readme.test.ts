/**
 * The README stays a front page: the two commands first, short lines (at most 120 characters), every document it
 * names present. What it used to list at length lives in docs/configuration.md (every environment variable,
 * generated) and docs/api.md (every route, generated).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const LINES = README.split('\n');

describe('README.md', () => {
  it('has no line over 120 characters', () => {
    const long = LINES.map((line, i) => ({ line: i + 1, length: [...line].length })).filter((l) => l.length > 120);
    expect(long).toEqual([]);
  });

  it('starts with the two commands', () => {
    expect(LINES.slice(0, 6)).toEqual([
      '# Holon',
      '',
      '```sh',
      expect.stringMatching(/^npm install && npm start {5}# the gateway on http:\/\/localhost:8080/),
      expect.stringMatching(/^npm test {21}# the whole test suite/),
      '```',
    ]);
  });

  it('names only documents that exist, and links the generated ones', () => {
    const named = [...README.matchAll(/`(docs\/[A-Za-z0-9_./-]+\.md)`/g)].map((m) => m[1]!);
    expect(named.filter((f) => !existsSync(path.join(ROOT, f)))).toEqual([]);
    expect(named).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/api.md', 'docs/operating.md']));
  });
});
