import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { compileInterface, parseManifest } from '../../shared/core/manifest/index.js';
import type { Logger } from '../../shared/platform/log.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import { loadMandateFiles } from '../../shared/registry/mandate-files.js';
import { createRegistry, type Registry } from '../../shared/registry/registry.js';
import type { AgentVersion } from '../../shared/runtimes/types.js';
import { buildManifest } from '../support/manifest-builder.js';

const EXAMPLES = fileURLToPath(new URL('../../examples', import.meta.url));
const EXAMPLE_VERSIONS = [
  'examples/echo-upper@1.0.0',
  'examples/flaky@1.0.0',
  'examples/invoice-digest@1.0.0',
  'examples/invoice-pipeline@0.4.0',
  'examples/quote-translate@1.0.0',
  'examples/slow@1.0.0',
  'examples/word-count@1.0.0',
];

/** A logger that keeps every line (as parsed JSON) instead of printing it. */
function captureLogger(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/** A minimal valid manifest document (JSON-compatible, written as YAML or JSON). */
function manifestDoc(id: string, version: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    version,
    summary: `Test agent ${id}`,
    capabilities: ['text.transform'],
    license: 'MIT',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'node' },
    ...over,
  };
}

async function writeAgent(dir: string, doc: Record<string, unknown>, options: { json?: boolean; agentMjs?: boolean } = {}) {
  await mkdir(dir, { recursive: true });
  const name = options.json ? 'holon.json' : 'holon.yaml';
  // JSON is valid YAML (flow style): the YAML files go through the YAML parser all the same.
  await writeFile(join(dir, name), JSON.stringify(doc, null, 2));
  if (options.agentMjs ?? true) await writeFile(join(dir, 'agent.mjs'), 'export default async (input) => input;\n');
}

describe('loadDevRegistry: examples/', () => {
  it('lists every example, valid, shipped, with its directory', async () => {
    const { log } = captureLogger();
    const { registry, problems } = await loadDevRegistry([EXAMPLES], { log });
    expect(problems).toEqual([]);
    expect(registry.list().map((a) => `${a.manifest.id}@${a.manifest.version}`)).toEqual(EXAMPLE_VERSIONS);
    for (const agent of registry.list()) {
      expect(agent.origin).toBe('shipped');
      expect(agent.dir).toBe(join(EXAMPLES, agent.manifest.name));
      expect(agent.manifest.runtime.kind).toBe('node');
      expect(agent.manifest.license).toBe('MIT');
      expect(agent.manifest.pricing.currency).toBe('EUR');
      expect(agent.manifest.interface.examples).toHaveLength(1);
    }
    expect(registry.get('examples/slow', '1.0.0')?.manifest.runtime.timeoutS).toBe(1);
    expect(registry.get('examples/flaky', '1.0.0')?.manifest.pricing.chargeOn).toBe('attempt');
  });
});

describe('loadDevRegistry: a tree with problems', () => {
  let root: string;
  let result: Awaited<ReturnType<typeof loadDevRegistry>>;
  let lines: Array<Record<string, unknown>>;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'holon-registry-'));
    await writeAgent(join(root, 'a-valid'), manifestDoc('test/valid', '1.0.0'));
    await writeAgent(join(root, 'b-invalid'), manifestDoc('test/invalid', 'one', { pricing: { model: 'per_run', currency: 'EUR' } }));
    await writeAgent(join(root, 'c-no-agent-mjs'), manifestDoc('test/no-entry', '1.0.0'), { agentMjs: false });
    await writeAgent(join(root, 'd-dup-first'), manifestDoc('test/dup', '1.0.0', { summary: 'first' }));
    await writeAgent(join(root, 'e-dup-second'), manifestDoc('test/dup', '1.0.0', { summary: 'second' }), { json: true });
    await writeAgent(join(root, 'f-excluded'), manifestDoc('test/excluded', '1.0.0'));
    await writeAgent(join(root, 'f-excluded-broken'), { id: 'test/excluded', version: '2.0.0' });
    await writeAgent(join(root, 'g', 'deeper', 'still-deeper'), manifestDoc('test/nested', '2.1.0', { capabilities: ['text.count'] }), { json: true });
    await writeAgent(join(root, 'node_modules', 'pkg'), manifestDoc('test/in-node-modules', '1.0.0'));
    await writeAgent(join(root, '.hidden'), manifestDoc('test/hidden', '1.0.0'));
    await writeAgent(
      join(root, 'h-mcp'),
      manifestDoc('test/remote', '1.0.0', {
        runtime: { kind: 'mcp', endpoint: 'https://agent.example.org/mcp', tool: 'run' },
      }),
      { agentMjs: false },
    );
    await writeFile(join(root, 'holon.yml'), 'not: a manifest file name'); // ignored: not holon.yaml / holon.json
    await writeAgent(join(root, 'i-bad-yaml'), {}, { agentMjs: false });
    await writeFile(join(root, 'i-bad-yaml', 'holon.yaml'), 'id: [unclosed\n');
    await symlink(root, join(root, 'j-loop')); // a link back up the tree is not walked twice

    const capture = captureLogger();
    lines = capture.lines;
    result = await loadDevRegistry([root, join(root, 'missing')], { exclude: ['test/excluded'], log: capture.log });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const ids = () => result.registry.list().map((a) => `${a.manifest.id}@${a.manifest.version}`);
  const problemFor = (rel: string) => result.problems.find((p) => p.file === join(root, rel));

  it('lists the valid agents only, nested ones included, each once', () => {
    expect(ids()).toEqual(['test/dup@1.0.0', 'test/nested@2.1.0', 'test/remote@1.0.0', 'test/valid@1.0.0']);
    expect(result.registry.get('test/nested', '2.1.0')?.dir).toBe(join(root, 'g', 'deeper', 'still-deeper'));
  });

  it('reports an invalid manifest with its path and every problem, and does not list it', () => {
    const p = problemFor('b-invalid/holon.yaml');
    expect(p).toBeDefined();
    expect(p!.problems.map((x) => x.path)).toEqual(expect.arrayContaining(['$.version', '$.pricing.amount']));
    expect(result.registry.versions('test/invalid')).toEqual([]);
    const warning = lines.find((l) => l.level === 40 && l.file === join(root, 'b-invalid/holon.yaml'));
    expect(warning?.problems).toEqual(p!.problems);
  });

  it('reports a document that is not YAML', () => {
    expect(problemFor('i-bad-yaml/holon.yaml')?.problems[0]?.message).toMatch(/not valid YAML/);
  });

  it('skips a node agent without agent.mjs', () => {
    const p = problemFor('c-no-agent-mjs/holon.yaml');
    expect(p?.problems).toEqual([{ path: '$.runtime.kind', message: expect.stringContaining('agent.mjs') }]);
    expect(result.registry.versions('test/no-entry')).toEqual([]);
  });

  it('keeps the first of two identical id@version and reports the second', () => {
    expect(result.registry.get('test/dup', '1.0.0')?.manifest.summary).toBe('first');
    const p = problemFor('e-dup-second/holon.json');
    expect(p?.problems).toEqual([{ path: '$.version', message: expect.stringContaining(join(root, 'd-dup-first/holon.yaml')) }]);
  });

  it('skips excluded ids silently (even invalid ones), counted in a debug line', () => {
    expect(result.registry.versions('test/excluded')).toEqual([]);
    expect(result.problems.some((p) => p.file.includes('f-excluded'))).toBe(false);
    expect(lines.find((l) => l.level === 20 && l.excluded === 2)).toBeDefined();
  });

  it('ignores node_modules and dot-directories, and follows no loop', () => {
    expect(result.registry.versions('test/in-node-modules')).toEqual([]);
    expect(result.registry.versions('test/hidden')).toEqual([]);
    expect(result.problems.some((p) => p.file.includes('node_modules') || p.file.includes('.hidden') || p.file.includes('j-loop'))).toBe(false);
  });

  it('reports a missing directory instead of failing', () => {
    expect(problemFor('missing')?.problems).toEqual([{ path: '$', message: 'the directory does not exist' }]);
  });

  it('has exactly the expected problems', () => {
    expect(result.problems.map((p) => p.file).sort()).toEqual(
      ['b-invalid/holon.yaml', 'c-no-agent-mjs/holon.yaml', 'e-dup-second/holon.json', 'i-bad-yaml/holon.yaml', 'missing'].map((f) => join(root, f)).sort(),
    );
  });

  it('accepts excluding one exact version', async () => {
    const { log } = captureLogger();
    const r = await loadDevRegistry([EXAMPLES], {
      exclude: ['examples/slow@1.0.0', 'examples/flaky', 'examples/invoice-pipeline', 'examples/invoice-digest@1.0.0'],
      log,
    });
    expect(r.registry.list().map((a) => a.manifest.id)).toEqual(['examples/echo-upper', 'examples/quote-translate', 'examples/word-count']);
  });
});

// ------------------------------------------------------------------ the in-memory registry

function agent(id: string, version: string, capabilities = ['text.transform'], summary = `Agent ${id}`): AgentVersion {
  return { manifest: buildManifest({ id, version, capabilities, summary }), origin: 'published' };
}

describe('createRegistry', () => {
  const registry: Registry = createRegistry([
    agent('acme/pdf', '1.0.0', ['extraction.table']),
    agent('acme/pdf', '1.2.0', ['extraction.table']),
    agent('acme/pdf', '1.10.1', ['extraction.table', 'ocr.page']),
    agent('acme/pdf', '2.0.0', ['extraction.table']),
    agent('acme/pdf', '2.1.0-beta.1', ['extraction.table', 'ocr.page']),
    agent('acme/pdf', '3.0.0-rc.1', ['extraction.table']),
    agent('lena/tables-fr', '0.3.0', ['extraction.table'], 'Extracts tables from French PDF invoices'),
    agent('beta/only', '1.0.0-alpha', ['ocr.page']),
    agent('beta/only', '1.0.0-beta', ['ocr.page']),
  ]);
  const v = (r: ReturnType<Registry['resolve']>) => (r.ok ? r.agent.manifest.version : r.code);

  it('gets exact versions and lists versions newest first', () => {
    expect(registry.get('acme/pdf', '1.2.0')?.manifest.version).toBe('1.2.0');
    expect(registry.get('acme/pdf', '9.9.9')).toBeUndefined();
    expect(registry.get('nobody/here', '1.0.0')).toBeUndefined();
    expect(registry.versions('acme/pdf').map((a) => a.manifest.version)).toEqual(['3.0.0-rc.1', '2.1.0-beta.1', '2.0.0', '1.10.1', '1.2.0', '1.0.0']);
    expect(registry.versions('nobody/here')).toEqual([]);
    expect(registry.list()).toHaveLength(9);
    expect(registry.list().map((a) => a.manifest.id)[0]).toBe('acme/pdf');
  });

  it.each([
    ['acme/pdf', '2.0.0'],
    ['acme/pdf@1.2.0', '1.2.0'],
    ['acme/pdf@^1', '1.10.1'],
    ['acme/pdf@~1.2', '1.2.0'],
    ['acme/pdf@^2', '2.0.0'],
    ['acme/pdf@^2.1.0-beta.0', '2.1.0-beta.1'],
    ['acme/pdf@3.0.0-rc.1', '3.0.0-rc.1'],
    ['acme/pdf@^4', 'no_matching_version'],
    ['acme/pdf@1.1.0', 'no_matching_version'],
    ['beta/only', 'no_matching_version'],
    ['beta/only@^1.0.0-alpha', '1.0.0-beta'],
    ['nobody/here', 'unknown_agent'],
    ['nobody/here@^1', 'unknown_agent'],
    ['Acme/PDF', 'invalid_ref'],
    ['acme/pdf@', 'invalid_ref'],
    ['acme/pdf@not a range', 'invalid_ref'],
    ['acme', 'invalid_ref'],
    ['', 'invalid_ref'],
  ])('resolve(%j) → %s', (ref, expected) => {
    expect(v(registry.resolve(ref))).toBe(expected);
  });

  it('explains a failed resolution', () => {
    const r = registry.resolve('acme/pdf@^4');
    expect(r).toMatchObject({ ok: false, code: 'no_matching_version' });
    if (!r.ok) expect(r.message).toContain('^4');
    const u = registry.resolve('nobody/here');
    if (!u.ok) expect(u.message).toContain('nobody/here');
  });

  it('implementers: the highest release of each agent listing the capability', () => {
    const pick = (cap: string) => registry.implementers(cap).map((a) => `${a.manifest.id}@${a.manifest.version}`);
    expect(pick('extraction.table')).toEqual(['acme/pdf@2.0.0', 'lena/tables-fr@0.3.0']);
    // 2.0.0 dropped ocr.page: the highest release still listing it is 1.10.1; beta/only has only pre-releases.
    expect(pick('ocr.page')).toEqual(['acme/pdf@1.10.1']);
    expect(pick('text.summarize')).toEqual([]);
  });

  it('search: latest version of each matching agent, q case-insensitive on id, summary and capabilities', () => {
    const pick = (q: Parameters<Registry['search']>[0]) => registry.search(q).map((a) => `${a.manifest.id}@${a.manifest.version}`);
    expect(pick({})).toEqual(['acme/pdf@2.0.0', 'beta/only@1.0.0-beta', 'lena/tables-fr@0.3.0']);
    expect(pick(undefined)).toEqual(pick({}));
    expect(pick({ q: 'FRENCH' })).toEqual(['lena/tables-fr@0.3.0']);
    expect(pick({ q: 'acme/' })).toEqual(['acme/pdf@2.0.0']);
    expect(pick({ q: 'OCR' })).toEqual(['beta/only@1.0.0-beta']); // acme/pdf@2.0.0 no longer lists ocr.page
    expect(pick({ q: '  ' })).toEqual(pick({}));
    expect(pick({ capability: 'ocr.page' })).toEqual(['acme/pdf@1.10.1', 'beta/only@1.0.0-beta']);
    expect(pick({ capability: 'extraction.*' })).toEqual(['acme/pdf@2.0.0', 'lena/tables-fr@0.3.0']);
    expect(pick({ capability: 'extraction.table', q: 'invoices' })).toEqual(['lena/tables-fr@0.3.0']);
    expect(pick({ q: 'nothing matches this' })).toEqual([]);
  });

  it('refuses the same id@version twice', () => {
    expect(() => createRegistry([agent('acme/pdf', '1.0.0'), agent('acme/pdf', '1.0.0')])).toThrow(/duplicate/);
  });
});

// ------------------------------------------------------------------ mandate files

describe('loadMandateFiles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'holon-mandates-'));
    await writeFile(join(dir, 'demo.yaml'), await readFile(join(EXAMPLES, 'mandates', 'demo.yaml'), 'utf8'));
    await writeFile(join(dir, 'broken.yml'), 'id: Alice/Bad Name\nissuer: alice\nbudget: { total: 20.00, currency: euro }\n');
    await writeFile(
      join(dir, 'other.json'),
      JSON.stringify({
        id: 'bob/main',
        issuer: 'bob',
        grantee: 'bob/assistant',
        allow: { agents: ['examples/*'] },
        budget: { total: '1.00', currency: 'EUR' },
      }),
    );
    await writeFile(join(dir, 'same-id.yaml'), 'id: bob/main\nissuer: bob\ngrantee: bob/other\nbudget: { total: "2.00", currency: EUR }\n');
    await writeFile(join(dir, 'notes.txt'), 'not a mandate');
    await writeFile(join(dir, '.hidden.yaml'), 'garbage: [');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'nested.yaml'), 'garbage: [');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the valid files and reports the invalid ones with their path', async () => {
    const { log, lines } = captureLogger();
    const { mandates, problems } = await loadMandateFiles(dir, { log });
    expect(mandates.map((m) => m.id)).toEqual(['demo/sandbox', 'bob/main']);
    const demo = mandates[0]!;
    expect(demo).toMatchObject({
      issuer: 'demo',
      grantee: 'demo/assistant',
      allow: { agents: ['examples/*', 'holon-labs/*'], capabilities: ['text.*', 'test.*', 'data.*'] },
      budget: { total: 5_000_000n, currency: 'EUR', perCall: 1_000_000n },
      delegation: { maxDepth: 1 },
    });
    expect(problems.map((p) => p.file)).toEqual([join(dir, 'broken.yml'), join(dir, 'same-id.yaml')]);
    expect(problems[0]!.problems.length).toBeGreaterThan(1);
    expect(problems[1]!.problems).toEqual([{ path: '$.id', message: expect.stringContaining('other.json') }]);
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
  });

  it('loads examples/mandates', async () => {
    const { mandates, problems } = await loadMandateFiles(join(EXAMPLES, 'mandates'));
    expect(problems).toEqual([]);
    expect(mandates.map((m) => m.id)).toEqual(['demo/sandbox', 'examples/house']);
  });

  it('reports a missing directory', async () => {
    const r = await loadMandateFiles(join(dir, 'missing'));
    expect(r).toEqual({ mandates: [], problems: [{ file: join(dir, 'missing'), problems: [{ path: '$', message: 'the directory does not exist' }] }] });
  });
});

// ------------------------------------------------------------------ the example agents, run directly

interface FakeCtx {
  callId: string;
  maxCost?: { amount: string; currency: string };
  signal: AbortSignal;
  units: (n: number) => void;
  quote: (amount: string) => void;
  error: (code: string, message?: string) => Error & { code: string };
  reported: { units: number[]; quotes: string[] };
}

function fakeCtx(over: { maxCost?: string; signal?: AbortSignal } = {}): FakeCtx {
  const reported = { units: [] as number[], quotes: [] as string[] };
  return {
    callId: 'r1',
    ...(over.maxCost !== undefined ? { maxCost: { amount: over.maxCost, currency: 'EUR' } } : {}),
    signal: over.signal ?? new AbortController().signal,
    units: (n) => void reported.units.push(n),
    quote: (amount) => void reported.quotes.push(amount),
    error: (code, message) => Object.assign(new Error(message ?? code), { code }),
    reported,
  };
}

type Handler = (input: unknown, ctx: FakeCtx) => Promise<unknown>;

async function handler(name: string): Promise<Handler> {
  const mod = (await import(pathToFileURL(join(EXAMPLES, name, 'agent.mjs')).href)) as { default: Handler };
  return mod.default;
}

async function exampleInterface(name: string) {
  const r = parseManifest(await readFile(join(EXAMPLES, name, 'holon.yaml'), 'utf8'));
  if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.problems)}`);
  return { manifest: r.manifest, check: compileInterface(r.manifest) };
}

describe('example agents', () => {
  it('every agent.mjs produces its manifest example', async () => {
    for (const name of ['echo-upper', 'word-count', 'quote-translate', 'slow', 'flaky']) {
      const { manifest } = await exampleInterface(name);
      const ex = manifest.interface.examples[0]!;
      expect(await (await handler(name))(ex.input, fakeCtx()), name).toEqual(ex.output);
    }
  });

  it('echo-upper upper-cases', async () => {
    expect(await (await handler('echo-upper'))({ text: 'déjà vu' }, fakeCtx())).toEqual({ text: 'DÉJÀ VU' });
  });

  it('word-count reports one unit per word and refuses above max_cost', async () => {
    const run = await handler('word-count');
    const ctx = fakeCtx();
    expect(await run({ text: '  one two\nthree\tfour  five ' }, ctx)).toEqual({ words: 5, characters: 27 });
    expect(ctx.reported.units).toEqual([5]);

    const empty = fakeCtx();
    expect(await run({ text: '' }, empty)).toEqual({ words: 0, characters: 0 });
    expect(empty.reported.units).toEqual([0]);

    // 5 words = 0.005: a cap of exactly 0.005 is enough, 0.004 is not.
    const enough = fakeCtx({ maxCost: '0.005' });
    await expect(run({ text: 'a b c d e' }, enough)).resolves.toEqual({ words: 5, characters: 9 });
    const short = fakeCtx({ maxCost: '0.004' });
    await expect(run({ text: 'a b c d e' }, short)).rejects.toMatchObject({ code: 'over_budget' });
    expect(short.reported.units).toEqual([]);
  });

  it('quote-translate quotes 0.0001 per character and reverses the text', async () => {
    const run = await handler('quote-translate');
    const ctx = fakeCtx();
    expect(await run({ text: 'bonjour', to: 'fr' }, ctx)).toEqual({ text: 'ruojnob', to: 'fr' });
    expect(ctx.reported.quotes).toEqual(['0.0007']);

    const big = fakeCtx();
    await run({ text: 'x'.repeat(20000), to: 'es' }, big);
    expect(big.reported.quotes).toEqual(['2']);

    const emoji = fakeCtx();
    expect(await run({ text: 'a😀b', to: 'de' }, emoji)).toEqual({ text: 'b😀a', to: 'de' });
    expect(emoji.reported.quotes).toEqual(['0.0003']);

    await expect(run({ text: 'bonjour', to: 'fr' }, fakeCtx({ maxCost: '0.0007' }))).resolves.toBeDefined();
    const short = fakeCtx({ maxCost: '0.0006' });
    await expect(run({ text: 'bonjour', to: 'fr' }, short)).rejects.toMatchObject({ code: 'over_budget' });
    expect(short.reported.quotes).toEqual([]);
    await expect(run({ text: 'hallo', to: 'it' }, fakeCtx())).rejects.toMatchObject({ code: 'unsupported_language' });
  });

  it('slow waits, and stops when the signal fires', async () => {
    const run = await handler('slow');
    expect(await run({ ms: 5 }, fakeCtx())).toEqual({ waited: 5 });

    const controller = new AbortController();
    const started = Date.now();
    const pending = run({ ms: 600000 }, fakeCtx({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('timeout')), 20);
    await expect(pending).rejects.toThrow('timeout');
    expect(Date.now() - started).toBeLessThan(5000);

    await expect(run({ ms: 10 }, fakeCtx({ signal: AbortSignal.abort() }))).rejects.toBeDefined();
  });

  it('flaky produces each outcome of the billing table', async () => {
    const run = await handler('flaky');
    const { manifest, check } = await exampleInterface('flaky');
    expect(await run({ mode: 'ok' }, fakeCtx())).toEqual({ result: 'ok' });
    await expect(run({ mode: 'declared_billed' }, fakeCtx())).rejects.toMatchObject({ code: 'partial' });
    expect(manifest.interface.errors.partial?.billed).toBe(true);
    await expect(run({ mode: 'declared_unbilled' }, fakeCtx())).rejects.toMatchObject({ code: 'not_found' });
    expect(manifest.interface.errors.not_found?.billed).toBe(false);
    await expect(run({ mode: 'undeclared' }, fakeCtx())).rejects.toMatchObject({ code: 'mystery' });
    expect(manifest.interface.errors.mystery).toBeUndefined();
    const crash = await run({ mode: 'crash' }, fakeCtx()).catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(Error);
    expect((crash as { code?: unknown }).code).toBeUndefined();
    const invalid = await run({ mode: 'invalid_output' }, fakeCtx());
    expect(check.output(invalid)).not.toEqual([]);
    expect(check.output({ result: 'ok' })).toEqual([]);
  });

  it('the example inputs and outputs satisfy their schemas', async () => {
    for (const name of ['echo-upper', 'word-count', 'quote-translate', 'slow', 'flaky']) {
      const { manifest, check } = await exampleInterface(name);
      const ex = manifest.interface.examples[0]!;
      expect(check.input(ex.input), name).toEqual([]);
      expect(check.output(ex.output), name).toEqual([]);
    }
    const { check } = await exampleInterface('quote-translate');
    expect(check.input({ text: 'hola', to: 'it' })).not.toEqual([]);
  });
});

// ------------------------------------------------------------------ hiding (yanked) versions

describe('Registry.hide', () => {
  const fresh = () =>
    createRegistry([
      agent('acme/pdf', '1.0.0', ['extraction.table']),
      agent('acme/pdf', '1.2.0', ['extraction.table', 'ocr.page']),
      agent('acme/pdf', '2.0.0', ['extraction.table']),
      agent('acme/pdf', '2.1.0-beta.1', ['extraction.table']),
      agent('lena/tables-fr', '0.3.0', ['extraction.table'], 'Extracts tables from French PDF invoices'),
    ]);
  const ids = (list: AgentVersion[]) => list.map((a) => `${a.manifest.id}@${a.manifest.version}`);
  const v = (r: ReturnType<Registry['resolve']>) => (r.ok ? r.agent.manifest.version : r.code);

  it('takes the version out of resolution: the next highest in range wins, a pinned ref no longer matches', () => {
    const r = fresh();
    expect(r.hide('acme/pdf', '2.0.0')).toBe(true);
    expect(v(r.resolve('acme/pdf'))).toBe('1.2.0');
    expect(v(r.resolve('acme/pdf@^2'))).toBe('no_matching_version');
    expect(v(r.resolve('acme/pdf@2.0.0'))).toBe('no_matching_version');
    expect(v(r.resolve('acme/pdf@^2.1.0-beta.0'))).toBe('2.1.0-beta.1');
    const failed = r.resolve('acme/pdf@2.0.0');
    if (!failed.ok) expect(failed.message).not.toContain('2.0.0,');
  });

  it('takes it out of versions, list, search and capability routing', () => {
    const r = fresh();
    r.hide('acme/pdf', '2.0.0');
    expect(r.versions('acme/pdf').map((a) => a.manifest.version)).toEqual(['2.1.0-beta.1', '1.2.0', '1.0.0']);
    expect(ids(r.list())).toEqual(['acme/pdf@2.1.0-beta.1', 'acme/pdf@1.2.0', 'acme/pdf@1.0.0', 'lena/tables-fr@0.3.0']);
    expect(ids(r.search({}))).toEqual(['acme/pdf@1.2.0', 'lena/tables-fr@0.3.0']);
    expect(ids(r.implementers('extraction.table'))).toEqual(['acme/pdf@1.2.0', 'lena/tables-fr@0.3.0']);
    r.hide('acme/pdf', '1.2.0');
    expect(ids(r.implementers('ocr.page'))).toEqual([]);
    expect(ids(r.search({ capability: 'ocr.page' }))).toEqual([]);
  });

  it('an agent with every version hidden is unknown everywhere', () => {
    const r = fresh();
    expect(r.hide('lena/tables-fr', '0.3.0')).toBe(true);
    expect(v(r.resolve('lena/tables-fr'))).toBe('unknown_agent');
    expect(r.versions('lena/tables-fr')).toEqual([]);
    expect(ids(r.list()).some((s) => s.startsWith('lena/'))).toBe(false);
    expect(ids(r.search({ q: 'french' }))).toEqual([]);
    expect(ids(r.implementers('extraction.table'))).toEqual(['acme/pdf@2.0.0']);
  });

  it('a search after a hide or an add shows the version listed now, not the one an earlier search showed', () => {
    const r = fresh();
    expect(ids(r.search({}))).toEqual(['acme/pdf@2.0.0', 'lena/tables-fr@0.3.0']);
    r.hide('acme/pdf', '2.0.0');
    expect(ids(r.search({}))).toEqual(['acme/pdf@1.2.0', 'lena/tables-fr@0.3.0']);
    expect(r.add(agent('acme/pdf', '3.0.0', ['extraction.table']))).toBe(true);
    expect(ids(r.search({}))).toEqual(['acme/pdf@3.0.0', 'lena/tables-fr@0.3.0']);
    expect(r.add(agent('zed/new', '0.1.0-alpha.1'))).toBe(true);
    expect(ids(r.search({}))).toEqual(['acme/pdf@3.0.0', 'lena/tables-fr@0.3.0', 'zed/new@0.1.0-alpha.1']);
  });

  it('a resolution after a hide or an add answers the version listed now, not the one an earlier resolution found', () => {
    const r = fresh();
    const refs = ['acme/pdf', 'acme/pdf@^2', 'acme/pdf@2.0.0', 'acme/pdf@>=1'];
    expect(refs.map((ref) => v(r.resolve(ref)))).toEqual(['2.0.0', '2.0.0', '2.0.0', '2.0.0']);
    r.hide('acme/pdf', '2.0.0');
    expect(refs.map((ref) => v(r.resolve(ref)))).toEqual(['1.2.0', 'no_matching_version', 'no_matching_version', '1.2.0']);
    expect(r.add(agent('acme/pdf', '2.5.0', ['extraction.table']))).toBe(true);
    expect(refs.map((ref) => v(r.resolve(ref)))).toEqual(['2.5.0', '2.5.0', 'no_matching_version', '2.5.0']);
    // Another id's changes leave these as they are; many ranges of one id are all answered right.
    expect(r.add(agent('zed/new', '1.0.0'))).toBe(true);
    expect(v(r.resolve('acme/pdf'))).toBe('2.5.0');
    for (let minor = 0; minor < 150; minor++) expect(v(r.resolve(`acme/pdf@<=2.${minor}.0`))).toBe(minor >= 5 ? '2.5.0' : '1.2.0');
    r.hide('acme/pdf', '2.5.0');
    expect(v(r.resolve('acme/pdf@<=2.140.0'))).toBe('1.2.0');
  });

  it('get() still finds a hidden version: admitted calls run and settle, forks still pay royalties', () => {
    const r = fresh();
    r.hide('lena/tables-fr', '0.3.0');
    r.hide('acme/pdf', '2.0.0');
    expect(r.get('lena/tables-fr', '0.3.0')?.manifest.version).toBe('0.3.0');
    expect(r.get('acme/pdf', '2.0.0')?.manifest.version).toBe('2.0.0');
    expect(r.get('acme/pdf', '9.9.9')).toBeUndefined();
  });

  it('is false for an unknown or already hidden version, and changes nothing then', () => {
    const r = fresh();
    expect(r.hide('acme/pdf', '9.9.9')).toBe(false);
    expect(r.hide('nobody/here', '1.0.0')).toBe(false);
    expect(r.hide('acme/pdf', '1.0.0')).toBe(true);
    expect(r.hide('acme/pdf', '1.0.0')).toBe(false);
    expect(r.list()).toHaveLength(4);
    r.hide('lena/tables-fr', '0.3.0');
    expect(r.hide('lena/tables-fr', '0.3.0')).toBe(false);
    expect(r.list()).toHaveLength(3);
  });

  it('one registry hiding leaves another built from the same versions alone', () => {
    const a = fresh();
    const b = fresh();
    a.hide('acme/pdf', '2.0.0');
    expect(v(b.resolve('acme/pdf'))).toBe('2.0.0');
  });
});

describe('loadDevRegistry: the reference agent host on another port (HOLON_AGENT_HOST_PORT)', () => {
  const AGENTS = fileURLToPath(new URL('../../agents', import.meta.url));

  it('calls the shipped agents of agents/ on the configured port; their manifests as written, and other agents, are left alone', async () => {
    const { log } = captureLogger();
    const moved = await loadDevRegistry([AGENTS, EXAMPLES], { log, exclude: [], agentHost: { dir: AGENTS, port: 17474 } });
    const csv = moved.registry.list().find((a) => a.manifest.id === 'holon-labs/csv-profile')!;
    expect(csv.manifest.runtime.endpoint).toBe('http://127.0.0.1:17474/mcp');
    expect((csv.manifest.doc.runtime as { endpoint: string }).endpoint).toBe('http://127.0.0.1:7474/mcp');
    expect(moved.registry.list().find((a) => a.manifest.id === 'holon-labs/summarize')!.manifest.runtime.endpoint).toBe('http://127.0.0.1:17474/mcp');
    expect(
      moved.registry
        .list()
        .filter((a) => a.manifest.id.startsWith('examples/'))
        .every((a) => a.manifest.runtime.kind === 'node'),
    ).toBe(true);

    const stays = await loadDevRegistry([AGENTS], { log, agentHost: { dir: AGENTS, port: 7474 } });
    expect(stays.registry.list().find((a) => a.manifest.id === 'holon-labs/csv-profile')!.manifest.runtime.endpoint).toBe('http://127.0.0.1:7474/mcp');
  });

  it('moves only loopback http endpoints on 7474 of agents under the host directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'holon-agent-host-port-'));
    try {
      const mcp = (endpoint: string) => ({ runtime: { kind: 'mcp', endpoint, tool: 't', limits: { timeout_s: 30 } } });
      const write = async (sub: string, doc: Record<string, unknown>) => {
        await mkdir(join(dir, sub), { recursive: true });
        await writeFile(join(dir, sub, 'holon.json'), JSON.stringify(doc));
      };
      await write('host/a', manifestDoc('hosted/aa', '1.0.0', mcp('http://127.0.0.1:7474/mcp')));
      await write('host/b', manifestDoc('hosted/bb', '1.0.0', mcp('http://127.0.0.1:9000/mcp')));
      await write('host/c', manifestDoc('hosted/cc', '1.0.0', mcp('https://agents.example.com:7474/mcp')));
      await write('elsewhere/d', manifestDoc('other/dd', '1.0.0', mcp('http://127.0.0.1:7474/mcp')));
      const { log } = captureLogger();
      const { registry, problems } = await loadDevRegistry([dir], { log, agentHost: { dir: join(dir, 'host'), port: 8888 } });
      expect(problems).toEqual([]);
      const endpoint = (id: string) => registry.list().find((a) => a.manifest.id === id)!.manifest.runtime.endpoint;
      expect(endpoint('hosted/aa')).toBe('http://127.0.0.1:8888/mcp');
      expect(endpoint('hosted/bb')).toBe('http://127.0.0.1:9000/mcp');
      expect(endpoint('hosted/cc')).toBe('https://agents.example.com:7474/mcp');
      expect(endpoint('other/dd')).toBe('http://127.0.0.1:7474/mcp');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
