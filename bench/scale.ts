/**
 * How cost grows with load (issue 14, docs/PERFORMANCE.md "Scale table"): `npm run bench:scale`. The gateway of the
 * bench (api + runner + settler in one process, Postgres + Redis, the no-op webhook agent, the load from a worker
 * thread) at 1, 16, 64 and 256 concurrent clients, on 1 mandate and on 64 (each with its own payer): sustained paid
 * calls/s and latency p50/p99 over BENCH_SCALE_DURATION_S (default 10 s) after a 2 s warm-up; after each
 * configuration, every call must be final and the ledger audit clean. Prints a table (Markdown); writes nothing.
 * Then `holon serve` as one process against api ×2 + runner ×2 + settler as five (bench/split.ts), and memory with
 * 1,000 calls in flight plus async latency under load (bench/inflight.ts). BENCH_SCALE_ONLY=table|split|inflight runs
 * one part.
 */
import os from 'node:os';
import { audit } from '../shared/ledger/audit.js';
import { createDriver, startBenchGateway } from './gateway.js';
import { quantile } from './load.js';
import { benchInflight } from './inflight.js';
import { benchSplit } from './split.js';
import { postgresDatabase, redisTarget, untilNoneOpen } from './support.js';

const CONCURRENCY = [1, 16, 64, 256];
const MANDATES = [1, 64];
const durationMs = Number(process.env.BENCH_SCALE_DURATION_S ?? 10) * 1000;

interface Row {
  mandates: number;
  concurrency: number;
  perS: number;
  p50: number;
  p99: number;
  errors: string;
  loadBefore: number;
}

async function table(): Promise<void> {
  const rows: Row[] = [];
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
      console.log(`  ${mandates} mandate(s): calls not final ${open}, ledger audit ${report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 3).join('; ')}`}`);
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
}

async function split(): Promise<void> {
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
}

async function inflight(): Promise<void> {
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
}

console.log(`holon bench:scale — node ${process.version}, ${new Date().toISOString()}, ${os.cpus().length} cores`);
const only = process.env.BENCH_SCALE_ONLY;
if (!only || only === 'table') await table();
if (!only || only === 'split') await split();
if (!only || only === 'inflight') await inflight();
