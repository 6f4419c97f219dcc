/**
 * Identity rules of a manifest (shared/core/manifest/rules/identity.ts, spec/manifest.md §2): id, version, summary,
 * description, capabilities, license and source.
 */
import { describe, expect, it } from 'vitest';
import { parseDocumentText } from '../../shared/core/documents.js';
import { parseManifest } from '../../shared/core/manifest/index.js';
import { SPEC_YAML, check, problemsOf, expectProblem, expectValid } from '../support/manifest-checks.js';

describe('identity', () => {
  it.each(['ab/cd', 'lena/tables-fr', `${'a'.repeat(39)}/${'b'.repeat(39)}`, 'a-b/c--d', '00/99'])('accepts the id %s', (id) => {
    expectValid(
      check((d) => {
        d.id = id;
      }),
    );
  });

  it.each(['Lena/tables', 'a/bc', 'ab/c', '-ab/cd', 'ab-/cd', 'ab/cd-', 'ab/cd/ef', 'abcd', `${'a'.repeat(40)}/ab`, 'ab/c_d', 'ab /cd'])(
    'refuses the id %j',
    (id) => {
      expectProblem(
        check((d) => (d.id = id)),
        '$.id',
        '<namespace>/<name>',
      );
    },
  );

  it.each(['1.2.0', '0.0.1', '1.2.0-rc.1', '1.2.0+build.5', '10.20.30-alpha.1+sha.abc'])('accepts the version %s', (version) => {
    expectValid(check((d) => (d.version = version)));
  });

  it.each(['v1.2.0', '1.2', '01.2.0', '=1.2.0', ' 1.2.0', '1.2.0 ', '1.2.x', '^1.2.0', 'latest', '1.2.0-'])('refuses the version %j', (version) => {
    expectProblem(
      check((d) => (d.version = version)),
      '$.version',
      'Semantic Versioning',
    );
  });

  it('refuses a version given as a number', () => {
    expectProblem(
      check((d) => (d.version = 1.2)),
      '$.version',
      'string',
    );
  });

  it('says what to write for `version: 1.0` in YAML (the number 1), once', () => {
    const r = parseManifest(SPEC_YAML.replace(/^version: .*$/m, 'version: 1.0'), 'yaml');
    expectProblem(r, '$.version', 'must be a semver string like 1.0.0');
    expect(problemsOf(r).filter((p) => p.path === '$.version')).toHaveLength(1);
  });

  it('gives the line and column of a YAML syntax error', () => {
    const r = parseDocumentText('id: lena/x\nversion: "1.0.0"\ncapabilities: [a.b\nsummary: s\n', 'yaml');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0]!.message).toMatch(/^not valid YAML \(line \d+, column \d+\): /);
    const tabbed = parseDocumentText('id: lena/x\n\tversion: 1\n', 'yaml');
    expect(!tabbed.ok && tabbed.problems[0]!.message).toMatch(/^not valid YAML \(line 2, column 1\): /);
  });

  it('checks the summary: one line, at most 140 characters, not empty', () => {
    expectValid(check((d) => (d.summary = 'é'.repeat(140))));
    expectProblem(
      check((d) => (d.summary = 'x'.repeat(141))),
      '$.summary',
      '140',
    );
    expectProblem(
      check((d) => (d.summary = 'line one\nline two')),
      '$.summary',
      'one line',
    );
    expectProblem(
      check((d) => (d.summary = '')),
      '$.summary',
      'empty',
    );
    expectProblem(
      check((d) => (d.summary = '   ')),
      '$.summary',
      'empty',
    );
  });

  it('limits the description to 8 KB', () => {
    expectValid(check((d) => (d.description = 'x'.repeat(8192))));
    expectProblem(
      check((d) => (d.description = 'x'.repeat(8193))),
      '$.description',
      '8 KB',
    );
    expectProblem(
      check((d) => (d.description = 'é'.repeat(4097))),
      '$.description',
      '8 KB',
    ); // bytes, not characters
  });

  it('checks capabilities: 1 to 16 classes, no duplicates', () => {
    expectValid(check((d) => (d.capabilities = ['search', 'data.csv-profile', 'text.summarize', 'a1.b2.c3'])));
    expectProblem(
      check((d) => (d.capabilities = [])),
      '$.capabilities',
      'at least 1',
    );
    expectProblem(
      check((d) => (d.capabilities = Array.from({ length: 17 }, (_, i) => `cap.c${i}`))),
      '$.capabilities',
      'at most 16',
    );
    expectProblem(
      check((d) => (d.capabilities = ['text.summarize', 'ocr', 'text.summarize'])),
      '$.capabilities[2]',
      'twice',
    );
    for (const bad of ['Extraction.table', 'extraction..table', '.table', 'table.', 'extraction.*', 'data.-csv', 'data.csv-', 'a b']) {
      expectProblem(
        check((d) => (d.capabilities = ['ok', bad])),
        '$.capabilities[1]',
        'capability class',
      );
    }
  });

  it('checks the license', () => {
    for (const ok of ['MIT', 'Apache-2.0', 'GPL-3.0-or-later', 'proprietary', 'LicenseRef-acme', 'GPL-2.0+']) {
      expectValid(check((d) => (d.license = ok)));
    }
    for (const bad of ['MIT OR Apache-2.0', '', '-MIT', '(MIT)']) {
      expectProblem(
        check((d) => (d.license = bad)),
        '$.license',
        'SPDX',
      );
    }
  });

  it('checks source.repository, which may be absent', () => {
    expectValid(check((d) => delete d.source));
    for (const bad of [
      'https://gitlab.com/lena/x',
      'http://github.com/lena/x',
      'https://github.com/lena',
      'https://github.com/lena/x/tree/main',
      'https://github.com/lena/..',
      'https://github.com/-lena/x',
    ]) {
      expectProblem(
        check((d) => (d.source.repository = bad)),
        '$.source.repository',
      );
    }
    expectProblem(
      check((d) => (d.source = {})),
      '$.source.repository',
      'required',
    );
  });
});
