/**
 * A manifest as a whole (shared/core/manifest/parse.ts, schema.ts, validate.ts, normalize.ts): the spec example and
 * the fixtures accepted and normalized, document-level refusals (not an object, cycles, YAML and JSON syntax, unknown
 * fields, required fields, NUL characters, every problem at once, sorted), and the data policy. Each rule module of
 * shared/core/manifest/rules/ has its own file: manifest-identity, -interface, -pricing, -runtime, -calls, -lineage.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseManifest, validateManifest } from '../../shared/core/manifest/index.js';
import { fixture, SPEC_YAML, specDoc, check, problemsOf, expectProblem, expectValid } from '../support/manifest-checks.js';

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
