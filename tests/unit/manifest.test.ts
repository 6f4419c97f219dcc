import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseDocumentText } from '../../shared/core/documents.js';
import type { Problem } from '../../shared/core/errors.js';
import {
  compileInterface,
  parseManifest,
  RESERVED_ERROR_CODES,
  validateManifest,
  type ManifestResult,
  type UpstreamInfo,
  type ValidateManifestOptions,
} from '../../shared/core/manifest/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDoc = Record<string, any>;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/manifests/${name}`, import.meta.url), 'utf8');
const SPEC_YAML = fixture('spec-example.yaml');

/** A fresh copy of the spec §1 example, as a parsed document. */
function specDoc(): AnyDoc {
  const parsed = parseDocumentText(SPEC_YAML);
  if (!parsed.ok) throw new Error('fixture does not parse');
  return parsed.value as AnyDoc;
}

function check(mutate: (d: AnyDoc) => void, options?: ValidateManifestOptions): ManifestResult {
  const d = specDoc();
  mutate(d);
  return validateManifest(d, options);
}

function problemsOf(r: ManifestResult): Problem[] {
  return r.ok ? [] : r.problems;
}

/** The result is invalid and has a problem at exactly `path` (whose message contains `words`, when given). */
function expectProblem(r: ManifestResult, path: string, words?: string | RegExp): void {
  expect(r.ok).toBe(false);
  const at = problemsOf(r).filter((p) => p.path === path);
  expect(at, `no problem at ${path}; got ${JSON.stringify(problemsOf(r))}`).not.toHaveLength(0);
  if (words !== undefined) {
    const ok = at.some((p) => (typeof words === 'string' ? p.message.includes(words) : words.test(p.message)));
    expect(ok, `no message matching ${String(words)} at ${path}; got ${JSON.stringify(at)}`).toBe(true);
  }
}

function expectValid(r: ManifestResult): void {
  expect(problemsOf(r)).toEqual([]);
  expect(r.ok).toBe(true);
}

const upstream = (over: Partial<UpstreamInfo> = {}): UpstreamInfo => ({
  forks: { minRoyalty: { num: 10n, den: 100n }, allowed: true },
  ...over,
});

describe('valid manifests', () => {
  it('accepts the spec example as YAML and normalizes amounts and rates', () => {
    const r = parseManifest(SPEC_YAML);
    expectValid(r);
    if (!r.ok) return;
    const m = r.manifest;
    expect(m.id).toBe('lena/tables-fr');
    expect(m.namespace).toBe('lena');
    expect(m.name).toBe('tables-fr');
    expect(m.pricing).toEqual({ model: 'per_unit', currency: 'EUR', amount: 5000n, unit: 'page', max: 500000n, chargeOn: 'success' });
    expect(m.lineage).toEqual({ forkedFrom: { id: 'acme/pdf-tables', version: '2.0.1' }, royalty: { num: 15n, den: 100n } });
    expect(m.forks).toEqual({ minRoyalty: { num: 10n, den: 100n }, allowed: true });
    expect(m.calls).toEqual([{ capability: 'ocr.page', maxCost: 20000n }]);
    expect(m.downstream).toEqual({ mode: 'passthrough', cap: 400000n });
    expect(m.runtime).toEqual({ kind: 'mcp', endpoint: 'https://tables.example.org/mcp', tool: 'extract_tables', timeoutS: 60 });
    expect(m.data).toEqual({ retention: { kind: 'none' }, region: ['eu'], training: false });
    expect(m.interface.errors.partial).toEqual({ description: 'Some pages were unreadable', billed: true });
    expect(m.interface.errors.over_budget?.billed).toBe(false);
    expect(m.interface.examples).toEqual([{ input: { file: 'holon://files/sample' }, output: { tables: [] } }]);
    expect(m.doc.version).toBe('1.2.0');
  });

  it('accepts the spec example as JSON (explicit and detected format)', () => {
    const json = JSON.stringify(specDoc());
    for (const r of [parseManifest(json, 'json'), parseManifest(json)]) {
      expectValid(r);
      if (r.ok) expect(r.manifest.pricing.max).toBe(500000n);
    }
  });

  it('accepts the node per_run fixture and applies defaults', () => {
    const r = parseManifest(fixture('node-per-run.yaml'));
    expectValid(r);
    if (!r.ok) return;
    const m = r.manifest;
    expect(m.capabilities).toEqual(['data.csv-profile']);
    expect(m.pricing).toEqual({ model: 'per_run', currency: 'EUR', amount: 10000n, chargeOn: 'success' });
    expect(m.runtime).toEqual({ kind: 'node', timeoutS: 30 });
    expect(m.forks).toEqual({ minRoyalty: { num: 0n, den: 1n }, allowed: true });
    expect(m.interface.errors.empty_file).toEqual({ description: 'The CSV has no rows', billed: false });
    expect(m.data).toEqual({ retention: { kind: 'days', days: 30 }, region: ['eu', 'fr'], training: false, subprocessors: [] });
    expect(m.calls).toEqual([]);
    expect(m.downstream).toBeUndefined();
    expect(m.lineage).toBeUndefined();
  });

  it('accepts the passthrough orchestrator fixture', () => {
    const r = parseManifest(fixture('passthrough-orchestrator.yaml'));
    expectValid(r);
    if (!r.ok) return;
    expect(r.manifest.calls).toEqual([
      { capability: 'extraction.table', maxCost: 500000n },
      { agent: 'holon-labs/summarize@^1.2', maxCost: 50000n },
      { agent: 'lena/tables-fr', maxCost: 3000000n },
    ]);
    expect(r.manifest.downstream).toEqual({ mode: 'passthrough', cap: 3000000n });
    expect(r.manifest.pricing.chargeOn).toBe('attempt');
    expect(r.manifest.runtime.timeoutS).toBe(300);
  });

  it('keeps a declared-errors map free of inherited names', () => {
    const r = parseManifest(SPEC_YAML);
    if (!r.ok) throw new Error('invalid');
    expect(r.manifest.interface.errors['constructor']).toBeUndefined();
    expect(r.manifest.interface.errors['toString']).toBeUndefined();
  });

  it('accepts a minimal free agent without currency (normalized to EUR)', () => {
    const r = check((d) => {
      d.pricing = { model: 'free' };
      delete d.calls;
      delete d.downstream;
    });
    expectValid(r);
    if (r.ok) expect(r.manifest.pricing).toEqual({ model: 'free', currency: 'EUR', chargeOn: 'success' });
  });
});

describe('document level', () => {
  it.each([null, [], 'holon', 42, true])('refuses a document that is not an object: %j', (doc) => {
    const r = validateManifest(doc);
    expectProblem(r, '$');
  });

  it('refuses a cyclic document without hanging', () => {
    const d = specDoc();
    d.interface.input.self = d.interface.input;
    expectProblem(validateManifest(d), '$', 'not a JSON document');
  });

  it('refuses a YAML document whose alias makes a cycle', () => {
    expectProblem(parseManifest(`${SPEC_YAML}\nextra: &x { a: *x }\n`), '$');
  });

  it('reports YAML syntax errors', () => {
    const r = parseManifest('id: [unclosed\n');
    expectProblem(r, '$', 'YAML');
  });

  it('reports invalid JSON when the format is json', () => {
    expectProblem(parseManifest('{"id": ', 'json'), '$', 'JSON');
  });

  it('refuses an unknown top-level field', () => {
    expectProblem(
      check((d) => (d.price = '1.00')),
      '$.price',
      'not a known field',
    );
  });

  it.each([
    ['pricing', '$.pricing.foo'],
    ['runtime', '$.runtime.foo'],
    ['downstream', '$.downstream.foo'],
    ['lineage', '$.lineage.foo'],
    ['forks', '$.forks.foo'],
    ['interface', '$.interface.foo'],
    ['data', '$.data.foo'],
    ['source', '$.source.foo'],
  ])('refuses an unknown field inside %s', (section, path) => {
    expectProblem(
      check((d) => (d[section].foo = 1)),
      path,
      'not a known field',
    );
  });

  it('refuses unknown fields inside calls entries, limits and declared errors', () => {
    const r = check((d) => {
      d.calls[0].foo = 1;
      d.runtime.limits.memory = 1;
      d.interface.errors.partial.foo = 1;
    });
    expectProblem(r, '$.calls[0].foo');
    expectProblem(r, '$.runtime.limits.memory');
    expectProblem(r, '$.interface.errors.partial.foo');
  });

  it.each(['id', 'version', 'summary', 'capabilities', 'license', 'interface', 'pricing', 'runtime'])('requires %s', (field) => {
    expectProblem(
      check((d) => delete d[field]),
      `$.${field}`,
      'is required',
    );
  });

  it('refuses NUL characters anywhere', () => {
    expectProblem(
      check((d) => (d.summary = 'Extracts\u0000tables')),
      '$.summary',
      'NUL',
    );
    expectProblem(
      check((d) => (d.interface.input.properties.file.description = 'a\u0000')),
      '$.interface.input.properties.file.description',
      'NUL',
    );
    expectProblem(
      check((d) => (d.interface.input.properties['a\u0000b'] = {})),
      '$.interface.input.properties["a\\u0000b"]',
      'NUL',
    );
  });

  it('refuses a NUL character in YAML text', () => {
    expectProblem(parseManifest(SPEC_YAML.replace('Extracts tables', 'Extracts\u0000tables')), '$', 'NUL');
  });

  it('lists every problem at once, deduplicated and sorted by path', () => {
    const r = check((d) => {
      d.id = 'Lena/Tables';
      d.version = 'v1.2';
      d.summary = 'two\nlines';
      d.capabilities = ['Bad Capability', 'ok.one', 'ok.one'];
      d.license = 'MIT OR Apache-2.0';
      d.source.repository = 'https://gitlab.com/lena/tables-fr';
      d.interface.errors.timeout = { description: 'mine' };
      d.pricing.amount = 0.005;
      d.pricing.max = '0.0000001';
      d.calls[0].max_cost = '9.00';
      d.runtime.endpoint = 'not a url';
      d.runtime.limits.timeout_s = 301;
      d.lineage.royalty = '1.5';
      d.data.retention = 'forever';
      d.unknown = true;
    });
    expect(r.ok).toBe(false);
    const problems = problemsOf(r);
    const paths = new Set(problems.map((p) => p.path));
    expect(paths.size).toBeGreaterThanOrEqual(14);
    for (const path of [
      '$.id',
      '$.version',
      '$.summary',
      '$.capabilities[0]',
      '$.capabilities[2]',
      '$.license',
      '$.source.repository',
      '$.interface.errors.timeout',
      '$.pricing.amount',
      '$.pricing.max',
      '$.calls[0].max_cost',
      '$.runtime.endpoint',
      '$.runtime.limits.timeout_s',
      '$.lineage.royalty',
      '$.data.retention',
      '$.unknown',
    ]) {
      expect(paths, path).toContain(path);
    }
    const keys = problems.map((p) => `${p.path} ${p.message}`);
    expect(new Set(keys).size).toBe(keys.length);
    const sorted = [...problems].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    expect(problems.map((p) => p.path)).toEqual(sorted.map((p) => p.path));
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
  });

  it('sorts array indexes numerically', () => {
    const r = check((d) => {
      d.calls = Array.from({ length: 12 }, () => ({ capability: 'ocr.page', max_cost: 1 }));
    });
    const callPaths = problemsOf(r)
      .map((p) => p.path)
      .filter((p) => p.startsWith('$.calls['));
    expect(callPaths[0]).toBe('$.calls[0].max_cost');
    expect(callPaths[2]).toBe('$.calls[2].max_cost');
    expect(callPaths.at(-1)).toBe('$.calls[11].max_cost');
  });

  it('never throws, whatever value a field holds', () => {
    const fields = [
      'id',
      'version',
      'summary',
      'description',
      'capabilities',
      'license',
      'source',
      'lineage',
      'forks',
      'interface',
      'pricing',
      'calls',
      'downstream',
      'runtime',
      'data',
    ];
    const nested = [
      'interface.input',
      'interface.errors',
      'interface.examples',
      'pricing.model',
      'pricing.amount',
      'pricing.max',
      'runtime.kind',
      'runtime.endpoint',
      'runtime.limits',
      'lineage.forked_from',
      'lineage.royalty',
      'downstream.mode',
      'downstream.cap',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...fields, ...nested), fc.jsonValue({ maxDepth: 3 }), (field, value) => {
        const d = specDoc();
        const [a, b] = field.split('.') as [string, string | undefined];
        if (b === undefined) d[a] = value;
        else d[a][b] = value;
        const r = validateManifest(d);
        for (const p of problemsOf(r)) {
          expect(p.path.startsWith('$')).toBe(true);
          expect(typeof p.message).toBe('string');
        }
      }),
      { numRuns: 200 },
    );
  });
});

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

describe('interface', () => {
  const withInput = (input: unknown) =>
    check((d) => {
      d.interface.input = input;
      delete d.interface.examples;
    });

  it('requires input and output to be objects', () => {
    expectProblem(
      check((d) => (d.interface.input = 'string')),
      '$.interface.input',
      'object',
    );
    expectProblem(
      check((d) => delete d.interface.output),
      '$.interface.output',
      'required',
    );
  });

  it('accepts a pattern with nested quantifiers: RE2 runs it in linear time', () => {
    expectValid(withInput({ type: 'string', pattern: '^(a+)+$' }));
  });

  it.each([
    ['a back-reference', { type: 'string', pattern: '(a)\\1' }],
    ['a look-ahead', { type: 'string', pattern: '(?=a)' }],
    ['a negative look-behind', { type: 'object', properties: { name: { type: 'string', pattern: '(?<!a)b' } } }],
    ['a look-ahead deep inside', { type: 'object', properties: { list: { type: 'array', items: { anyOf: [{ pattern: 'x(?!y)' }] } } } }],
    ['a look-ahead in $defs', { $defs: { unused: { pattern: '(?=a)' } } }],
    ['a patternProperties key with a look-ahead', { type: 'object', patternProperties: { '^(?=x)': { type: 'string' } } }],
    ['a patternProperties key with a back-reference', { type: 'object', patternProperties: { '(a)\\1': true } }],
  ])('refuses %s at $.interface.input', (_, schema) => {
    const r = withInput(schema);
    expectProblem(r, '$.interface.input', 'RE2');
  });

  it('names the regular expression and where it is', () => {
    const r = withInput({ type: 'object', properties: { name: { type: 'string', pattern: '(a)\\1' } } });
    expectProblem(r, '$.interface.input', '(a)\\1');
    expectProblem(r, '$.interface.input', '$.interface.input.properties.name.pattern');
  });

  it('accepts patternProperties keys RE2 can compile', () => {
    expectValid(withInput({ type: 'object', patternProperties: { '^x-[a-z]+$': { type: 'string' } } }));
  });

  it('also checks the output schema', () => {
    const r = check((d) => {
      d.interface.output = { type: 'object', properties: { tables: { type: 'string', pattern: '(?=a)' } } };
      delete d.interface.examples;
    });
    expectProblem(r, '$.interface.output', 'RE2');
  });

  it('refuses a schema ajv cannot compile, at the failing keyword, in plain words', () => {
    const typo = withInput({ type: 'strin' });
    expectProblem(typo, '$.interface.input.type', 'must be one of the JSON Schema types array, boolean, integer, null, number, object or string');
    expectProblem(typo, '$.interface.input.type', 'not "strin"');
    expect(problemsOf(typo).filter((p) => p.path === '$.interface.input')).toEqual([]);
    expectProblem(withInput({ $ref: 'https://example.org/remote.json' }), '$.interface.input["$ref"]', 'a schema may refer only inside itself');
    expectProblem(withInput({ type: 'object', format: 'no-such-format' }), '$.interface.input', 'no-such-format');
  });

  it("names the exact path of a keyword deep inside, never ajv's own text", () => {
    const r = withInput({ type: 'object', properties: { name: { type: 'string', minLength: 'x' }, tags: { type: 'array', items: [1] } } });
    expectProblem(r, '$.interface.input.properties.name.minLength', 'must be integer, not "x"');
    expectProblem(r, '$.interface.input.properties.tags.items', 'must be a schema (an object, or true or false), not [1]');
    for (const p of problemsOf(r)) expect(p.message).not.toMatch(/schema is invalid|data\//);
    const ref = check((d) => {
      d.interface.output = { type: 'object', properties: { table: { $ref: '#/$defs/table' } } };
      delete d.interface.examples;
    });
    expectProblem(ref, '$.interface.output.properties.table["$ref"]', '"#/$defs/table" points at nothing in this schema');
  });

  it('accepts ajv-formats formats and the same $id in input and output', () => {
    const r = check((d) => {
      d.interface.input = { $id: 'https://x.example/s', type: 'object', properties: { email: { type: 'string', format: 'email' } } };
      d.interface.output = { $id: 'https://x.example/s', type: 'object', properties: { when: { type: 'string', format: 'date-time' } } };
      delete d.interface.examples;
    });
    expectValid(r);
  });

  it('limits each schema to 64 KB', () => {
    const bigEnum = (bytes: number) => ({ type: 'string', enum: Array.from({ length: Math.ceil(bytes / 10) }, (_, i) => `v${String(i).padStart(6, '0')}`) });
    const under = bigEnum(60 * 1024);
    expect(JSON.stringify(under).length).toBeLessThan(64 * 1024);
    expectValid(withInput(under));
    const over = bigEnum(66 * 1024);
    expect(JSON.stringify(over).length).toBeGreaterThan(64 * 1024);
    expectProblem(withInput(over), '$.interface.input', '64 KB');
  });

  it.each([...RESERVED_ERROR_CODES])('refuses the reserved error code %s', (code) => {
    expectProblem(
      check((d) => (d.interface.errors[code] = { description: 'mine' })),
      `$.interface.errors.${code}`,
      'gateway',
    );
  });

  it('requires snake_case error codes', () => {
    expectProblem(
      check((d) => (d.interface.errors['Bad-Code'] = { description: 'x' })),
      '$.interface.errors["Bad-Code"]',
      'snake_case',
    );
    expectProblem(
      check((d) => (d.interface.errors['double__underscore'] = { description: 'x' })),
      '$.interface.errors.double__underscore',
      'snake_case',
    );
    expectProblem(
      check((d) => (d.interface.errors['_private'] = { description: 'x' })),
      '$.interface.errors._private',
      'snake_case',
    );
    expectValid(check((d) => (d.interface.errors['rate_limited2'] = { description: 'x' })));
  });

  it('refuses over_budget billed: true', () => {
    expectProblem(
      check((d) => (d.interface.errors.over_budget.billed = true)),
      '$.interface.errors.over_budget.billed',
      'false',
    );
  });

  it('checks declared errors: description required, billed a boolean, default false', () => {
    expectProblem(
      check((d) => (d.interface.errors.partial = { billed: true })),
      '$.interface.errors.partial.description',
      'required',
    );
    expectProblem(
      check((d) => (d.interface.errors.partial.billed = 'yes')),
      '$.interface.errors.partial.billed',
      'boolean',
    );
    const r = check((d) => (d.interface.errors.partial = { description: 'x' }));
    expectValid(r);
    if (r.ok) expect(r.manifest.interface.errors.partial?.billed).toBe(false);
  });

  it('validates examples against the schemas and the declared errors', () => {
    expectProblem(
      check((d) => (d.interface.examples[0].input = { file: 'http://x' })),
      '$.interface.examples[0].input.file',
      'pattern',
    );
    expectProblem(
      check((d) => (d.interface.examples[0].input = {})),
      '$.interface.examples[0].input.file',
      'required',
    );
    expectProblem(
      check((d) => (d.interface.examples[0].output = { tables: 'none' })),
      '$.interface.examples[0].output.tables',
      'array',
    );
    expectProblem(
      check((d) => d.interface.examples.push({ input: { file: 'holon://files/x' }, error: 'no_such_error' })),
      '$.interface.examples[1].error',
      'not an error code declared',
    );
    expectValid(check((d) => d.interface.examples.push({ input: { file: 'holon://files/x' }, error: 'no_table_found' })));
    expectProblem(
      check((d) => (d.interface.examples[0].error = 'partial')),
      '$.interface.examples[0]',
      'not both',
    );
    expectProblem(
      check((d) => delete d.interface.examples[0].output),
      '$.interface.examples[0]',
      'output or an error',
    );
    expectProblem(
      check((d) => (d.interface.examples[0].extra = 1)),
      '$.interface.examples[0].extra',
    );
  });
});

describe('pricing', () => {
  it('refuses JSON numbers as amounts', () => {
    expectProblem(
      check((d) => (d.pricing.amount = 0.005)),
      '$.pricing.amount',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.pricing.max = 1)),
      '$.pricing.max',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.calls[0].max_cost = 0.02)),
      '$.calls[0].max_cost',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.downstream.cap = 0.4)),
      '$.downstream.cap',
      'JSON number',
    );
  });

  it('refuses amounts with more than 6 decimals, exponents and signs', () => {
    expectProblem(
      check((d) => (d.pricing.amount = '0.0000001')),
      '$.pricing.amount',
      'decimals',
    );
    expectProblem(
      check((d) => (d.pricing.amount = '5e-3')),
      '$.pricing.amount',
      'not a plain decimal',
    );
    expectProblem(
      check((d) => (d.pricing.amount = '-0.005')),
      '$.pricing.amount',
      'negative',
    );
    expectProblem(
      check((d) => (d.pricing.max = '.5')),
      '$.pricing.max',
    );
    expectValid(check((d) => (d.pricing.amount = '0.000001')));
  });

  it('YAML numbers are refused where amounts are expected', () => {
    const r = parseManifest(SPEC_YAML.replace('amount: "0.005"', 'amount: 0.005'));
    expectProblem(r, '$.pricing.amount', 'JSON number');
  });

  it('requires the fields of each model', () => {
    expectProblem(
      check((d) => delete d.pricing.max),
      '$.pricing.max',
      'required with the per_unit',
    );
    expectProblem(
      check((d) => delete d.pricing.unit),
      '$.pricing.unit',
      'required',
    );
    expectProblem(
      check((d) => delete d.pricing.amount),
      '$.pricing.amount',
      'required',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR' })),
      '$.pricing.amount',
      'required with the per_run',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR' })),
      '$.pricing.max',
      'required with the quote',
    );
    expectValid(check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '1.00' })));
  });

  it('refuses fields that do not belong to the model', () => {
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.10', unit: 'page' })),
      '$.pricing.unit',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.10', max: '1.00' })),
      '$.pricing.max',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '1.00', amount: '0.10' })),
      '$.pricing.amount',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'free', amount: '0' })),
      '$.pricing.amount',
      'does not belong',
    );
  });

  it('requires max > 0 for per_unit and quote', () => {
    expectProblem(
      check((d) => (d.pricing.max = '0')),
      '$.pricing.max',
      'more than zero',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '0.00' })),
      '$.pricing.max',
      'more than zero',
    );
  });

  it('checks the model, currency and charge_on', () => {
    expectProblem(
      check((d) => (d.pricing.model = 'subscription')),
      '$.pricing.model',
      'one of',
    );
    expectProblem(
      check((d) => delete d.pricing.model),
      '$.pricing.model',
      'required',
    );
    expectProblem(
      check((d) => delete d.pricing.currency),
      '$.pricing.currency',
      'required',
    );
    expectProblem(
      check((d) => (d.pricing.currency = 'eur')),
      '$.pricing.currency',
      'ISO 4217',
    );
    expectProblem(
      check((d) => (d.pricing.currency = 'EURO')),
      '$.pricing.currency',
      'ISO 4217',
    );
    expectProblem(
      check((d) => (d.pricing.charge_on = 'always')),
      '$.pricing.charge_on',
      'one of',
    );
    const r = check((d) => delete d.pricing.charge_on);
    expectValid(r);
    if (r.ok) expect(r.manifest.pricing.chargeOn).toBe('success');
  });

  it('requires a currency for a free agent that declares calls', () => {
    const r = check((d) => {
      d.pricing = { model: 'free' };
      d.calls[0].max_cost = '0.02';
    });
    expectProblem(r, '$.pricing.currency', 'calls');
  });
});

describe('runtime', () => {
  it('requires an endpoint for mcp and webhook, a tool for mcp', () => {
    expectProblem(
      check((d) => delete d.runtime.endpoint),
      '$.runtime.endpoint',
      'required',
    );
    expectProblem(
      check((d) => delete d.runtime.tool),
      '$.runtime.tool',
      'required',
    );
    expectProblem(
      check((d) => (d.runtime = { kind: 'webhook' })),
      '$.runtime.endpoint',
      'required',
    );
  });

  it.each(['tables.example.org/mcp', '/mcp', 'ftp://tables.example.org/', 'not a url', 'file:///etc/passwd', 'https://'])(
    'refuses the endpoint %j',
    (endpoint) => {
      expectProblem(
        check((d) => (d.runtime.endpoint = endpoint)),
        '$.runtime.endpoint',
        'absolute http',
      );
    },
  );

  it('accepts http endpoints (publishing requires https, not the manifest)', () => {
    expectValid(check((d) => (d.runtime.endpoint = 'http://localhost:8080/mcp')));
  });

  it('refuses an endpoint on a node runtime, a tool outside mcp', () => {
    expectProblem(
      check((d) => (d.runtime.kind = 'node')),
      '$.runtime.endpoint',
      'node',
    );
    expectProblem(
      check((d) => (d.runtime.kind = 'node')),
      '$.runtime.tool',
      'only mcp',
    );
    expectProblem(
      check((d) => (d.runtime.kind = 'container')),
      '$.runtime.kind',
      'one of',
    );
  });

  it('allows only per_run or free pricing for webhook agents', () => {
    const webhook = (pricing: AnyDoc) =>
      check((d) => {
        d.runtime = { kind: 'webhook', endpoint: 'https://hooks.example.org/x' };
        d.pricing = pricing;
        d.downstream.mode = 'passthrough';
      });
    expectProblem(webhook({ model: 'per_unit', currency: 'EUR', amount: '0.01', unit: 'page', max: '1.00' }), '$.pricing.model', 'webhook');
    expectProblem(webhook({ model: 'quote', currency: 'EUR', max: '1.00' }), '$.pricing.model', 'webhook');
    expectValid(webhook({ model: 'per_run', currency: 'EUR', amount: '0.01' }));
    expectValid(webhook({ model: 'free', currency: 'EUR' }));
  });

  it('checks timeout_s: an integer from 1 to 300, default 60', () => {
    for (const bad of [0, 301, 1.5, '60', -1]) {
      expectProblem(
        check((d) => (d.runtime.limits.timeout_s = bad)),
        '$.runtime.limits.timeout_s',
      );
    }
    for (const ok of [1, 300]) expectValid(check((d) => (d.runtime.limits.timeout_s = ok)));
    const r = check((d) => delete d.runtime.limits);
    expectValid(r);
    if (r.ok) expect(r.manifest.runtime.timeoutS).toBe(60);
  });
});

describe('calls and downstream', () => {
  it('refuses a call max_cost above the passthrough cap', () => {
    expectProblem(
      check((d) => (d.calls[0].max_cost = '0.41')),
      '$.calls[0].max_cost',
      'downstream.cap',
    );
    expectValid(check((d) => (d.calls[0].max_cost = '0.40')));
  });

  it('bounds max_cost by the own worst case in included mode', () => {
    // spec example: per_unit, max 0.50
    expectValid(check((d) => (d.downstream = { mode: 'included' })));
    expectValid(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.calls[0].max_cost = '0.50';
      }),
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.calls[0].max_cost = '0.500001';
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.01' };
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.pricing = { model: 'free', currency: 'EUR' };
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
  });

  it('requires downstream.mode when calls are declared', () => {
    expectProblem(
      check((d) => delete d.downstream),
      '$.downstream.mode',
      'calls',
    );
    expectProblem(
      check((d) => delete d.downstream.mode),
      '$.downstream.mode',
      'required',
    );
    expectProblem(
      check((d) => (d.downstream.mode = 'split')),
      '$.downstream.mode',
      'one of',
    );
  });

  it('requires a cap with passthrough when calls are declared', () => {
    expectProblem(
      check((d) => delete d.downstream.cap),
      '$.downstream.cap',
      'passthrough',
    );
    expectValid(
      check((d) => {
        delete d.downstream.cap;
        d.calls = [];
      }),
    );
  });

  it('allows downstream (and a cap) without calls', () => {
    expectValid(check((d) => delete d.calls));
  });

  it('requires exactly one of capability or agent, and a max_cost', () => {
    expectProblem(
      check((d) => (d.calls[0] = { max_cost: '0.01' })),
      '$.calls[0]',
      'capability or an agent',
    );
    expectProblem(
      check((d) => (d.calls[0].agent = 'acme/ocr')),
      '$.calls[0]',
      'not both',
    );
    expectProblem(
      check((d) => delete d.calls[0].max_cost),
      '$.calls[0].max_cost',
      'required',
    );
    expectProblem(
      check((d) => (d.calls[0].capability = 'OCR')),
      '$.calls[0].capability',
      'capability class',
    );
    expectProblem(
      check((d) => (d.calls = 'ocr.page')),
      '$.calls',
      'array',
    );
  });

  it.each(['acme/ocr', 'acme/ocr@^1.2', 'acme/ocr@1.2.3', 'acme/ocr@>=1.0.0 <2.0.0', 'acme/ocr@~2', 'acme/ocr@*'])(
    'accepts the agent reference %s',
    (agent) => {
      expectValid(check((d) => (d.calls[0] = { agent, max_cost: '0.01' })));
    },
  );

  it.each(['acme', 'Acme/ocr', 'acme/ocr@', 'acme/ocr@not-a-range', 'acme/ocr@^1.2@3', 'a/ocr'])('refuses the agent reference %j', (agent) => {
    expectProblem(
      check((d) => (d.calls[0] = { agent, max_cost: '0.01' })),
      '$.calls[0].agent',
    );
  });
});

describe('lineage and forks', () => {
  it('checks the syntax of forked_from and royalty', () => {
    for (const bad of ['acme/pdf-tables', 'acme/pdf-tables@^2.0.1', 'acme/pdf-tables@v2.0.1', 'acme/pdf-tables@2.0', 'ACME/x@1.0.0']) {
      expectProblem(
        check((d) => (d.lineage.forked_from = bad)),
        '$.lineage.forked_from',
        'exact version',
      );
    }
    expectProblem(
      check((d) => (d.lineage.royalty = '1')),
      '$.lineage.royalty',
      'below 1',
    );
    expectProblem(
      check((d) => (d.lineage.royalty = '0.12345')),
      '$.lineage.royalty',
      'at most 4',
    );
    expectProblem(
      check((d) => (d.lineage.royalty = 0.15)),
      '$.lineage.royalty',
      'JSON number',
    );
    expectProblem(
      check((d) => delete d.lineage.royalty),
      '$.lineage.royalty',
      'required',
    );
    expectValid(check((d) => (d.lineage.royalty = '0.9999')));
    expectValid(check((d) => (d.lineage.royalty = '0')));
  });

  it('refuses a fork of itself', () => {
    expectProblem(
      check((d) => (d.lineage.forked_from = 'lena/tables-fr@1.0.0')),
      '$.lineage.forked_from',
      'itself',
    );
  });

  it('checks forks: min_royalty in [0, 1) with 4 decimals, allowed a boolean', () => {
    expectProblem(
      check((d) => (d.forks.min_royalty = '1.0')),
      '$.forks.min_royalty',
      'below 1',
    );
    expectProblem(
      check((d) => (d.forks.min_royalty = '0.00001')),
      '$.forks.min_royalty',
      'at most 4',
    );
    expectProblem(
      check((d) => (d.forks.allowed = 'no')),
      '$.forks.allowed',
      'boolean',
    );
    const r = check((d) => (d.forks = { allowed: false }));
    expectValid(r);
    if (r.ok) expect(r.manifest.forks).toEqual({ minRoyalty: { num: 0n, den: 1n }, allowed: false });
  });

  it('asks resolveUpstream about the exact upstream version', () => {
    const seen: string[] = [];
    const r = check(() => {}, {
      resolveUpstream: (id, version) => {
        seen.push(`${id}@${version}`);
        return upstream();
      },
    });
    expectValid(r);
    expect(seen).toEqual(['acme/pdf-tables@2.0.1']);
  });

  it('refuses an upstream that is not listed', () => {
    expectProblem(
      check(() => {}, { resolveUpstream: () => null }),
      '$.lineage.forked_from',
      'is not a listed agent version',
    );
  });

  it('refuses an upstream that does not allow forks', () => {
    const r = check(() => {}, { resolveUpstream: () => upstream({ forks: { minRoyalty: { num: 0n, den: 1n }, allowed: false } }) });
    expectProblem(r, '$.lineage.forked_from', 'does not allow forks');
  });

  it("enforces the upstream's min_royalty, naming both numbers", () => {
    const min = (num: bigint, den: bigint) => ({ resolveUpstream: () => upstream({ forks: { minRoyalty: { num, den }, allowed: true } }) });
    const r = check(() => {}, min(20n, 100n));
    expectProblem(r, '$.lineage.royalty', /0\.15.*0\.2/);
    expectValid(check(() => {}, min(15n, 100n)));
    expectValid(check(() => {}, min(1499n, 10000n)));
    expectProblem(
      check(() => {}, min(1501n, 10000n)),
      '$.lineage.royalty',
      '0.1501',
    );
  });

  it('refuses a loop', () => {
    const r = check(() => {}, { resolveUpstream: () => upstream({ chain: ['bob/base@1.0.0', 'lena/tables-fr@0.9.0'], lineageDepth: 3 }) });
    expectProblem(r, '$.lineage.forked_from', 'loop');
  });

  it('refuses a chain longer than 8 levels', () => {
    // lineageDepth: levels of the upstream's own chain, counting the upstream (1 = not a fork).
    expectValid(check(() => {}, { resolveUpstream: () => upstream({ lineageDepth: 7 }) }));
    expectProblem(
      check(() => {}, { resolveUpstream: () => upstream({ lineageDepth: 8 }) }),
      '$.lineage.forked_from',
      'at most 8',
    );
    const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `ns${i}/agent@1.0.0`);
    expectValid(check(() => {}, { resolveUpstream: () => upstream({ chain: chainOf(6) }) }));
    expectProblem(
      check(() => {}, { resolveUpstream: () => upstream({ chain: chainOf(7) }) }),
      '$.lineage.forked_from',
      '9 levels',
    );
  });

  it('checks only the syntax without resolveUpstream', () => {
    expectValid(check(() => {}));
  });
});

describe('data policy', () => {
  it('checks retention, region, training and subprocessors', () => {
    for (const bad of ['0d', '30 days', 'forever', '30', 'd', '1234567d']) {
      expectProblem(
        check((d) => (d.data.retention = bad)),
        '$.data.retention',
        'none',
      );
    }
    expectProblem(
      check((d) => (d.data.retention = 30)),
      '$.data.retention',
      'string',
    );
    expectProblem(
      check((d) => (d.data.region = ['europe'])),
      '$.data.region[0]',
      'region',
    );
    expectProblem(
      check((d) => (d.data.region = 'eu')),
      '$.data.region',
      'array',
    );
    expectProblem(
      check((d) => (d.data.training = 'no')),
      '$.data.training',
      'boolean',
    );
    expectProblem(
      check((d) => (d.data.subprocessors = [42])),
      '$.data.subprocessors[0]',
      'string',
    );
    const r = check((d) => (d.data = { retention: '365d', region: ['EU', 'us', 'eu'], subprocessors: ['Anthropic'] }));
    expectValid(r);
    if (r.ok) expect(r.manifest.data).toEqual({ retention: { kind: 'days', days: 365 }, region: ['eu', 'us'], subprocessors: ['Anthropic'] });
  });
});

describe('compileInterface', () => {
  function manifestWithInput(input: AnyDoc, version = '1.0.0') {
    const r = check((d) => {
      d.version = version;
      d.interface.input = input;
      delete d.interface.examples;
    });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.manifest;
  }

  it('validates inputs and outputs with paths rooted at $', () => {
    const r = parseManifest(SPEC_YAML);
    if (!r.ok) throw new Error('invalid');
    const v = compileInterface(r.manifest);
    expect(v.input({ file: 'holon://files/abc' })).toEqual([]);
    expect(v.input({ file: 'https://evil.example' })).toEqual([expect.objectContaining({ path: '$.file' })]);
    expect(v.input({})).toEqual([expect.objectContaining({ path: '$.file', message: 'is required' })]);
    expect(v.output({ tables: [] })).toEqual([]);
    expect(v.output({ tables: 'x' })).toEqual([expect.objectContaining({ path: '$.tables' })]);
    expect(v.output('nope')).toEqual([expect.objectContaining({ path: '$' })]);
  });

  it('runs a nested-quantifier pattern on a 100 000-character input and completes', () => {
    const v = compileInterface(manifestWithInput({ type: 'string', pattern: '^(a+)+$' }, '2.0.0'));
    const problems = v.input(`${'a'.repeat(100_000)}b`);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe('$');
    expect(v.input('a'.repeat(100_000))).toEqual([]);
  });

  it('applies ajv-formats', () => {
    const v = compileInterface(manifestWithInput({ type: 'object', properties: { email: { type: 'string', format: 'email' } } }, '3.0.0'));
    expect(v.input({ email: 'lena@example.org' })).toEqual([]);
    expect(v.input({ email: 'not an email' })).toEqual([expect.objectContaining({ path: '$.email' })]);
  });

  it('compiles once per manifest, and again when the schemas of the same version change', () => {
    const m1 = manifestWithInput({ type: 'object', required: ['a'] }, '4.0.0');
    const v1 = compileInterface(m1);
    expect(compileInterface(m1)).toBe(v1);
    expect(compileInterface({ ...m1 })).toBe(v1); // same id@version, same schemas
    const m2 = manifestWithInput({ type: 'object', required: ['b'] }, '4.0.0');
    const v2 = compileInterface(m2);
    expect(v2).not.toBe(v1);
    expect(v2.input({ b: 1 })).toEqual([]);
    expect(v2.input({ a: 1 })).toEqual([expect.objectContaining({ path: '$.b' })]);
  });

  it('reports a value it cannot walk instead of throwing', () => {
    const m = manifestWithInput({ $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' }, '5.0.0');
    const cyclic: AnyDoc = {};
    cyclic.next = cyclic;
    const problems = compileInterface(m).input(cyclic);
    expect(problems).toEqual([expect.objectContaining({ path: '$' })]);
  });
});
