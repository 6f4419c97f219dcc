/**
 * Where one call's time goes: a scratch profiler for docs/PERFORMANCE.md (not part of `npm run bench`).
 *
 *   node --import tsx bench/profile-call.ts [calls]
 *
 * Starts the same gateway as the bench (api + runner + settler, Postgres + Redis, no-op webhook agent), sends
 * calls one at a time, and records every SQL statement (knex query events) and every Redis command (ioredis
 * `sendCommand`, by connection) with timestamps. Prints the per-call counts and the timeline of one call.
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
import { keepAliveAgent } from './load.js';
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

const calls = Number(process.argv[2] ?? 200);
const database = await postgresDatabase();
const redis = await redisTarget();
if (!database || !redis) throw new Error('needs Postgres and Redis');
const driver = createDriver('inline');
const bench = await startBenchGateway({ database, redis, driver, runnerConcurrency: 64, settlerConcurrency: 16 });
const knex = bench.gw.db.knex;
const started = new Map<string, number>();
knex.on('query', (q: { sql: string; __knexQueryUid: string }) => {
  if (!tracing) return;
  started.set(q.__knexQueryUid, performance.now());
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
  console.log(`\n${calls} sequential calls: p50 ${perCall[Math.floor(calls / 2)]!.toFixed(2)} ms, mean ${(perCall.reduce((a, b) => a + b, 0) / calls).toFixed(2)} ms`);

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

  // The timeline of the median call.
  const median = perCallEvents[Math.floor(calls / 2)]!;
  const t0 = median[0]!.t;
  console.log('\ntimeline of one call (ms since the client sent it):');
  let last = t0;
  for (const e of median) {
    if (e.kind === 'sql-done' || e.kind === 'redis-done') continue;
    const gap = e.t - last;
    last = e.t;
    console.log(`  ${(e.t - t0).toFixed(2).padStart(8)}  (+${gap.toFixed(2).padStart(6)})  ${e.kind.padEnd(5)} ${e.conn ? e.conn.padEnd(9) + ' ' : ''}${e.what}`);
  }
} finally {
  await dispatcher.close();
  await bench.stop();
  await driver.close();
  await database.drop();
  await redis.cleanup();
}
