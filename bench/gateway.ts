/**
 * The gateway bench: the whole gateway in this process (api + runner + settler) on real Postgres and Redis,
 * a no-op webhook agent on loopback, and synchronous `POST /v0/calls` as fast as 64 clients can send them.
 *
 * The agent and the load generator run in a worker thread (bench/load-worker.ts) by default, so that the
 * gateway's event loop carries the gateway's work only (as it would with remote clients and agents); the
 * machine's two cores are still shared by everything, Postgres and Redis included.
 * BENCH_GATEWAY_DRIVER=inline runs them on the gateway's own event loop instead.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Redis } from 'ioredis';
import pg from 'pg';
import { request } from 'undici';
import { startGateway, type RunningGateway } from '../services/compose.js';
import { audit } from '../shared/ledger/audit.js';
import { startBareProxy } from './bare-proxy.js';
import { keepAliveAgent, quantile, runLoad, runSequential, startNoopAgent, type LatencySpec, type LoadResult, type LoadSpec, type NoopAgent } from './load.js';
import { openCalls, type ThrowAwayDatabase, type ThrowAwayRedis } from './support.js';

// ---------------------------------------------------------------------------------------------------------
// Driver: where the agent and the client run.

export interface Driver {
  readonly kind: 'worker' | 'inline';
  startAgent(): Promise<number>;
  agentServed(): Promise<number>;
  /** CPU ms used so far by the thread running the client and the agent (NaN inline: it is the gateway's). */
  threadCpuMs(): Promise<number>;
  load(spec: LoadSpec): Promise<LoadResult>;
  sequential(spec: LatencySpec): Promise<{ latencies: number[]; errors: Record<string, number> }>;
  close(): Promise<void>;
}

function workerDriver(): Driver {
  // The worker loads TypeScript through tsx, as this process does.
  const entry = new URL('./load-worker.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  const worker = new Worker(boot, { eval: true });
  let next = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) p.reject(new Error(m.error));
    else p.resolve(m.result);
  });
  worker.on('error', (err) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  const call = <T>(op: string, args?: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, op, args });
    });
  return {
    kind: 'worker',
    startAgent: async () => (await call<{ port: number }>('startAgent')).port,
    agentServed: () => call<number>('agentServed'),
    threadCpuMs: () => call<number>('cpu'),
    load: (spec) => call<LoadResult>('load', spec),
    sequential: (spec) => call('sequential', spec),
    close: async () => {
      await call('stopAgent').catch(() => undefined);
      await worker.terminate();
    },
  };
}

function inlineDriver(): Driver {
  let agent: NoopAgent | undefined;
  return {
    kind: 'inline',
    startAgent: async () => (agent ??= await startNoopAgent()).port,
    agentServed: async () => agent?.served() ?? 0,
    threadCpuMs: async () => Number.NaN,
    load: runLoad,
    sequential: runSequential,
    close: async () => {
      await agent?.close();
    },
  };
}

export function createDriver(kind: string | undefined): Driver {
  return kind === 'inline' ? inlineDriver() : workerDriver();
}

// ---------------------------------------------------------------------------------------------------------
// A running bench gateway: agent, manifest, gateway, mandate.

export const AGENT_ID = 'bench/noop';
const issuerOf = (i: number) => (i === 0 ? 'loadtester' : `loadtester${i}`);
const mandateId = (i: number) => `${issuerOf(i)}/bench`;

export function noopManifest(port: number): string {
  return [
    '# A no-op webhook agent for the gateway bench (written by bench/gateway.ts).',
    `id: ${AGENT_ID}`,
    'version: 1.0.0',
    'summary: Answers {"ok":true} to everything, for measuring the gateway itself',
    'capabilities: [test.noop]',
    'license: MIT',
    'interface:',
    '  input: { type: object }',
    '  output: { type: object }',
    'pricing:',
    '  model: per_run',
    '  currency: EUR',
    '  amount: "0.000001"',
    'runtime:',
    '  kind: webhook',
    `  endpoint: http://127.0.0.1:${port}/`,
    '  limits: { timeout_s: 10 }',
    '',
  ].join('\n');
}

export interface BenchGatewayOptions {
  database: ThrowAwayDatabase;
  redis: ThrowAwayRedis;
  driver: Driver;
  runnerConcurrency: number;
  settlerConcurrency: number;
  logLevel?: string;
  /** Mandates to spread the calls over, each with its own payer (default 1: every call on one mandate). */
  mandates?: number;
  /**
   * Experiment only: resize the gateway's Postgres pool after start (the product fixes it at 10; Config has
   * no field for it). Undefined = leave it.
   */
  poolMax?: number;
}

export interface BenchGateway {
  gw: RunningGateway;
  /** http://127.0.0.1:<gateway port> */
  url: string;
  agentUrl: string;
  /** The body of one paid call (on the first mandate). */
  callBody: string;
  /** One body per mandate. */
  callBodies: string[];
  /** The body the agent receives (the call's input). */
  agentBody: string;
  stop(): Promise<void>;
}

export async function startBenchGateway(o: BenchGatewayOptions): Promise<BenchGateway> {
  const agentPort = await o.driver.startAgent();
  const registry = mkdtempSync(path.join(os.tmpdir(), 'holon-bench-registry-'));
  mkdirSync(path.join(registry, 'noop'));
  writeFileSync(path.join(registry, 'noop', 'holon.yaml'), noopManifest(agentPort));
  let gw: RunningGateway;
  try {
    gw = await startGateway(['api', 'runner', 'settler'], {
      port: 0,
      databaseUrl: o.database.url,
      redisUrl: o.redis.url,
      redisPrefix: o.redis.prefix,
      registryDirs: [registry],
      registryExplicit: true,
      exclude: [],
      signupCredit: 1_000_000_000_000n, // 1,000,000 EUR of demo credit for the payer
      runnerConcurrency: o.runnerConcurrency,
      settlerConcurrency: o.settlerConcurrency,
      logLevel: o.logLevel ?? 'warn',
    });
  } catch (e) {
    rmSync(registry, { recursive: true, force: true });
    throw e;
  }
  const url = `http://127.0.0.1:${gw.port}`;
  const stop = async () => {
    await gw.stop();
    rmSync(registry, { recursive: true, force: true });
  };
  try {
    if (!gw.context.registry.get(AGENT_ID, '1.0.0')) throw new Error(`the bench agent ${AGENT_ID} was not loaded from ${registry}`);
    if (o.poolMax !== undefined) (gw.db.knex.client as { pool: { max: number } }).pool.max = o.poolMax;
    const dispatcher = keepAliveAgent(1);
    for (let i = 0; i < (o.mandates ?? 1); i++) {
      const res = await request(`${url}/v0/mandates`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: mandateId(i),
          issuer: issuerOf(i),
          grantee: `${issuerOf(i)}/client`,
          allow: { agents: ['bench/*'] },
          budget: { total: '1000000.00', currency: 'EUR' },
        }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`mandate refused (${res.statusCode}): ${text}`);
    }
    await dispatcher.close();
  } catch (e) {
    await stop();
    throw e;
  }
  const input = { n: 1 };
  const callBodies = Array.from({ length: o.mandates ?? 1 }, (_, i) => JSON.stringify({ mandate: mandateId(i), agent: AGENT_ID, input }));
  return {
    gw,
    url,
    agentUrl: `http://127.0.0.1:${agentPort}/`,
    callBody: callBodies[0]!,
    callBodies,
    agentBody: JSON.stringify(input),
    stop,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The measurements.

export interface GatewayBenchOptions {
  runnerConcurrency: number;
  settlerConcurrency: number;
  /** Clients in the sustained phase. */
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  latencyWarmup: number;
  /** Sequential calls through the gateway (the direct calls get 4×). */
  latencySamples: number;
  driver: string | undefined;
  /** Experiments: calls spread over this many mandates/payers (default 1). */
  mandates: number;
  /** Experiments: the gateway's Postgres pool resized to this (the product's is 10). */
  poolMax: number | undefined;
}

const DEFAULT_GATEWAY_OPTIONS: GatewayBenchOptions = {
  runnerConcurrency: envInt('BENCH_GATEWAY_RUNNERS', 64),
  settlerConcurrency: envInt('BENCH_GATEWAY_SETTLERS', 32),
  concurrency: envInt('BENCH_GATEWAY_CONCURRENCY', 64),
  warmupMs: envInt('BENCH_GATEWAY_WARMUP_MS', 3_000),
  durationMs: envInt('BENCH_GATEWAY_DURATION_S', 20) * 1000,
  latencyWarmup: 100,
  latencySamples: envInt('BENCH_GATEWAY_LATENCY_SAMPLES', 500),
  driver: process.env.BENCH_GATEWAY_DRIVER,
  mandates: envInt('BENCH_GATEWAY_MANDATES', 1),
  poolMax: process.env.BENCH_GATEWAY_POOL ? envInt('BENCH_GATEWAY_POOL', 10) : undefined,
};

const TARGET_CALLS_PER_S = 800;
const TARGET_ADDED_P50_MS = 3;
const TARGET_ADDED_P99_MS = 8;
const TARGET_COMMITS_PER_CALL = 3;

export function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  return v && /^[0-9]+$/.test(v) ? Number(v) : fallback;
}

type Recorder = (name: string, value: number | string, unit?: string) => void;

/**
 * Runs the gateway bench and records its figures. `rawTxPerS` is the sequential raw Postgres write-transaction
 * rate measured earlier in the same run (rawPostgresCeiling), for the ratio.
 */
export async function gatewayBench(
  env: { database: ThrowAwayDatabase; redis: ThrowAwayRedis },
  rawTxPerS: number | undefined,
  record: Recorder,
  options: GatewayBenchOptions = DEFAULT_GATEWAY_OPTIONS,
): Promise<void> {
  const driver = createDriver(options.driver);
  let bench: BenchGateway | undefined;
  // Anything else busy on this two-core machine (a test run, a compiler) shows here and skews every figure.
  record('load average (1 min) before the section', os.loadavg()[0]!);
  try {
    bench = await startBenchGateway({
      ...env,
      driver,
      runnerConcurrency: options.runnerConcurrency,
      settlerConcurrency: options.settlerConcurrency,
      mandates: options.mandates,
      poolMax: options.poolMax,
    });
    const poolMax = (bench.gw.db.knex.client as { pool: { max: number } }).pool.max;
    record(
      'setup',
      `runner concurrency ${options.runnerConcurrency}, settler concurrency ${options.settlerConcurrency}, ${options.concurrency} clients, ` +
        `${options.mandates} mandate${options.mandates === 1 ? '' : 's'}, Postgres pool ${poolMax}${options.poolMax === undefined ? ' (HOLON_DB_POOL, the default)' : ' (resized for an experiment)'}, ` +
        `agent + client in ${driver.kind === 'worker' ? 'a worker thread' : 'the gateway thread'}`,
    );

    // (2) latency at concurrency 1: the agent directly, then the same agent through the gateway.
    const direct = await driver.sequential({ url: bench.agentUrl, body: bench.agentBody, warmup: options.latencyWarmup, samples: options.latencySamples * 4 });
    const quiet = await startProbe(bench, driver, env.database.url, 0, 'c1');
    const through = await driver.sequential({
      url: `${bench.url}/v0/calls`,
      body: bench.callBody,
      warmup: options.latencyWarmup,
      samples: options.latencySamples,
    });
    const seenQuiet = await quiet.stop();
    const d50 = quantile(direct.latencies, 0.5);
    const d99 = quantile(direct.latencies, 0.99);
    const g50 = quantile(through.latencies, 0.5);
    const g99 = quantile(through.latencies, 0.99);
    record('c=1 agent directly p50', d50, 'ms');
    record('c=1 agent directly p99', d99, 'ms');
    record('c=1 through the gateway p50', g50, 'ms');
    record('c=1 through the gateway p99', g99, 'ms');
    record('c=1 added by the gateway p50', g50 - d50, 'ms');
    record('c=1 added by the gateway p99', g99 - d99, 'ms');
    record('c=1 calls measured (200s)', through.latencies.length);
    record('c=1 errors by status', describeStatuses(through.errors));
    record('c=1 CPU per paid call: gateway thread', seenQuiet.cpuPerCall.gatewayThread, 'ms');
    record('c=1 CPU per paid call: client + agent thread', seenQuiet.cpuPerCall.clientAgentThread, 'ms');
    record('c=1 CPU per paid call: other threads of the process (GC, libuv)', seenQuiet.cpuPerCall.otherThreads, 'ms');
    record('c=1 CPU per paid call: Postgres backends', seenQuiet.cpuPerCall.postgres, 'ms');
    record('c=1 CPU per paid call: Redis (whole server)', seenQuiet.cpuPerCall.redis, 'ms');
    record('c=1 Postgres transactions committed per paid call (a lone statement is one)', seenQuiet.commitsPerCall);

    // (1) sustained paid calls/s at `concurrency`, with what the gateway process and Postgres looked like meanwhile.
    const servedBefore = await driver.agentServed();
    const probe = await startProbe(bench, driver, env.database.url, options.warmupMs, 'load');
    const load = await driver.load({
      url: `${bench.url}/v0/calls`,
      body: bench.callBodies,
      concurrency: options.concurrency,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
    });
    const seen = await probe.stop();
    const servedDuring = (await driver.agentServed()) - servedBefore;
    const callsPerS = (load.ok * 1000) / load.elapsedMs;
    const errors = Object.fromEntries(Object.entries(load.byStatus).filter(([s]) => s !== '200'));
    record(`sustained paid calls/s, c=${options.concurrency}, ${options.durationMs / 1000} s`, callsPerS, '/s');
    record('sustained calls answered 200', load.ok);
    record('sustained errors by status', describeStatuses(errors));
    record(`sustained latency p50, c=${options.concurrency}`, quantile(load.latencies, 0.5), 'ms');
    record(`sustained latency p99, c=${options.concurrency}`, quantile(load.latencies, 0.99), 'ms');
    record('agent invocations during the sustained phase (incl. warm-up)', servedDuring);
    if (load.sampleErrors.length) for (const e of load.sampleErrors) console.log(`    e.g. ${e}`);
    record('gateway thread busy (event-loop utilisation)', seen.elu * 100, '%');
    record('gateway thread event-loop delay p50', seen.loopDelayP50Ms, 'ms');
    record('gateway thread event-loop delay p99', seen.loopDelayP99Ms, 'ms');
    record('bench process CPU (all threads) per wall second', seen.cpuPerWall, 'cores');
    record('CPU per paid call: gateway thread', seen.cpuPerCall.gatewayThread, 'ms');
    record('CPU per paid call: client + agent thread', seen.cpuPerCall.clientAgentThread, 'ms');
    record('CPU per paid call: other threads of the process (GC, libuv)', seen.cpuPerCall.otherThreads, 'ms');
    record('CPU per paid call: Postgres backends', seen.cpuPerCall.postgres, 'ms');
    record('CPU per paid call: Redis (whole server)', seen.cpuPerCall.redis, 'ms');
    record('Postgres pool: connections in use (mean of samples)', seen.poolUsed);
    record('Postgres pool: queries waiting for a connection (mean)', seen.poolPending);
    record('Postgres backends waiting on a row lock (mean)', seen.lockWaits);
    record('Postgres backends active (mean)', seen.pgActive);
    record('Postgres transactions committed per paid call (a lone statement is one)', seen.commitsPerCall);

    // (1b) the floor: a bare Node proxy hop to the same agent, same load, on this thread.
    const proxy = await startBareProxy(bench.agentUrl);
    try {
      const hop = await driver.load({
        url: proxy.url,
        body: bench.agentBody,
        concurrency: options.concurrency,
        warmupMs: options.warmupMs,
        durationMs: Math.min(options.durationMs, 10_000),
      });
      const hopPerS = (hop.ok * 1000) / hop.elapsedMs;
      record(`bare Node proxy hop req/s, c=${options.concurrency} (the floor)`, hopPerS, '/s');
      record(`bare Node proxy hop latency p50, c=${options.concurrency}`, quantile(hop.latencies, 0.5), 'ms');
      record('paid calls/s ÷ proxy req/s', callsPerS / hopPerS);
    } finally {
      await proxy.close();
    }

    // (3) against the raw Postgres write-transaction ceiling of this run.
    if (rawTxPerS !== undefined) {
      record('raw Postgres write transactions/s (same run)', rawTxPerS, '/s');
      record('calls/s ÷ raw Postgres tx/s', callsPerS / rawTxPerS);
    }
    record(`target ≥ ${TARGET_CALLS_PER_S} calls/s at c=64`, callsPerS >= TARGET_CALLS_PER_S ? 'met' : 'NOT met');
    record(`target ≤ ${TARGET_ADDED_P50_MS} ms added p50`, g50 - d50 <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met');
    record(`target ≤ ${TARGET_ADDED_P99_MS} ms added p99`, g99 - d99 <= TARGET_ADDED_P99_MS ? 'met' : 'NOT met');
    record(
      `target ≤ ${TARGET_COMMITS_PER_CALL} Postgres transactions per paid call under load`,
      seen.commitsPerCall <= TARGET_COMMITS_PER_CALL ? 'met' : 'NOT met',
    );

    // Money is never lost under load: every call reached a final state and the ledger balances.
    const db = bench.gw.db.knex;
    record('calls not in a final state after the load', await openCalls(db));
    const report = await audit(db);
    record('ledger audit after the load', report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 3).join('; ')}`);
    record('load average (1 min) after the load', os.loadavg()[0]!);
  } finally {
    await bench?.stop();
    await driver.close();
  }
}

interface Seen {
  /** CPU ms per succeeded call: this (the gateway's) thread, the process's other threads, Postgres backends, Redis. */
  cpuPerCall: { gatewayThread: number; clientAgentThread: number; otherThreads: number; postgres: number; redis: number };
  elu: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  cpuMs: number;
  cpuPerWall: number;
  paidCalls: number;
  poolUsed: number;
  poolPending: number;
  lockWaits: number;
  pgActive: number;
  commitsPerCall: number;
}

/**
 * Watches the measured window (after the warm-up): event-loop utilisation and delay of this (the gateway's)
 * thread, process CPU, the knex pool, and Postgres backends waiting on locks (pg_stat_activity, every 200 ms
 * from a connection of its own), plus transactions committed in the bench database per succeeded call.
 */
async function startProbe(
  bench: BenchGateway,
  driver: Driver,
  databaseUrl: string,
  warmupMs: number,
  phase: 'c1' | 'load',
): Promise<{ stop(): Promise<Seen> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const pool = (bench.gw.db.knex.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
  const db = bench.gw.db.knex;
  const succeeded = async () => Number((await db('receipts').where({ status: 'succeeded' }).count<{ count: string }[]>('* as count'))[0]!.count);
  const commits = async () => Number((await client.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0].xact_commit);
  let measuring = false;
  const redis = new Redis(bench.gw.config.redisUrl!, { maxRetriesPerRequest: 2 });
  const redisCpuMs = async () => {
    const info = await redis.info('cpu');
    const v = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 'NaN');
    return (v('used_cpu_user') + v('used_cpu_sys')) * 1000;
  };
  const backendPids = () => postgresBackendPids(client);
  let base:
    | {
        elu: ReturnType<typeof performance.eventLoopUtilization>;
        cpu: NodeJS.CpuUsage;
        thread: number;
        driverThread: number;
        pgPids: number[];
        pg: number;
        redis: number;
        t: number;
        calls: number;
        commits: number;
      }
    | undefined;
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const samples: Array<{ used: number; pending: number; locks: number; active: number }> = [];
  let sampling: Promise<void> = Promise.resolve();
  const profileTo = process.env.BENCH_GATEWAY_CPU_PROFILE ? `${process.env.BENCH_GATEWAY_CPU_PROFILE}.${phase}.cpuprofile` : undefined;
  const session = profileTo ? new inspector.Session() : undefined;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session!.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
  const warm = setTimeout(() => {
    sampling = (async () => {
      if (session) {
        session.connect();
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: 200 });
        await post('Profiler.start');
      }
      const pgPids = await backendPids();
      base = {
        elu: performance.eventLoopUtilization(),
        cpu: process.cpuUsage(),
        thread: procCpuMs(`/proc/self/task/${process.pid}/stat`),
        driverThread: await driver.threadCpuMs(),
        pgPids,
        pg: sumProcCpuMs(pgPids),
        redis: await redisCpuMs(),
        t: performance.now(),
        calls: await succeeded(),
        commits: await commits(),
      };
      histogram.enable();
      measuring = true;
    })();
  }, warmupMs);
  const timer = setInterval(() => {
    if (!measuring) return;
    sampling = sampling.then(async () => {
      const r = await client.query(
        `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock') AS locks, count(*) FILTER (WHERE state = 'active') AS active
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      samples.push({ used: pool.numUsed(), pending: pool.numPendingAcquires(), locks: Number(r.rows[0].locks), active: Number(r.rows[0].active) });
    });
  }, 200);
  return {
    async stop() {
      clearTimeout(warm);
      clearInterval(timer);
      await sampling;
      measuring = false;
      histogram.disable();
      if (session && base) {
        const { profile } = (await post('Profiler.stop')) as { profile: unknown };
        writeFileSync(profileTo!, JSON.stringify(profile));
        session.disconnect();
        console.log(`    (CPU profile of the gateway thread, ${phase} phase: ${profileTo})`);
      }
      if (!base) throw new Error('the probe never started: the warm-up outlasted the load');
      const elu = performance.eventLoopUtilization(base.elu);
      const cpu = process.cpuUsage(base.cpu);
      const thread = procCpuMs(`/proc/self/task/${process.pid}/stat`) - base.thread;
      const driverThread = (await driver.threadCpuMs()) - base.driverThread;
      const pgCpu = sumProcCpuMs(base.pgPids) - base.pg;
      const redisCpu = (await redisCpuMs()) - base.redis;
      redis.disconnect();
      const wallMs = performance.now() - base.t;
      // Statistics reach pg_stat_database when a backend goes idle; give them a moment.
      await new Promise((r) => setTimeout(r, 700));
      const paidCalls = (await succeeded()) - base.calls;
      const committed = (await commits()) - base.commits;
      await client.end();
      const mean = (f: (s: (typeof samples)[number]) => number) => (samples.length ? samples.reduce((a, s) => a + f(s), 0) / samples.length : Number.NaN);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      const per = (ms: number) => ms / Math.max(1, paidCalls);
      return {
        cpuPerCall: {
          gatewayThread: per(thread),
          clientAgentThread: per(driverThread),
          otherThreads: per(cpuMs - thread - (Number.isNaN(driverThread) ? 0 : driverThread)),
          postgres: per(pgCpu),
          redis: per(redisCpu),
        },
        elu: elu.utilization,
        // The histogram holds whole timer intervals: the delay is what exceeds the resolution.
        loopDelayP50Ms: Math.max(0, histogram.percentile(50) / 1e6 - LOOP_RESOLUTION_MS),
        loopDelayP99Ms: Math.max(0, histogram.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
        cpuMs,
        cpuPerWall: cpuMs / wallMs,
        paidCalls,
        poolUsed: mean((s) => s.used),
        poolPending: mean((s) => s.pending),
        lockWaits: mean((s) => s.locks),
        pgActive: mean((s) => s.active),
        commitsPerCall: committed / Math.max(1, paidCalls),
      };
    },
  };
}

/** The Postgres backends serving `client`'s database, other than `client`'s own. */
export async function postgresBackendPids(client: pg.Client): Promise<number[]> {
  const r = await client.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  return r.rows.map((row) => Number(row.pid));
}

const TICK_MS = 10; // USER_HZ is 100 on Linux
const LOOP_RESOLUTION_MS = 5;

/** utime + stime of a /proc …/stat file, in ms; NaN where /proc is not there. */
function procCpuMs(file: string): number {
  try {
    const text = readFileSync(file, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** utime + stime (ms) of these processes, summed; a process that is gone counts 0. */
export function sumProcCpuMs(pids: number[]): number {
  return pids.reduce((a, pid) => {
    const v = procCpuMs(`/proc/${pid}/stat`);
    return Number.isNaN(v) ? a : a + v;
  }, 0);
}

export function describeStatuses(byStatus: Record<string, number>): string {
  const entries = Object.entries(byStatus);
  return entries.length === 0 ? 'none' : entries.map(([s, n]) => `${s}×${n}`).join(', ');
}
