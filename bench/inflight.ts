/**
 * Memory with calls in flight, and async latency under load (issue 14, docs/PERFORMANCE.md):
 *
 * - 1,000 async calls (`Prefer: respond-async`) to a slow webhook agent that holds every request until released,
 *   against `holon serve` as a child process (runner concurrency 1,000, so every call is `running`): the gateway
 *   process's RSS and the Redis memory under the run's key prefix (the sum of MEMORY USAGE of its keys), idle and
 *   with the 1,000 in flight, per in-flight call. Then the agent answers them all; every call must end and the
 *   books must be whole.
 * - Async latency at 64 clients: each client posts an async call with a `callback_url` on loopback and long-polls
 *   `GET /v0/calls/{id}?wait=30`; the time from the 202 to the long-poll's answer (the completion as a poller
 *   sees it) and to the callback's arrival (the completion as a webhook receiver sees it), p50/p99.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { openDatabase } from '../shared/db/connect.js';
import { audit } from '../shared/ledger/audit.js';
import { keepAliveAgent, quantile } from './load.js';
import { createMandate, spawnServe } from './split.js';
import { openCalls, postgresDatabase, redisTarget } from './support.js';

const SLOW_ID = 'bench/slow';

function slowManifest(port: number): string {
  return [
    `id: ${SLOW_ID}`,
    'version: 1.0.0',
    'summary: Holds every request until the bench releases it',
    'capabilities: [test.slow]',
    'license: MIT',
    'interface:',
    '  input: { type: object }',
    '  output: { type: object }',
    'pricing: { model: per_run, currency: EUR, amount: "0.000001" }',
    'runtime:',
    '  kind: webhook',
    `  endpoint: http://127.0.0.1:${port}/`,
    '  limits: { timeout_s: 120 }',
    '',
  ].join('\n');
}

/** A webhook agent that answers at once while `holding` is false, and otherwise keeps the request until release. */
async function startSlowAgent() {
  const held: http.ServerResponse[] = [];
  let holding = false;
  const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => (holding ? held.push(res) : answer(res)));
  });
  server.keepAliveTimeout = 120_000;
  server.maxConnections = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    held: () => held.length,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const res of held.splice(0)) answer(res);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Bytes Redis uses for the keys under `prefix:` (MEMORY USAGE of each, summed): this run's share, not the server's. */
async function redisBytes(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    for (const k of batch) {
      bytes += Number((await redis.memory('USAGE', k)) ?? 0);
      keys++;
    }
    cursor = next;
  } while (cursor !== '0');
  return { bytes, keys };
}

const until = async (what: string, ok: () => Promise<boolean> | boolean, timeoutMs = 120_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

export interface InflightReport {
  inFlight: number;
  rssIdleMiB: number;
  rssInFlightMiB: number;
  rssPerCallKiB: number;
  redisIdleBytes: number;
  redisInFlightBytes: number;
  redisPerCallBytes: number;
  redisKeysInFlight: number;
  drainS: number;
  async: { calls: number; perS: number; pollP50: number; pollP99: number; callbackP50: number; callbackP99: number; callbacksMissing: number };
  audit: string;
}

export async function benchInflight(options: { inFlight: number; asyncClients: number; asyncDurationMs: number }): Promise<InflightReport> {
  const database = await postgresDatabase();
  const redisTargetInfo = await redisTarget();
  if (!database || !redisTargetInfo) throw new Error('the in-flight bench needs Postgres and Redis (DATABASE_URL, REDIS_URL)');
  const agent = await startSlowAgent();
  const registry = mkdtempSync(path.join(os.tmpdir(), 'holon-bench-inflight-'));
  const redis = new Redis(redisTargetInfo.url, { maxRetriesPerRequest: 2 });
  const received = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const id = /"(r_[0-9a-z]+)"/.exec(text)?.[1];
      if (id && !received.has(id)) received.set(id, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const dispatcher = keepAliveAgent(256);
  let serve: Awaited<ReturnType<typeof spawnServe>> | undefined;
  try {
    mkdirSync(path.join(registry, 'slow'));
    writeFileSync(path.join(registry, 'slow', 'holon.yaml'), slowManifest(agent.port));
    serve = await spawnServe({
      DATABASE_URL: database.url,
      REDIS_URL: redisTargetInfo.url,
      HOLON_REDIS_PREFIX: redisTargetInfo.prefix,
      HOLON_REGISTRY: registry,
      HOLON_SIGNUP_CREDIT: '1000000',
      HOLON_RUNNER_CONCURRENCY: '1000',
      HOLON_SETTLER_CONCURRENCY: '32',
      HOLON_EXCLUDE: '',
      LOG_LEVEL: 'warn',
    });
    const pid = serve.child.pid!;
    const body = await createMandate(serve.url, SLOW_ID);
    const post = async (b: string, headers: Record<string, string> = {}) => {
      const res = await request(`${serve!.url}/v0/calls`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', ...headers }, body: b });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    // Warm: a few hundred calls answered at once, then the idle figures.
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 20 }, () => post(body)));
    await new Promise((r) => setTimeout(r, 1_000));
    const rssIdle = rssMiB(pid);
    const redisIdle = await redisBytes(redis, redisTargetInfo.prefix);

    agent.hold();
    let submitted = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (submitted < options.inFlight) {
          submitted++;
          const r = await post(body, { prefer: 'respond-async' });
          if (r.status !== 202) throw new Error(`async call answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      }),
    );
    await until(`${options.inFlight} requests at the agent`, () => agent.held() >= options.inFlight);
    await new Promise((r) => setTimeout(r, 1_000));
    const rssInFlight = rssMiB(pid);
    const redisInFlight = await redisBytes(redis, redisTargetInfo.prefix);
    const drainStart = performance.now();
    agent.release();
    const db = await openDatabase({ url: database.url, migrate: false });
    try {
      await until('every call to end', async () => (await openCalls(db.knex)) === 0);
      const drainS = (performance.now() - drainStart) / 1000;

      // Async latency under load: 202 → long-poll answer, 202 → callback.
      const asyncBody = JSON.stringify({ ...JSON.parse(body), callback_url: callbackUrl });
      const poll: number[] = [];
      const accepted = new Map<string, number>();
      const stopAt = performance.now() + options.asyncDurationMs;
      await Promise.all(
        Array.from({ length: options.asyncClients }, async () => {
          while (performance.now() < stopAt) {
            const r = await post(asyncBody, { prefer: 'respond-async' });
            const t = performance.now();
            const id = String((r.body.call as { id?: string } | undefined)?.id ?? '');
            if (r.status !== 202 || !id) throw new Error(`async call answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
            accepted.set(id, t);
            const res = await request(`${serve!.url}/v0/calls/${id}?wait=30`, { dispatcher });
            await res.body.text();
            poll.push(performance.now() - t);
          }
        }),
      );
      await until('the callbacks', () => [...accepted.keys()].every((id) => received.has(id)), 30_000).catch(() => undefined);
      const callback = [...accepted].filter(([id]) => received.has(id)).map(([id, t]) => received.get(id)! - t);
      await until('every call to end', async () => (await openCalls(db.knex)) === 0);
      const report = await audit(db.knex);
      return {
        inFlight: options.inFlight,
        rssIdleMiB: rssIdle,
        rssInFlightMiB: rssInFlight,
        rssPerCallKiB: ((rssInFlight - rssIdle) * 1024) / options.inFlight,
        redisIdleBytes: redisIdle.bytes,
        redisInFlightBytes: redisInFlight.bytes,
        redisPerCallBytes: (redisInFlight.bytes - redisIdle.bytes) / options.inFlight,
        redisKeysInFlight: redisInFlight.keys,
        drainS,
        async: {
          calls: accepted.size,
          perS: (accepted.size * 1000) / options.asyncDurationMs,
          pollP50: quantile(poll, 0.5),
          pollP99: quantile(poll, 0.99),
          callbackP50: quantile(callback, 0.5),
          callbackP99: quantile(callback, 0.99),
          callbacksMissing: accepted.size - callback.length,
        },
        audit: report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 2).join('; ')}`,
      };
    } finally {
      await db.close();
    }
  } finally {
    agent.release();
    if (serve && serve.child.exitCode === null) {
      serve.child.kill('SIGTERM');
      await new Promise((r) => serve!.child.once('exit', r));
    }
    await dispatcher.close();
    redis.disconnect();
    receiver.close();
    await agent.close();
    rmSync(registry, { recursive: true, force: true });
    await database.drop();
    await redisTargetInfo.cleanup();
  }
}
