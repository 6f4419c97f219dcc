/**
 * The gateway bench: the whole gateway in this process (api + runner + settler) on real Postgres and Redis,
 * a no-op webhook agent on loopback, and synchronous `POST /v0/calls` as fast as 64 clients can send them.
 *
 * The agent and the load generator run in a worker thread (bench/load-worker.ts) by default, so that the
 * gateway's event loop carries the gateway's work only (as it would with remote clients and agents); the
 * machine's two cores are still shared by everything, Postgres and Redis included.
 * BENCH_GATEWAY_DRIVER=inline runs them on the gateway's own event loop instead.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { request } from 'undici';
import { startGateway, type RunningGateway } from '../services/gateway.js';
import { audit } from '../shared/ledger/audit.js';
import { keepAliveAgent, quantile, runLoad, runSequential, startNoopAgent, type LatencySpec, type LoadResult, type LoadSpec, type NoopAgent } from './load.js';
import type { ThrowAwayDatabase, ThrowAwayRedis } from './support.js';

// ---------------------------------------------------------------------------------------------------------
// Driver: where the agent and the client run.

export interface Driver {
  readonly kind: 'worker' | 'inline';
  startAgent(): Promise<number>;
  agentServed(): Promise<number>;
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
export const MANDATE_ID = 'loadtester/bench';

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
}

export interface BenchGateway {
  gw: RunningGateway;
  /** http://127.0.0.1:<gateway port> */
  url: string;
  agentUrl: string;
  /** The body of one paid call. */
  callBody: string;
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
    const dispatcher = keepAliveAgent(1);
    const res = await request(`${url}/v0/mandates`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: MANDATE_ID,
        issuer: 'loadtester',
        grantee: 'loadtester/client',
        allow: { agents: ['bench/*'] },
        budget: { total: '1000000.00', currency: 'EUR' },
      }),
    });
    const text = await res.body.text();
    await dispatcher.close();
    if (res.statusCode !== 201) throw new Error(`mandate refused (${res.statusCode}): ${text}`);
  } catch (e) {
    await stop();
    throw e;
  }
  const input = { n: 1 };
  return {
    gw,
    url,
    agentUrl: `http://127.0.0.1:${agentPort}/`,
    callBody: JSON.stringify({ mandate: MANDATE_ID, agent: AGENT_ID, input }),
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
}

export const DEFAULT_GATEWAY_OPTIONS: GatewayBenchOptions = {
  runnerConcurrency: envInt('BENCH_GATEWAY_RUNNERS', 64),
  settlerConcurrency: envInt('BENCH_GATEWAY_SETTLERS', 16),
  concurrency: envInt('BENCH_GATEWAY_CONCURRENCY', 64),
  warmupMs: envInt('BENCH_GATEWAY_WARMUP_MS', 3_000),
  durationMs: envInt('BENCH_GATEWAY_DURATION_S', 20) * 1000,
  latencyWarmup: 100,
  latencySamples: envInt('BENCH_GATEWAY_LATENCY_SAMPLES', 500),
  driver: process.env.BENCH_GATEWAY_DRIVER,
};

export const TARGET_CALLS_PER_S = 250;
export const TARGET_ADDED_P50_MS = 10;

function envInt(name: string, fallback: number): number {
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
    bench = await startBenchGateway({ ...env, driver, runnerConcurrency: options.runnerConcurrency, settlerConcurrency: options.settlerConcurrency });
    record('setup', `runner ${options.runnerConcurrency}, settler ${options.settlerConcurrency}, ${options.concurrency} clients, agent+client in ${driver.kind === 'worker' ? 'a worker thread' : 'the gateway thread'}, Postgres pool 10 (fixed)`);

    // (2) latency at concurrency 1: the agent directly, then the same agent through the gateway.
    const direct = await driver.sequential({ url: bench.agentUrl, body: bench.agentBody, warmup: options.latencyWarmup, samples: options.latencySamples * 4 });
    const through = await driver.sequential({ url: `${bench.url}/v0/calls`, body: bench.callBody, warmup: options.latencyWarmup, samples: options.latencySamples });
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

    // (1) sustained paid calls/s at `concurrency`.
    const servedBefore = await driver.agentServed();
    const load = await driver.load({
      url: `${bench.url}/v0/calls`,
      body: bench.callBody,
      concurrency: options.concurrency,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
    });
    const servedDuring = (await driver.agentServed()) - servedBefore;
    const callsPerS = (load.ok * 1000) / load.elapsedMs;
    const errors = Object.fromEntries(Object.entries(load.byStatus).filter(([s]) => s !== '200'));
    record(`sustained paid calls/s, c=${options.concurrency}, ${options.durationMs / 1000} s`, callsPerS, '/s');
    record(`sustained calls answered 200`, load.ok);
    record(`sustained errors by status`, describeStatuses(errors));
    record(`sustained latency p50, c=${options.concurrency}`, quantile(load.latencies, 0.5), 'ms');
    record(`sustained latency p99, c=${options.concurrency}`, quantile(load.latencies, 0.99), 'ms');
    record('agent invocations during the sustained phase (incl. warm-up)', servedDuring);
    if (load.sampleErrors.length) for (const e of load.sampleErrors) console.log(`    e.g. ${e}`);

    // (3) against the raw Postgres write-transaction ceiling of this run.
    if (rawTxPerS !== undefined) {
      record('raw Postgres write transactions/s (same run)', rawTxPerS, '/s');
      record('calls/s ÷ raw Postgres tx/s', callsPerS / rawTxPerS);
    }
    record(`target ≥ ${TARGET_CALLS_PER_S} calls/s at c=64`, callsPerS >= TARGET_CALLS_PER_S ? 'met' : 'NOT met');
    record(`target ≤ ${TARGET_ADDED_P50_MS} ms added p50`, g50 - d50 <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met');

    // Money is never lost under load: every call reached a final state and the ledger balances.
    const db = bench.gw.db.knex;
    const open = await db('calls').whereNotIn('status', ['succeeded', 'failed']).count<{ count: string }[]>('* as count');
    record('calls not in a final state after the load', Number(open[0]!.count));
    const report = await audit(db);
    record('ledger audit after the load', report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 3).join('; ')}`);
    record('load average (1 min) after the load', os.loadavg()[0]!);
  } finally {
    await bench?.stop();
    await driver.close();
  }
}

function describeStatuses(byStatus: Record<string, number>): string {
  const entries = Object.entries(byStatus);
  return entries.length === 0 ? 'none' : entries.map(([s, n]) => `${s}×${n}`).join(', ');
}
