/**
 * What one catalogue search costs as the catalogue grows (section `search` of `npm run bench`, docs/PERFORMANCE.md):
 * `searchCatalogue` with `q` (what GET /v0/agents?q= and MCP search_agents run) over 20, 200 and 2 000 published
 * listings, each with a description of about 8 KB (the manifest's most), their documents in `search_documents` as a
 * publish writes them. For each size: the median and p99 of a search whose words match two listings, the bytes it
 * sends Postgres (every query's text and parameters, counted by a knex query listener), and the median of a search
 * whose word every listing holds (its cost follows the matches, which grow with the catalogue).
 */
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { searchCatalogue } from '../shared/catalogue/catalogue.js';
import { insertDocuments, noteDocuments } from '../shared/catalogue/search-documents.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../shared/context.js';
import { validateManifest } from '../shared/core/manifest/validate.js';
import { openDatabase } from '../shared/db/connect.js';
import type { AgentVersion } from '../shared/registry/agent-version.js';
import { createRegistry } from '../shared/registry/registry.js';

type Record = (name: string, value: number | string, unit?: string) => void;

const SIZES = [20, 200, 2000];
const SEARCHES = 300;
const SYLLABLES = ['ba', 'ce', 'di', 'fo', 'gu', 'ha', 'je', 'ki', 'lo', 'mu', 'na', 'pe', 'ri', 'so', 'tu', 'vy'];

/** A made-up word per number, letters only (so Postgres's parser reads one word), distinct per number. */
function word(n: number): string {
  let s = '';
  do {
    s += SYLLABLES[n % 16];
    n = Math.floor(n / 16);
  } while (n > 0);
  return s;
}

/** Mulberry32: the same listings on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The topic word of listing i: in its summary and nowhere else. */
const topic = (i: number): string => `zo${word(i)}`;

function listing(i: number, next: () => number): AgentVersion {
  const words: string[] = [];
  let length = 0;
  while (length < 7900) {
    const w = word(Math.floor(next() * 50_000));
    words.push(w);
    length += w.length + 1;
  }
  const v = validateManifest({
    id: `author${i}/agent-${i}`,
    version: '1.0.0',
    summary: `Handles ${topic(i)} requests`,
    description: words.join(' '),
    capabilities: ['text.process'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint: 'https://agents.example/run', limits: { timeout_s: 10 } },
  });
  if (!v.ok) throw new Error(`invalid bench manifest: ${JSON.stringify(v.problems)}`);
  return { manifest: v.manifest, origin: 'published' };
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

/** Milliseconds of each of `n` searches, in order. */
async function timings(ctx: ServiceContext, n: number, q: (i: number) => string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await searchCatalogue(ctx, { q: q(i) });
    out.push(performance.now() - started);
  }
  return out;
}

/** The bytes one search sends Postgres: every query's text and parameters. */
async function bytesSent(db: Knex, search: () => Promise<unknown>): Promise<number> {
  let bytes = 0;
  const listener = (x: { sql: string; bindings?: unknown[] }) => {
    bytes += Buffer.byteLength(x.sql);
    for (const b of x.bindings ?? []) bytes += Buffer.byteLength(typeof b === 'string' ? b : (JSON.stringify(b) ?? ''));
  };
  db.on('query', listener);
  try {
    await search();
  } finally {
    db.off('query', listener);
  }
  return bytes;
}

/** One catalogue of `size` listings in its own database, its documents written as a publish writes them. */
async function catalogue(url: string, size: number): Promise<{ ctx: ServiceContext; close(): Promise<void> }> {
  const db = await openDatabase({ url, poolMax: 4 });
  const next = random(42);
  const agents = Array.from({ length: size }, (_, i) => listing(i, next));
  await insertDocuments(db.knex, agents);
  noteDocuments(db.knex, agents);
  // What autovacuum (or an API process's start-up, search-documents.ts) does after many rows.
  await db.knex.raw('ANALYZE search_documents');
  const ctx = { db: db.knex, registry: createRegistry(agents), settings: DEFAULT_SETTINGS, now: () => Date.now() } as unknown as ServiceContext;
  return { ctx, close: () => db.close() };
}

/**
 * `urls`: one empty database per size. The sizes are measured in turn, one search each, round after round, so that
 * whatever else the machine does weighs on every size alike.
 */
export async function searchBench(urls: readonly string[], record: Record): Promise<void> {
  const catalogues = [];
  try {
    for (const [i, size] of SIZES.entries()) catalogues.push({ size, ...(await catalogue(urls[i]!, size)) });
    const runs = catalogues.map(({ size, ctx }) => {
      const pick = random(size);
      const two = () => `${topic(Math.floor(pick() * size))} ${topic(Math.floor(pick() * size))} quickly`;
      return { size, ctx, two, ms: [] as number[], every: [] as number[] };
    });
    for (const r of runs) {
      const check = await searchCatalogue(r.ctx, { q: r.two() });
      if (check.agents.length < 1 || check.agents.length > 2) throw new Error(`the bench query found ${check.agents.length} listings`);
    }
    for (let round = 0; round < 30 + SEARCHES; round++) {
      for (const r of runs) {
        const t = await timings(r.ctx, 1, r.two);
        if (round >= 30) r.ms.push(t[0]!);
      }
    }
    for (let round = 0; round < 30; round++) for (const r of runs) r.every.push(...(await timings(r.ctx, 1, () => 'requests')));
    for (const r of runs) {
      const ms = r.ms.sort((a, b) => a - b);
      record(`${r.size} listings: search matching 2, median`, quantile(ms, 0.5), 'ms');
      record(`${r.size} listings: search matching 2, p99`, quantile(ms, 0.99), 'ms');
      record(`${r.size} listings: bytes sent to Postgres per search`, await bytesSent(r.ctx.db, () => searchCatalogue(r.ctx, { q: r.two() })), 'B');
      record(
        `${r.size} listings: a word every listing holds, median`,
        quantile(
          r.every.sort((a, b) => a - b),
          0.5,
        ),
        'ms',
      );
    }
  } finally {
    for (const c of catalogues) await c.close();
  }
}
