/**
 * `npm run bench`: throughput figures, printed and written to bench/results.json.
 * Real Postgres (DATABASE_URL, else 127.0.0.1:5432) in a throw-away database, and PGlite in memory.
 * The gateway section (bench/gateway.ts) also needs Redis (REDIS_URL, else 127.0.0.1:6379), under a
 * throw-away key prefix. Method and findings: docs/PERFORMANCE.md.
 *
 * BENCH_ONLY=gateway runs only the Postgres ceiling and the gateway section, and writes nothing
 * (for tuning: BENCH_GATEWAY_RUNNERS, _SETTLERS, _CONCURRENCY, _DURATION_S, _DRIVER=inline|worker).
 * BENCH_ONLY=mcp runs only the MCP runtime section (bench/mcp-runtime.ts: a local MCP server, no database), and
 * writes nothing. BENCH_ONLY=signing runs only the signing section (bench/signing.ts), and writes nothing.
 * BENCH_ONLY=search runs only the catalogue search section (bench/search.ts, Postgres), and writes nothing.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase, type Database } from '../shared/db/connect.js';
import { ensureAccount, ensureBalanceRow, DEMO_CREDIT_ACCOUNT, postEntry, reserveHold, resolveHold } from '../shared/ledger/index.js';
import { applySettlementMoves } from '../shared/ledger/money-functions.js';
import { saveMandate } from '../shared/mandates/store.js';
import { parseManifest, compileInterface } from '../shared/core/manifest/index.js';
import { parseMandate, checkCall } from '../shared/core/mandate/index.js';
import { split } from '../shared/core/splits.js';
import { worstCase, charge } from '../shared/core/pricing.js';
import { gatewayBench } from './gateway.js';
import { mcpRuntimeBench } from './mcp-runtime.js';
import { searchBench } from './search.js';
import { signingBench } from './signing.js';
import { postgresDatabase, redisTarget, writeResultSections } from './support.js';
import { generateSigningKey } from '../shared/signing/keys.js';

type Figures = Record<string, number | string>;
const results: Record<string, Figures> = {};

function record(section: string, name: string, value: number | string, unit = ''): void {
  (results[section] ??= {})[name] = value;
  console.log(`  ${name.padEnd(48)} ${typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: 2 }) : value} ${unit}`);
}

async function time(n: number, work: (i: number) => unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await work(i);
  return performance.now() - start;
}

function perSecond(n: number, ms: number): number {
  return (n * 1000) / ms;
}

async function ledgerBench(label: string, db: Database, concurrency: number): Promise<void> {
  console.log(`\nledger on ${label}`);
  const k = db.knex;
  for (const a of [DEMO_CREDIT_ACCOUNT, 'bob', 'holon', 'lena', 'acme']) await ensureAccount(k, a);
  await postEntry(k, {
    key: 'signup:bob',
    kind: 'signup',
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency: 'EUR', amount: -1_000_000_000n },
      { account: 'bob', currency: 'EUR', amount: 1_000_000_000n },
    ],
  });
  const settle = (i: number) =>
    postEntry(k, {
      key: `settle:${label}:${i}`,
      kind: 'settle',
      lines: [
        { account: 'bob', currency: 'EUR', amount: -35_000n },
        { account: 'holon', currency: 'EUR', amount: 3_500n },
        { account: 'lena', currency: 'EUR', amount: 26_775n },
        { account: 'acme', currency: 'EUR', amount: 4_725n },
      ],
    });
  const n = 500;
  const seqMs = await time(n, settle);
  record(label, 'settlement entries/s, sequential (4 lines)', perSecond(n, seqMs), '/s');
  // The production path: reserve (holon_reserve) in one transaction, release (holon_settle_shared) in another.
  const mandate = parseMandate(readFileSync(new URL('../tests/fixtures/mandates/bookkeeping.yaml', import.meta.url), 'utf8'));
  if (!mandate.ok) throw new Error('the bench mandate must be valid');
  const m = { ...mandate.mandate, issuer: 'bob' };
  await saveMandate(k, m, generateSigningKey());
  await ensureBalanceRow(k, 'bob', 'EUR');
  const holdMs = await time(n, async (i) => {
    const id = `${label}-h${i}`;
    await k.transaction(async (trx) => {
      const r = await reserveHold(trx, { mandateId: m.id, amount: 1_000n, account: 'bob', currency: 'EUR', holdId: id, callId: id });
      if (r !== 'reserved') throw new Error(`reservation ${r}`);
    });
    await k.transaction(async (trx) => {
      const hold = await resolveHold(trx, id, 'voided', { adjustBalance: false });
      await applySettlementMoves(trx, { mandates: [{ id: m.id, release: hold.amount }], spent: 0n, parentHold: null, hold, lines: [] });
    });
  });
  record(label, 'reservation + release (two transactions each, the money functions)/s', perSecond(n, holdMs), '/s');
  if (concurrency > 1) {
    let next = n;
    const total = 2000;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n + total) await settle(next++);
      }),
    );
    record(label, `settlement entries/s, ${concurrency} concurrent, one payer`, perSecond(total, performance.now() - start), '/s');
  }
}

async function rawPostgresCeiling(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE TABLE bench_ceiling (id bigserial PRIMARY KEY, v bigint)');
  const n = 2000;
  const ms = await time(n, async (i) => {
    await client.query('BEGIN');
    await client.query('INSERT INTO bench_ceiling (v) VALUES ($1)', [i]);
    await client.query('COMMIT');
  });
  record('postgres', 'raw write transactions/s, sequential (ceiling)', perSecond(n, ms), '/s');
  await client.end();
  return perSecond(n, ms);
}

async function coreBench(): Promise<void> {
  console.log('\npure core');
  const manifestText = readFileSync(new URL('../tests/fixtures/manifests/spec-example.yaml', import.meta.url), 'utf8');
  const mandateText = readFileSync(new URL('../tests/fixtures/mandates/bookkeeping.yaml', import.meta.url), 'utf8');
  let n = 200;
  record('core', 'manifests validated/s (spec example, schemas compiled)', perSecond(n, await time(n, () => parseManifest(manifestText))), '/s');
  const m = parseManifest(manifestText);
  const md = parseMandate(mandateText);
  if (!m.ok || !md.ok) throw new Error('fixtures must be valid');
  const validator = compileInterface(m.manifest);
  n = 20_000;
  record('core', 'inputs validated/s (compiled schema)', perSecond(n, await time(n, () => validator.input({ file: 'holon://files/x' }))), '/s');
  const hostile = { file: 'holon://files/' + 'a'.repeat(100_000) + '!' };
  const hostileValidator = compileInterface({
    ...m.manifest,
    version: '9.9.9',
    interface: { ...m.manifest.interface, input: { type: 'object', properties: { file: { type: 'string', pattern: '^holon://files/(a+)+$' } } } },
  });
  n = 20;
  record('core', 'ms per 100 KB input vs ^(a+)+$ (RE2)', (await time(n, () => hostileValidator.input(hostile))) / n, 'ms');
  const request = {
    worstCase: 100_000n,
    depth: 0,
    delegated: false,
    via: { kind: 'capability' as const, capability: 'extraction.table' },
    usedBefore: true,
    now: Date.parse('2026-06-01T00:00:00Z'),
    facts: { origin: 'shipped' as const, evaluation: 'passed' as const },
  };
  n = 50_000;
  record('core', 'checkCall/s', perSecond(n, await time(n, () => checkCall(md.mandate, m.manifest, request))), '/s');
  record(
    'core',
    'worstCase + charge/s',
    perSecond(
      n,
      await time(n, () => {
        worstCase(m.manifest, md.mandate.budget, 200_000n);
        charge(m.manifest, { kind: 'success', units: 7 }, md.mandate.budget, 200_000n);
      }),
    ),
    '/s',
  );
  const chain = [{ account: 'lena', royalty: { num: 15n, den: 100n } }, { account: 'acme', royalty: { num: 1n, den: 10n } }, { account: 'zed' }];
  record('core', 'splits/s (3-level chain)', perSecond(n, await time(n, (i) => split(35_000n + BigInt(i), chain))), '/s');
}

/** One search as the catalogue grows: 20, 200, 2 000 listings of ~8 KB, each in a database of its own (bench/search.ts). */
async function runSearchBench(): Promise<void> {
  const dbs = [];
  try {
    for (let i = 0; i < 3; i++) {
      const db = await postgresDatabase();
      if (!db) return;
      dbs.push(db);
    }
    console.log('\ncatalogue search (searchCatalogue with q over published listings of ~8 KB each; Postgres)');
    await searchBench(
      dbs.map((d) => d.url),
      (name, value, unit) => record('search', name, value, unit),
    );
  } finally {
    for (const db of dbs) await db.drop();
  }
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  console.log(`holon bench — node ${process.version}, ${new Date().toISOString()}${only ? ` (only ${only})` : ''}`);
  const started = performance.now();
  if (only === 'signing') {
    const db = await postgresDatabase();
    if (db) {
      console.log('\nsigning and logging receipts (shared/receipts/signing.ts, log.ts; Postgres)');
      await signingBench(db.url, (name, value, unit) => record('signing', name, value, unit)).finally(() => db.drop());
    }
    console.log('(partial run: bench/results.json left as it was)');
    return;
  }
  if (only === 'search') {
    await runSearchBench();
    console.log('(partial run: bench/results.json left as it was)');
    return;
  }
  if (only === 'mcp') {
    console.log('\nmcp runtime (a trivial tool on a local MCP server, pooled sessions vs one session per call)');
    await mcpRuntimeBench(record);
    console.log(`\nbench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log('(partial run: bench/results.json left as it was)');
    return;
  }
  if (!only) {
    await coreBench();
    const pglite = await openDatabase({});
    await ledgerBench('pglite', pglite, 1);
    await pglite.close();
  }
  const target = await postgresDatabase();
  let rawTxPerS: number | undefined;
  if (target) {
    const db = await openDatabase({ url: target.url, poolMax: 16 });
    try {
      if (!only) await ledgerBench('postgres', db, 16);
      else console.log('\npostgres');
      rawTxPerS = await rawPostgresCeiling(target.url);
    } finally {
      await db.close();
      await target.drop();
    }
  } else {
    console.log('\n(no Postgres reachable: set DATABASE_URL to measure the ledger on Postgres)');
  }
  const redis = await redisTarget();
  const gatewayDb = target && redis ? await postgresDatabase() : null;
  if (gatewayDb && redis) {
    console.log('\ngateway (api + runner + settler in process, Postgres + Redis, no-op webhook agent)');
    try {
      await gatewayBench({ database: gatewayDb, redis }, rawTxPerS, (name, value, unit) => record('gateway', name, value, unit));
    } finally {
      await gatewayDb.drop();
      await redis.cleanup();
    }
  } else {
    console.log('\n(the gateway bench needs Postgres and Redis: set DATABASE_URL and REDIS_URL)');
  }
  if (!only) {
    console.log('\nmcp runtime (a trivial tool on a local MCP server, pooled sessions vs one session per call)');
    await mcpRuntimeBench(record);
  }
  const signingDb = only ? null : await postgresDatabase();
  if (signingDb) {
    console.log('\nsigning and logging receipts (shared/receipts/signing.ts, log.ts; Postgres)');
    try {
      await signingBench(signingDb.url, (name, value, unit) => record('signing', name, value, unit));
      const perCall = results.gateway?.['CPU per paid call: gateway thread'];
      const signUs = results.signing?.['sign + leaf hash per receipt, CPU (this process)'];
      if (typeof perCall === 'number' && typeof signUs === 'number')
        record('signing', 'signing ÷ the gateway thread CPU per paid call (under load)', signUs / 10 / perCall, '%');
    } finally {
      await signingDb.drop();
    }
  }
  if (!only) await runSearchBench();
  console.log(`\nbench took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (only) {
    console.log('(partial run: bench/results.json left as it was)');
    return;
  }
  writeResultSections(results);
  console.log('\nwritten to bench/results.json');
}

await main();
