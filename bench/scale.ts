/**
 * How cost grows with load, and what an operator sizes a deployment by (docs/PERFORMANCE.md "Scale table"):
 * `npm run bench:scale`. Parts, all by default, or those named in BENCH_SCALE_ONLY (comma-separated):
 *
 * - `table`: the gateway of the bench (api + runner + settler in one process, Postgres + Redis, the no-op webhook
 *   agent, the load from a worker thread) at 1, 16, 64 and 256 concurrent clients, on 1 mandate and on 64 (each with
 *   its own payer): sustained paid calls/s and latency p50/p99 over BENCH_SCALE_DURATION_S (default 10 s) after a
 *   2 s warm-up; after each configuration, every call must be final and the ledger audit clean. A Markdown table.
 * - `split`: `holon serve` as one process against api ×2 + runner ×2 + settler as five (bench/split.ts).
 * - `inflight`: memory with 1,000 calls in flight, and async latency under load (bench/inflight.ts).
 * - `roles`: the five-process shape of `split` at c=64 on one mandate; for each role (api, runner, settler) the CPU
 *   ms per paid call summed over its processes and the paid calls/s one core of that role carries (1000 ÷ ms), the
 *   same for the Postgres backends serving the run, and the transactions Postgres committed per paid call.
 * - `redis`: the one-process bench gateway at c=64: Redis commands per paid call (`INFO commandstats`: in all and
 *   the top 8), bytes in and out per paid call (`INFO stats`), Postgres transactions and backend CPU per paid call,
 *   the gateway process's CPU per paid call. The Redis figures are the whole server's: they include any other client
 *   of that Redis during the run.
 * - `postgres`: one Postgres primary without the gateway: pipelines each doing what one paid call costs Postgres on
 *   the hot path — the admission (`holon_admit_one`), the claim's and the close's UPDATEs (shared/calls/transitions.ts)
 *   through a pg pool, the settlement by the settle batcher (group commit of `settleBatch`) — at 8, 32 and 128
 *   concurrent pipelines; paid-call equivalents/s, Postgres CPU per call, where the rate flattens; then the ledger
 *   audit must be clean.
 *
 * The figures of the parts that ran go to bench/results.json, section `scale` (the other parts' figures there are
 * kept); BENCH_SCALE_NO_WRITE=1 writes nothing.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { CallOutcome } from '../shared/calls/call-outcome.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../shared/context.js';
import { openDatabase } from '../shared/db/connect.js';
import { audit } from '../shared/ledger/audit.js';
import { createMessaging } from '../shared/messaging/index.js';
import { createLogger } from '../shared/platform/log.js';
import { createRegistry } from '../shared/registry/registry.js';
import { createSettleBatcher } from '../shared/calls/settle/batcher.js';
import { row, world } from '../tests/support/admitted-calls.js';
import { createDriver, describeStatuses, startBenchGateway } from './gateway.js';
import { quantile } from './load.js';
import { benchInflight } from './inflight.js';
import { benchSplit, meterPostgres } from './split.js';
import { openCalls, postgresDatabase, readResultSection, redisTarget, untilNoneOpen, writeResultSections } from './support.js';
import { generateSigningKey } from '../shared/signing/keys.js';

const CONCURRENCY = [1, 16, 64, 256];
const MANDATES = [1, 64];
const durationMs = Number(process.env.BENCH_SCALE_DURATION_S ?? 10) * 1000;

const auditLine = (report: { ok: boolean; problems: string[] }): string => (report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 3).join('; ')}`);

interface Row {
  mandates: number;
  concurrency: number;
  perS: number;
  p50: number;
  p99: number;
  errors: string;
  loadBefore: number;
}

async function table() {
  const rows: Row[] = [];
  const checks: Array<{ mandates: number; notFinal: number; audit: string }> = [];
  for (const mandates of MANDATES) {
    const database = await postgresDatabase();
    const redis = await redisTarget();
    if (!database || !redis) throw new Error('bench:scale needs Postgres and Redis (DATABASE_URL, REDIS_URL)');
    const driver = createDriver(process.env.BENCH_GATEWAY_DRIVER);
    const bench = await startBenchGateway({ database, redis, driver, runnerConcurrency: 256, settlerConcurrency: 32, mandates });
    try {
      for (const concurrency of CONCURRENCY) {
        const loadBefore = os.loadavg()[0]!;
        const load = await driver.load({ url: `${bench.url}/v0/calls`, body: bench.callBodies, concurrency, warmupMs: 2_000, durationMs });
        const errors = Object.entries(load.byStatus)
          .filter(([s]) => s !== '200')
          .map(([s, n]) => `${s}×${n}`)
          .join(' ');
        rows.push({
          mandates,
          concurrency,
          perS: (load.ok * 1000) / load.elapsedMs,
          p50: quantile(load.latencies, 0.5),
          p99: quantile(load.latencies, 0.99),
          errors: errors || 'none',
          loadBefore,
        });
        const r = rows.at(-1)!;
        console.log(
          `  ${mandates} mandate(s), c=${concurrency}: ${r.perS.toFixed(1)} /s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, errors ${r.errors}`,
        );
      }
      // Let the last calls finish, then the books must be whole.
      const db = bench.gw.db.knex;
      const open = await untilNoneOpen(db);
      const report = await audit(db);
      checks.push({ mandates, notFinal: open, audit: auditLine(report) });
      console.log(`  ${mandates} mandate(s): calls not final ${open}, ledger audit ${auditLine(report)}`);
    } finally {
      await bench.stop();
      await driver.close();
      await database.drop();
      await redis.cleanup();
    }
  }
  console.log('\n| mandates | clients | paid calls/s | p50 ms | p99 ms | errors | load avg before |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.mandates} | ${r.concurrency} | ${r.perS.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${r.loadBefore.toFixed(2)} |`,
    );
  }
  return { rows, checks };
}

async function split() {
  console.log('\nOne process or five (c=64, 1 mandate, sync paid calls):');
  const rows = await benchSplit({ concurrency: 64, warmupMs: 2_000, durationMs });
  console.log('\n| shape | paid calls/s | p50 ms | p99 ms | errors | CPU ms per call, by process | audit |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const cpu = Object.entries(r.cpuPerCall)
      .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
      .join(', ');
    console.log(`| ${r.shape} | ${r.perS.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${cpu} | ${r.audit} |`);
  }
  return { rows };
}

async function inflight() {
  const r = await benchInflight({ inFlight: 1_000, asyncClients: 64, asyncDurationMs: durationMs });
  console.log(`\n${r.inFlight} calls in flight to a slow agent (holon serve, one process):`);
  console.log(`  gateway RSS idle ${r.rssIdleMiB.toFixed(1)} MiB, in flight ${r.rssInFlightMiB.toFixed(1)} MiB: ${r.rssPerCallKiB.toFixed(1)} KiB per call`);
  console.log(
    `  Redis under the run's prefix: idle ${(r.redisIdleBytes / 1024).toFixed(1)} KiB, in flight ${(r.redisInFlightBytes / 1024).toFixed(1)} KiB (${r.redisKeysInFlight} keys): ${r.redisPerCallBytes.toFixed(0)} bytes per call`,
  );
  console.log(`  all ${r.inFlight} released: every call ended in ${r.drainS.toFixed(1)} s`);
  const a = r.async;
  console.log(
    `  async at 64 clients: ${a.perS.toFixed(1)} calls/s; 202 → long-poll answer p50 ${a.pollP50.toFixed(1)} ms, p99 ${a.pollP99.toFixed(1)} ms; 202 → callback p50 ${a.callbackP50.toFixed(1)} ms, p99 ${a.callbackP99.toFixed(1)} ms (${a.callbacksMissing} missing)`,
  );
  console.log(`  ledger audit ${r.audit}`);
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// roles: calls/s per core of each role when split.

const ROLES = ['api', 'runner', 'settler'] as const;
const ROLES_CLIENTS = 64;

async function rolesPart() {
  console.log(`\nCalls/s per core of each role (api ×2 + runner ×2 + settler as child processes, c=${ROLES_CLIENTS}, 1 mandate, sync paid calls):`);
  const [r] = await benchSplit({ concurrency: ROLES_CLIENTS, warmupMs: 2_000, durationMs, shapes: ['split'] });
  if (!r) throw new Error('the split bench answered no row');
  const perCore = (ms: number) => 1000 / ms;
  console.log(
    `  ${r.shape}: ${r.perS.toFixed(1)} paid calls/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, errors ${r.errors}, ledger audit ${r.audit}`,
  );
  const roles: Record<string, { processes: number; cpuMsPerCall: number; callsPerSPerCore: number }> = {};
  for (const role of ROLES) {
    const cpu = r.cpuPerRole[role] ?? Number.NaN;
    roles[role] = {
      processes: Object.keys(r.cpuPerCall).filter((name) => name.startsWith(`${role}-`)).length,
      cpuMsPerCall: cpu,
      callsPerSPerCore: perCore(cpu),
    };
  }
  const postgres = { cpuMsPerCall: r.postgresCpuPerCall, callsPerSPerCore: perCore(r.postgresCpuPerCall), commitsPerCall: r.commitsPerCall };
  console.log('\n| role | processes | CPU ms per paid call (all its processes) | paid calls/s one core carries |');
  console.log('|---|---|---|---|');
  for (const [role, f] of Object.entries(roles)) {
    console.log(`| ${role} | ${f.processes} | ${f.cpuMsPerCall.toFixed(2)} | ${f.callsPerSPerCore.toFixed(0)} |`);
  }
  console.log(`| Postgres backends | - | ${postgres.cpuMsPerCall.toFixed(2)} | ${postgres.callsPerSPerCore.toFixed(0)} |`);
  console.log(`  Postgres transactions committed per paid call: ${postgres.commitsPerCall.toFixed(2)}`);
  console.log(`  (per paid call over the warm-up and the measured window: ${r.paidCalls.toFixed(0)} calls, the warm-up's estimated at the measured rate)`);
  return {
    shape: r.shape,
    concurrency: ROLES_CLIENTS,
    perS: r.perS,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    audit: r.audit,
    paidCalls: r.paidCalls,
    roles,
    postgres,
  };
}

// ---------------------------------------------------------------------------------------------------------
// redis: Redis commands and bytes per paid call, one process.

const REDIS_CLIENTS = 64;
const TOP_COMMANDS = 8;

interface RedisCounters {
  /** Calls so far, by command (`INFO commandstats`). */
  commands: Map<string, number>;
  netIn: number;
  netOut: number;
}

async function redisCounters(client: Redis): Promise<RedisCounters> {
  const commandstats = await client.info('commandstats');
  const commands = new Map<string, number>();
  for (const m of commandstats.matchAll(/^cmdstat_([^:]+):calls=([0-9]+)/gm)) commands.set(m[1]!, Number(m[2]));
  const stats = await client.info('stats');
  const v = (k: string) => Number(new RegExp(`^${k}:([0-9]+)`, 'm').exec(stats)?.[1] ?? 'NaN');
  return { commands, netIn: v('total_net_input_bytes'), netOut: v('total_net_output_bytes') };
}

async function redisPart() {
  const database = await postgresDatabase();
  const redis = await redisTarget();
  if (!database || !redis) throw new Error('bench:scale needs Postgres and Redis (DATABASE_URL, REDIS_URL)');
  const driver = createDriver(process.env.BENCH_GATEWAY_DRIVER);
  const info = new Redis(redis.url, { maxRetriesPerRequest: 2 });
  let bench: Awaited<ReturnType<typeof startBenchGateway>> | undefined;
  let postgres: Awaited<ReturnType<typeof meterPostgres>> | undefined;
  try {
    bench = await startBenchGateway({ database, redis, driver, runnerConcurrency: 256, settlerConcurrency: 32 });
    const db = bench.gw.db.knex;
    const succeeded = async () => Number((await db('receipts').where({ status: 'succeeded' }).count<{ count: string }[]>('* as count'))[0]!.count);
    // Per paid call over the whole load, warm-up included (every call of it counted: the receipts), until every call is final.
    const callsBefore = await succeeded();
    const redisBefore = await redisCounters(info);
    postgres = await meterPostgres(database.url);
    const cpuBefore = process.cpuUsage();
    const workerBefore = await driver.threadCpuMs();
    const load = await driver.load({ url: `${bench.url}/v0/calls`, body: bench.callBodies, concurrency: REDIS_CLIENTS, warmupMs: 2_000, durationMs });
    const notFinal = await untilNoneOpen(db);
    const cpu = process.cpuUsage(cpuBefore);
    const workerMs = (await driver.threadCpuMs()) - workerBefore;
    const redisAfter = await redisCounters(info);
    const postgresCpuMs = await postgres.cpuMs();
    const paid = (await succeeded()) - callsBefore;
    const report = await audit(db);
    // The gateway's backends report their commits when they end: stop it first.
    await bench.stop();
    bench = undefined;
    const committed = await postgres.commits();
    postgres = undefined;
    const per = (n: number) => n / Math.max(1, paid);
    const deltas = [...redisAfter.commands].map(([name, n]) => [name, n - (redisBefore.commands.get(name) ?? 0)] as const).filter(([, n]) => n > 0);
    deltas.sort((a, b) => b[1] - a[1]);
    const commands = deltas.reduce((a, [, n]) => a + n, 0);
    // The gateway is this process; the load and the agent run in its worker thread (inline: on the gateway's thread, not separable).
    const processMs = (cpu.user + cpu.system) / 1000;
    const gatewayMs = processMs - (Number.isNaN(workerMs) ? 0 : workerMs);
    const figures = {
      concurrency: REDIS_CLIENTS,
      perS: (load.ok * 1000) / load.elapsedMs,
      p50: quantile(load.latencies, 0.5),
      p99: quantile(load.latencies, 0.99),
      errors: describeStatuses(Object.fromEntries(Object.entries(load.byStatus).filter(([st]) => st !== '200'))),
      paidCalls: paid,
      notFinal,
      audit: auditLine(report),
      redisWholeServer: true,
      redisCommandsPerCall: per(commands),
      redisTopCommandsPerCall: Object.fromEntries(deltas.slice(0, TOP_COMMANDS).map(([name, n]) => [name, per(n)])),
      redisBytesInPerCall: per(redisAfter.netIn - redisBefore.netIn),
      redisBytesOutPerCall: per(redisAfter.netOut - redisBefore.netOut),
      postgresCommitsPerCall: per(committed),
      postgresCpuMsPerCall: per(postgresCpuMs),
      gatewayCpuMsPerCall: per(gatewayMs),
      loadWorkerCpuMsPerCall: per(workerMs),
      driver: driver.kind,
    };
    console.log(`\nRedis per paid call (the bench gateway in one process, c=${REDIS_CLIENTS}, 1 mandate, a 2 s warm-up + ${durationMs / 1000} s):`);
    console.log(
      `  ${figures.perS.toFixed(1)} paid calls/s, p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, errors ${figures.errors}; per paid call over ${paid} calls (warm-up included), not final ${notFinal}, ledger audit ${figures.audit}`,
    );
    console.log(
      `  Redis, the whole server (the figures include any other client of this Redis during the run): ${figures.redisCommandsPerCall.toFixed(2)} commands per paid call, ${figures.redisBytesInPerCall.toFixed(0)} bytes in, ${figures.redisBytesOutPerCall.toFixed(0)} bytes out`,
    );
    console.log(
      `  top ${TOP_COMMANDS} commands per paid call: ${Object.entries(figures.redisTopCommandsPerCall)
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(', ')}`,
    );
    console.log(
      `  Postgres: ${figures.postgresCommitsPerCall.toFixed(2)} transactions committed, backends ${figures.postgresCpuMsPerCall.toFixed(2)} CPU ms per paid call`,
    );
    console.log(
      `  gateway process: ${figures.gatewayCpuMsPerCall.toFixed(2)} CPU ms per paid call (${driver.kind === 'worker' ? `its threads but the load + agent worker's, which used ${figures.loadWorkerCpuMsPerCall.toFixed(2)}` : 'the load and the agent included: inline driver'})`,
    );
    return figures;
  } finally {
    info.disconnect();
    await bench?.stop();
    await postgres?.commits().catch(() => undefined);
    await driver.close();
    await database.drop();
    await redis.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------------------
// postgres: where one Postgres primary saturates, driven directly with what a paid call costs it.

const PIPELINES = [8, 32, 128];
/** Connections of the pool the pipelines admit, claim and close through (the settle batcher has its own knex pool of 10). */
const PIPELINE_POOL_MAX = 32;
const PG_WARMUP_MS = 1_000;
const PG_PAYER = 'loadtester';
/** Reserved per call (micro-units), and charged: what a run of the no-op bench agent costs. */
const PG_WORST = 10n;
const PG_OUTCOME: CallOutcome = { kind: 'success', billed: true, own: '1', duration_ms: 1 };
/** The next level must add this much to the rate, else the rate has flattened. */
const FLAT_GAIN = 1.1;
// claimCall's and closeCallRow's UPDATEs (shared/calls/transitions.ts), with pg's placeholders.
const CLAIM_SQL = `UPDATE calls c SET status = 'running', started_at = now(), deadline_at = now() + make_interval(secs => c.timeout_ms / 1000.0)
  WHERE c.id = $1 AND c.status = 'queued'
 RETURNING c.agent_id, c.agent_version, c.root_id, c.payer, c.mandate_id, c.max_cost, c.timeout_ms`;
const CLOSE_SQL = `UPDATE calls SET status = 'settling', outcome = $1::jsonb, finished_at = now(), error_code = $2, settle_enqueued_at = now()
  WHERE id = $3 AND status = $4 RETURNING id`;

interface PipelineLevel {
  pipelines: number;
  connections: number;
  perS: number;
  p50: number;
  p99: number;
  failures: string;
  postgresCpuMsPerCall: number;
  postgresCores: number;
  postgresCommitsPerCall: number;
  benchProcessCpuMsPerCall: number;
  loadAvgBefore: number;
}

async function postgresPart() {
  const database = await postgresDatabase();
  if (!database) throw new Error('bench:scale needs Postgres (DATABASE_URL)');
  const messaging = await createMessaging();
  try {
    const setup = await openDatabase({ url: database.url });
    let mandateId: string;
    try {
      mandateId = await world({ ...setup, backend: 'postgres', url: database.url }, PG_PAYER, 1_000_000_000_000n, 1_000_000_000_000n);
    } finally {
      await setup.close();
    }
    console.log(
      `\nOne Postgres primary, driven directly (no gateway): per call holon_admit_one, the claim, the close, then settleBatch in the settler's group commit; 1 mandate; ${durationMs / 1000} s per level after ${PG_WARMUP_MS / 1000} s:`,
    );
    let seq = 0;
    const levels: PipelineLevel[] = [];
    for (const pipelines of PIPELINES) {
      const loadAvgBefore = os.loadavg()[0]!;
      const connections = Math.min(pipelines, PIPELINE_POOL_MAX);
      // Each level on pools of its own, metered from before they open until their backends have ended.
      const meter = await meterPostgres(database.url);
      const meterFrom = performance.now();
      const cpuBefore = process.cpuUsage();
      const pool = new pg.Pool({ connectionString: database.url, max: connections });
      const settleDb = await openDatabase({ url: database.url, migrate: false });
      const ctx: ServiceContext = {
        db: settleDb.knex,
        registry: createRegistry([]),
        messaging,
        log: createLogger('bench', 'silent'),
        settings: DEFAULT_SETTINGS,
        now: () => Date.now(),
        signingKey: generateSigningKey(),
      };
      // The settler's group commit of settleBatch, at the batch size the settler uses (services/settler/worker.ts).
      const settler = createSettleBatcher(ctx, { maxBatch: 64 });
      const paidCall = async (id: string) => {
        const admitted = await pool.query<{ outcome: string }>('SELECT holon_admit_one($1::jsonb) AS outcome', [
          JSON.stringify(row(id, mandateId, PG_PAYER, PG_WORST)),
        ]);
        if (admitted.rows[0]?.outcome !== 'reserved') throw new Error(`admission ${admitted.rows[0]?.outcome}`);
        if ((await pool.query(CLAIM_SQL, [id])).rowCount !== 1) throw new Error('claim found no queued call');
        if ((await pool.query(CLOSE_SQL, [JSON.stringify(PG_OUTCOME), null, id, 'running'])).rowCount !== 1) throw new Error('close found no running call');
        const settled = await settler.settle(id);
        if (settled !== 'settled') throw new Error(`settlement ${settled}`);
      };
      const measureFrom = performance.now() + PG_WARMUP_MS;
      const stopAt = measureFrom + durationMs;
      let done = 0;
      const latencies: number[] = [];
      const failures: Record<string, number> = {};
      const pipeline = async () => {
        while (performance.now() < stopAt) {
          const id = `bench-pg-${seq++}`;
          const start = performance.now();
          try {
            await paidCall(id);
          } catch (e) {
            const key = (e as Error).message.slice(0, 80);
            failures[key] = (failures[key] ?? 0) + 1;
            continue;
          }
          const end = performance.now();
          done++;
          if (start >= measureFrom && end <= stopAt) latencies.push(end - start);
        }
      };
      let postgresCpuMs: number;
      let wallMs: number;
      let cpu: NodeJS.CpuUsage;
      try {
        await Promise.all(Array.from({ length: pipelines }, pipeline));
        wallMs = performance.now() - meterFrom;
        cpu = process.cpuUsage(cpuBefore);
        postgresCpuMs = await meter.cpuMs();
      } finally {
        await pool.end();
        await settleDb.close();
      }
      const committed = await meter.commits();
      // Per call over the whole level (warm-up included: every call counted); the rate over the measured window.
      const per = (n: number) => n / Math.max(1, done);
      const level: PipelineLevel = {
        pipelines,
        connections,
        perS: (latencies.length * 1000) / durationMs,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        failures: describeStatuses(failures),
        postgresCpuMsPerCall: per(postgresCpuMs),
        postgresCores: postgresCpuMs / wallMs,
        postgresCommitsPerCall: per(committed),
        benchProcessCpuMsPerCall: per((cpu.user + cpu.system) / 1000),
        loadAvgBefore,
      };
      levels.push(level);
      console.log(
        `  ${pipelines} pipelines (${connections} connections + the settler's pool of 10): ${level.perS.toFixed(1)} paid-call equivalents/s, p50 ${level.p50.toFixed(1)} ms, p99 ${level.p99.toFixed(1)} ms; ` +
          `Postgres ${level.postgresCpuMsPerCall.toFixed(2)} CPU ms and ${level.postgresCommitsPerCall.toFixed(2)} commits per call, ${level.postgresCores.toFixed(2)} cores busy; ` +
          `this process ${level.benchProcessCpuMsPerCall.toFixed(2)} CPU ms per call; failures ${level.failures}; load avg before ${loadAvgBefore.toFixed(2)}`,
      );
    }
    const peak = levels.reduce((a, l) => (l.perS > a.perS ? l : a));
    const flat = levels.findIndex((l, i) => i + 1 < levels.length && levels[i + 1]!.perS < l.perS * FLAT_GAIN);
    const gain = (i: number) => {
      const pct = (levels[i + 1]!.perS / levels[i]!.perS - 1) * 100;
      return `${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(0)} %`;
    };
    const saturation =
      flat >= 0
        ? `flattens at ${levels[flat]!.pipelines} pipelines: ${levels[flat]!.perS.toFixed(0)} calls/s (${levels[flat + 1]!.pipelines} pipelines: ${gain(flat)})`
        : `still rising at ${levels.at(-1)!.pipelines} pipelines (${gain(levels.length - 2)} over ${levels.at(-2)!.pipelines}): not saturated at these concurrencies`;
    const check = await openDatabase({ url: database.url, migrate: false });
    let notFinal: number;
    let report: Awaited<ReturnType<typeof audit>>;
    try {
      notFinal = await openCalls(check.knex);
      report = await audit(check.knex);
    } finally {
      await check.close();
    }
    console.log(
      `  saturation: ${saturation}; peak ${peak.perS.toFixed(0)} calls/s at ${peak.pipelines} pipelines, Postgres backends on ${peak.postgresCores.toFixed(2)} of the machine's ${os.cpus().length} cores ` +
        '(shared with this process, which drives the load and runs the settlement code, and with anything else on the machine)',
    );
    console.log(`  calls not final ${notFinal}, ledger audit ${auditLine(report)}`);
    return { levels, saturation, peakPerS: peak.perS, peakPipelines: peak.pipelines, notFinal, audit: auditLine(report) };
  } finally {
    await messaging.close();
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------------------

const PARTS = { table, split, inflight, roles: rolesPart, redis: redisPart, postgres: postgresPart } as const;

console.log(`holon bench:scale — node ${process.version}, ${new Date().toISOString()}, ${os.cpus().length} cores`);
const only = process.env.BENCH_SCALE_ONLY?.split(',')
  .map((p) => p.trim())
  .filter(Boolean);
const unknown = only?.filter((p) => !(p in PARTS)) ?? [];
if (unknown.length) throw new Error(`BENCH_SCALE_ONLY: no part ${unknown.join(', ')} (the parts: ${Object.keys(PARTS).join(', ')})`);
const figures: Record<string, unknown> = {};
for (const [name, run] of Object.entries(PARTS)) {
  if (only?.length && !only.includes(name)) continue;
  const header = { at: new Date().toISOString(), cores: os.cpus().length, durationS: durationMs / 1000, loadAvgBefore: os.loadavg()[0]! };
  figures[name] = { ...header, ...(await run()) };
}
if (process.env.BENCH_SCALE_NO_WRITE === '1') console.log('\nBENCH_SCALE_NO_WRITE=1: bench/results.json not written');
else {
  writeResultSections({ scale: { ...readResultSection('scale'), ...figures } });
  console.log(`\nbench/results.json, section scale: ${Object.keys(figures).join(', ')} written (the other parts' figures kept)`);
}
