/**
 * Interface rules of a manifest (shared/core/manifest/rules/interface.ts and author-schema.ts, spec/manifest.md §3):
 * the input and output JSON Schemas an author writes, declared errors and examples; and compileInterface
 * (shared/core/manifest/interface-validator.ts), which turns a valid manifest's interface into validators.
 */
import { describe, expect, it } from 'vitest';
import { compileInterface, parseManifest, RESERVED_ERROR_CODES } from '../../shared/core/manifest/index.js';
import { type AnyDoc, SPEC_YAML, check, problemsOf, expectProblem, expectValid } from '../support/manifest-checks.js';

describe('interface', () => {
  const withInput = (input: unknown) =>
    check((d) => {
      d.interface.input = input;
      delete d.interface.examples;
    });

  it('interface.stream: a chunk schema checked like the others, kept by the normalized manifest, compiled to a chunk validator', () => {
    const chunk = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };
    const ok = check((d) => (d.interface.stream = { chunk }));
    expectValid(ok);
    if (!ok.ok) throw new Error('unreachable');
    expect(ok.manifest.interface.stream).toEqual({ chunk });
    const v = compileInterface(ok.manifest);
    expect(v.chunk!({ text: 'a' })).toEqual([]);
    expect(v.chunk!({ text: 1 }).map((p) => p.path)).toEqual(['$.text']);
    const plain = parseManifest(SPEC_YAML);
    if (!plain.ok) throw new Error('the spec example is valid');
    expect(compileInterface(plain.manifest).chunk).toBeUndefined();
    expectProblem(
      check((d) => (d.interface.stream = {})),
      '$.interface.stream.chunk',
      'required',
    );
    expectProblem(
      check((d) => (d.interface.stream = { chunk, extra: true })),
      '$.interface.stream.extra',
      'not a known field',
    );
    expectProblem(
      check((d) => (d.interface.stream = { chunk: { type: 'string', pattern: '(?<=a)b' } })),
      '$.interface.stream.chunk',
    );
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
