/**
 * What a process keeps so it validates a manifest once: manifest files by path and exact content
 * (shared/registry/manifest-files.ts, read through loadDevRegistry), and compiled author schemas by their text
 * (shared/core/manifest/rules/author-schema.ts). A changed file is validated again; no two loads share an object.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileInterface } from '../../shared/core/manifest/index.js';
import { checkAuthorSchema, compileAuthorSchema } from '../../shared/core/manifest/rules/author-schema.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import { manifestFile } from '../../shared/registry/manifest-files.js';

const log = pino({ level: 'silent' });

function manifestDoc(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'test/cached',
    version: '1.0.0',
    summary: 'the first summary',
    capabilities: ['text.transform'],
    license: 'MIT',
    interface: { input: { type: 'object', required: ['text'] }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'mcp', endpoint: 'https://agent.example.org/mcp', tool: 'run' },
    ...over,
  };
}

describe('loadDevRegistry: manifest files validated once per content', () => {
  let dir: string;
  const file = () => join(dir, 'agent', 'holon.yaml');
  const write = (doc: Record<string, unknown>) => writeFile(file(), JSON.stringify(doc, null, 2));
  const load = () => loadDevRegistry([dir], { log });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'holon-manifest-files-'));
    await mkdir(join(dir, 'agent'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads a changed file again: a new summary, then an invalid manifest, then a valid one', async () => {
    await write(manifestDoc());
    expect((await load()).registry.get('test/cached', '1.0.0')?.manifest.summary).toBe('the first summary');

    await write(manifestDoc({ summary: 'the second summary' }));
    expect((await load()).registry.get('test/cached', '1.0.0')?.manifest.summary).toBe('the second summary');

    await write(manifestDoc({ version: 'one' }));
    const invalid = await load();
    expect(invalid.registry.list()).toEqual([]);
    expect(invalid.problems).toEqual([{ file: file(), problems: [expect.objectContaining({ path: '$.version' })] }]);

    await write(manifestDoc({ version: '1.1.0' }));
    const again = await load();
    expect(again.problems).toEqual([]);
    expect(again.registry.list().map((a) => a.manifest.version)).toEqual(['1.1.0']);
  });

  it('gives each load its own objects: changing one load’s manifest changes no other', async () => {
    await write(manifestDoc());
    const first = (await load()).registry.get('test/cached', '1.0.0')!;
    first.manifest.capabilities.push('text.other');
    (first.manifest.interface.input as { required: string[] }).required.push('more');
    const second = (await load()).registry.get('test/cached', '1.0.0')!;
    expect(second.manifest).not.toBe(first.manifest);
    expect(second.manifest.capabilities).toEqual(['text.transform']);
    expect(second.manifest.interface.input).toEqual({ type: 'object', required: ['text'] });
  });

  it('keys by path and content: the same text at another path, the same path with other text', () => {
    const text = JSON.stringify(manifestDoc());
    const a = manifestFile(join(dir, 'a', 'holon.yaml'), text);
    const b = manifestFile(join(dir, 'b', 'holon.json'), text);
    expect(a.validated()).toEqual(b.validated());
    expect(a.validated()).not.toBe(a.validated());
    const changed = manifestFile(join(dir, 'a', 'holon.yaml'), JSON.stringify(manifestDoc({ summary: 'changed' })));
    const result = changed.validated();
    expect(result.ok && result.manifest.summary).toBe('changed');
    expect(manifestFile(join(dir, 'c', 'holon.json'), '{ not json').doc.ok).toBe(false);
  });
});

describe('author schemas compiled once per text', () => {
  it('answers the same validator for the same schema text, each schema by its own rules', () => {
    const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string', maxLength: 3 } } };
    const validate = compileAuthorSchema(schema);
    expect(compileAuthorSchema(structuredClone(schema))).toBe(validate);
    expect(checkAuthorSchema(structuredClone(schema), '$.interface.input').validate).toBe(validate);
    expect(validate({ text: 'abc' })).toBe(true);
    expect(validate({ text: 'abcd' })).toBe(false);
    const other = compileAuthorSchema({ ...schema, required: [] });
    expect(other).not.toBe(validate);
    expect(other({})).toBe(true);
    expect(validate({})).toBe(false);
  });

  it('keeps two schemas with the same $id apart', () => {
    const a = compileAuthorSchema({ $id: 'https://example.org/same', type: 'string' });
    const b = compileAuthorSchema({ $id: 'https://example.org/same', type: 'number' });
    expect([a('x'), a(1), b('x'), b(1)]).toEqual([true, false, false, true]);
  });

  it('still refuses what the metaschema refuses, cached or not', () => {
    expect(() => compileAuthorSchema({ type: 'strin' })).toThrow(/schema is invalid/);
    expect(checkAuthorSchema({ type: 'strin' }, '$.interface.input').problems).toEqual([expect.objectContaining({ path: '$.interface.input.type' })]);
    expect(checkAuthorSchema({ $ref: '#/$defs/none' }, '$.interface.input').problems).toEqual([
      expect.objectContaining({ path: '$.interface.input["$ref"]', message: expect.stringContaining('points at nothing') }),
    ]);
  });

  it('compiles a manifest’s interface from the same cache', () => {
    const input = { type: 'object', required: ['q'] };
    const validate = compileAuthorSchema(input);
    const manifest = { id: 'test/iface', version: '1.0.0', interface: { input, output: { type: 'object' } } };
    const checker = compileInterface(manifest as unknown as Parameters<typeof compileInterface>[0]);
    expect(checker.input({})).toEqual([expect.objectContaining({ path: '$.q' })]);
    expect(validate({ q: 1 })).toBe(true);
  });
});
