/**
 * Where one call's time goes: a scratch profiler for docs/PERFORMANCE.md (not part of `npm run bench`).
 *
 *   node --import tsx bench/profile-call.ts [calls]          one call at a time
 *   node --import tsx bench/profile-call.ts load [seconds]   64 clients (the bench's sustained phase)
 *
 * Starts the same gateway as the bench (api + runner + settler, Postgres + Redis, no-op webhook agent).
 * One at a time: records every SQL statement (knex query events) and every Redis command (ioredis
 * `sendCommand`, by connection) with timestamps; prints the per-call counts and the timeline of one call.
 * Under load: where a call's time goes — pool waits (tarn events), the two money transactions (time to get
 * the mandate row lock, time it is held), and the hand-offs between services (timestamps on the call rows).
 * Writes nothing to the repository; the throw-away database and Redis keys are removed.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { createDriver, startBenchGateway } from './gateway.js';
import { keepAliveAgent, quantile } from './load.js';
import { postgresDatabase, redisTarget } from './support.js';

interface Event {
  t: number;
  kind: 'sql' | 'sql-done' | 'redis' | 'redis-done' | 'mark';
  what: string;
  conn?: string;
}

const events: Event[] = [];
let tracing = false;
const mark = (what: string) => tracing && events.push({ t: performance.now(), kind: 'mark', what });

// Every Redis command of every connection in this process (the gateway's store, queues, notifier, BullMQ).
const proto = Redis.prototype as unknown as { sendCommand(cmd: { name: string; args: unknown[]; promise: Promise<unknown> }, stream?: unknown): unknown };
const original = proto.sendCommand;
proto.sendCommand = function (this: Redis, cmd, stream) {
  if (tracing) {
    const conn = String((this.options as { connectionName?: string }).connectionName ?? '?').replace(/^holon-bench-[0-9a-f]+:/, '');
    const name = cmd.name === 'evalsha' || cmd.name === 'eval' ? `${cmd.name}(${scriptName(cmd.args)})` : cmd.name;
    const start = performance.now();
    events.push({ t: start, kind: 'redis', what: name, conn });
    const p = cmd.promise as Promise<unknown> | undefined;
    p?.then(
      () => tracing && events.push({ t: performance.now(), kind: 'redis-done', what: name, conn }),
      () => undefined,
    );
  }
  return original.call(this, cmd, stream);
};

/** BullMQ's Lua scripts are sent by SHA-1: name them. */
const scriptsBySha = new Map<string, string>();
{
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve('bullmq')), '..', 'esm', 'scripts');
  for (const file of readdirSync(dir).filter((f) => /^[A-Za-z]+-[0-9]+\.js$/.test(f))) {
    const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, { name?: string; content?: string }>;
    for (const v of Object.values(mod)) if (v?.content && v.name) scriptsBySha.set(createHash('sha1').update(v.content).digest('hex'), v.name);
  }
}
function scriptName(args: unknown[]): string {
  return scriptsBySha.get(String(args[0])) ?? `${String(args[1])} keys`;
}

const loadMode = process.argv[2] === 'load';
const calls = loadMode ? 0 : Number(process.argv[2] ?? 200);
const database = await postgresDatabase();
const redis = await redisTarget();
if (!database || !redis) throw new Error('needs Postgres and Redis');
const driver = createDriver(loadMode ? 'worker' : 'inline');
const bench = await startBenchGateway({ database, redis, driver, runnerConcurrency: 64, settlerConcurrency: 16 });
const knex = bench.gw.db.knex;
if (loadMode) {
  try {
    await profileLoad(Number(process.argv[3] ?? 10));
  } finally {
    await bench.stop();
    await driver.close();
    await database.drop();
    await redis.cleanup();
  }
  process.exit(0);
}
knex.on('query', (q: { sql: string }) => {
  if (!tracing) return;
  events.push({ t: performance.now(), kind: 'sql', what: shortSql(q.sql) });
});
knex.on('query-response', (_r: unknown, q: { sql: string }) => {
  if (tracing) events.push({ t: performance.now(), kind: 'sql-done', what: shortSql(q.sql) });
});

function shortSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim().slice(0, 90);
}

const dispatcher = keepAliveAgent(1);
const post = async () => {
  const res = await request(`${bench.url}/v0/calls`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: bench.callBody });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${res.statusCode}: ${body}`);
};

try {
  for (let i = 0; i < 50; i++) await post();
  const perCall: number[] = [];
  const perCallEvents: Event[][] = [];
  for (let i = 0; i < calls; i++) {
    events.length = 0;
    tracing = true;
    const t0 = performance.now();
    mark('client: POST /v0/calls sent');
    await post();
    mark('client: 200 received');
    perCall.push(performance.now() - t0);
    tracing = false;
    // Keep the last few timelines; let background work (BullMQ moveToFinished, lock renewals) drain.
    await new Promise((r) => setTimeout(r, 5));
    perCallEvents.push([...events]);
  }
  perCall.sort((a, b) => a - b);
  console.log(
    `\n${calls} sequential calls: p50 ${perCall[Math.floor(calls / 2)]!.toFixed(2)} ms, mean ${(perCall.reduce((a, b) => a + b, 0) / calls).toFixed(2)} ms`,
  );

  // Counts per call (averaged), over the calls' own windows.
  const sqlCount = new Map<string, number>();
  const redisCount = new Map<string, number>();
  for (const evs of perCallEvents) {
    for (const e of evs) {
      if (e.kind === 'sql') sqlCount.set(e.what, (sqlCount.get(e.what) ?? 0) + 1);
      if (e.kind === 'redis') redisCount.set(`${e.conn} ${e.what}`, (redisCount.get(`${e.conn} ${e.what}`) ?? 0) + 1);
    }
  }
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0) / calls;
  console.log(`\nSQL statements per call: ${total(sqlCount).toFixed(2)}`);
  for (const [k, v] of [...sqlCount].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / calls).toFixed(2).padStart(6)}  ${k}`);
  console.log(`\nRedis commands per call: ${total(redisCount).toFixed(2)}`);
  for (const [k, v] of [...redisCount].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / calls).toFixed(2).padStart(6)}  ${k}`);

  // Stages of each call, between landmarks of its timeline (start times of statements), medians over the calls.
  const stages: Array<[string, (evs: Event[]) => number | undefined]> = [];
  const nth = (evs: Event[], test: (e: Event) => boolean, n = 1) => evs.filter(test)[n - 1]?.t;
  const sql = (prefix: string) => (e: Event) => e.kind === 'sql' && e.what.startsWith(prefix);
  const marks = (evs: Event[]) => [
    evs[0]?.t,
    nth(evs, sql('SELECT holon_admit')),
    nth(evs, sql(`UPDATE calls c SET status = 'running'`)),
    nth(evs, sql(`UPDATE calls SET status = 'settling'`)),
    nth(evs, sql('BEGIN')),
    nth(evs, sql('COMMIT')),
    evs[evs.length - 1]?.t,
  ];
  const names = [
    'API: parse, mandate read, checkCall (→ holon_admit_one sent)',
    'admit (one statement), input SET, run job added, runner wakes (→ claim)',
    'runner: claim, input GETDEL, agent HTTP, output SET (→ close)',
    'close, settle job added, queue hop, settler pre-read (→ BEGIN)',
    'settle transaction (BEGIN → COMMIT sent)',
    'commit, PUBLISH, waiter wakes, receipt read, output GETDEL, answer',
  ];
  names.forEach((name, i) =>
    stages.push([
      name,
      (evs) => {
        const m = marks(evs);
        return m[i + 1] !== undefined && m[i] !== undefined ? m[i + 1]! - m[i]! : undefined;
      },
    ]),
  );
  console.log('\nstages of a call (median ms over the calls):');
  let sum = 0;
  for (const [name, f] of stages) {
    const xs = perCallEvents
      .map(f)
      .filter((x): x is number => x !== undefined)
      .sort((a, b) => a - b);
    const m = xs[Math.floor(xs.length / 2)] ?? Number.NaN;
    sum += m;
    console.log(`  ${m.toFixed(2).padStart(7)}  ${name}`);
  }
  console.log(`  ${sum.toFixed(2).padStart(7)}  (sum of medians)`);

  // The timeline of the median call.
  const median = perCallEvents[Math.floor(calls / 2)]!;
  const t0 = median[0]!.t;
  console.log('\ntimeline of one call (ms since the client sent it):');
  let last = t0;
  for (const e of median) {
    if (e.kind === 'sql-done' || e.kind === 'redis-done') continue;
    const gap = e.t - last;
    last = e.t;
    console.log(
      `  ${(e.t - t0).toFixed(2).padStart(8)}  (+${gap.toFixed(2).padStart(6)})  ${e.kind.padEnd(5)} ${e.conn ? e.conn.padEnd(9) + ' ' : ''}${e.what}`,
    );
  }
} finally {
  await dispatcher.close();
  await bench.stop();
  await driver.close();
  await database.drop();
  await redis.cleanup();
}

async function profileLoad(seconds: number): Promise<void> {
  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return `n ${String(xs.length).padStart(6)}   mean ${mean.toFixed(2).padStart(8)} ms   p50 ${quantile(sorted, 0.5).toFixed(2).padStart(8)} ms   p99 ${quantile(sorted, 0.99).toFixed(2).padStart(8)} ms`;
  };
  let on = false;
  // Pool: how long each query waits for a connection.
  const pool = (knex.client as { pool: { on(e: string, f: (id: number) => void): void } }).pool;
  const acquireStart = new Map<number, number>();
  const poolWaits: number[] = [];
  pool.on('acquireRequest', (id) => on && acquireStart.set(id, performance.now()));
  pool.on('acquireSuccess', (id) => {
    const t = acquireStart.get(id);
    if (t !== undefined) acquireStart.delete(id), poolWaits.push(performance.now() - t);
  });
  // Transactions: which one (reserve / settle), when the mandate lock was asked for and got, when it committed.
  interface Tx {
    kind?: 'reserve' | 'settle';
    begin: number;
    lockAsked?: number;
    lockGot?: number;
    statements: number;
  }
  const txs = new Map<string, Tx>();
  const done: Array<Tx & { end: number }> = [];
  // Every statement, BEGIN and COMMIT included, passes through the dialect's _query (transactions use a clone of
  // the client with the same prototype): time them there, keyed by the connection's transaction id.
  const proto = Object.getPrototypeOf(knex.client) as { _query(conn: { __knexTxId?: string }, obj: { sql: string }): Promise<unknown> };
  const inner = proto._query;
  proto._query = function (this: unknown, conn, obj) {
    const id = conn.__knexTxId;
    if (!on || !id) return inner.call(this, conn, obj);
    const sql = obj.sql;
    const t0 = performance.now();
    if (sql.startsWith('BEGIN')) txs.set(id, { begin: t0, statements: 0 });
    const tx = txs.get(id);
    if (tx) {
      tx.statements++;
      if (tx.kind === undefined && !sql.startsWith('BEGIN')) tx.kind = sql.includes('FROM mandates') ? 'reserve' : 'settle';
    }
    const isLock = /FROM mandates WHERE id = \$1 FOR UPDATE/.test(sql);
    if (tx && isLock) tx.lockAsked = t0;
    return inner.call(this, conn, obj).then((r) => {
      if (tx && isLock) tx.lockGot = performance.now();
      if (tx && sql.startsWith('COMMIT')) txs.delete(id), done.push({ ...tx, end: performance.now() });
      return r;
    });
  };

  const since = new Date();
  on = true;
  const load = await driver.load({ url: `${bench.url}/v0/calls`, body: bench.callBodies, concurrency: 64, warmupMs: 0, durationMs: seconds * 1000 });
  on = false;
  console.log(`\n${seconds} s at 64 clients: ${((load.ok * 1000) / load.elapsedMs).toFixed(1)} calls/s, client latency ${stats(load.latencies)}`);
  console.log(`\nPostgres pool (10 connections): wait for a connection, per query\n  ${stats(poolWaits)}`);
  for (const kind of ['reserve', 'settle'] as const) {
    const mine = done.filter((t) => t.kind === kind && t.lockAsked !== undefined && t.lockGot !== undefined);
    console.log(`\n${kind} transaction (${(mine.reduce((a, t) => a + t.statements, 0) / Math.max(1, mine.length)).toFixed(0)} statements incl. BEGIN/COMMIT)`);
    const counts = new Map<number, number>();
    for (const t of mine) counts.set(t.statements, (counts.get(t.statements) ?? 0) + 1);
    console.log(`  statements per transaction: ${[...counts].map(([k, v]) => `${k}×${v}`).join(', ')}`);
    console.log(`  BEGIN → COMMIT done           ${stats(mine.map((t) => t.end - t.begin))}`);
    console.log(`  waiting for the mandate lock  ${stats(mine.map((t) => t.lockGot! - t.lockAsked!))}`);
    console.log(`  holding it (lock → commit)    ${stats(mine.map((t) => t.end - t.lockGot!))}`);
  }
  const rows = (await knex.raw(
    `SELECT extract(epoch FROM c.started_at - c.created_at) * 1000 AS queued,
            extract(epoch FROM c.finished_at - c.started_at) * 1000 AS running,
            extract(epoch FROM c.settle_enqueued_at - c.finished_at) * 1000 AS to_settle_queue,
            extract(epoch FROM r.created_at - c.settle_enqueued_at) * 1000 AS settle_queued
       FROM calls c JOIN receipts r ON r.id = c.id WHERE c.created_at >= ?`,
    [since],
  )) as { rows: Array<Record<string, string>> };
  const col = (k: string) => rows.rows.map((r) => Number(r[k]));
  console.log('\nhand-offs, from the call rows (Postgres now() = start of each transaction):');
  console.log(`  reserve began → runner claimed the call        ${stats(col('queued'))}`);
  console.log(`  claimed → outcome written (agent run inside)   ${stats(col('running'))}`);
  console.log(`  outcome written → settle job queued             ${stats(col('to_settle_queue'))}`);
  console.log(`  settle job queued → settle transaction began   ${stats(col('settle_queued'))}`);
}
