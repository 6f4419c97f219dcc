/**
 * One process or five (docs/PERFORMANCE.md "Split processes"): the same load — synchronous paid calls from 64
 * clients to the no-op webhook agent, on one mandate — against `holon serve` as ONE OS process, and against
 * `holon api` ×N + `holon runner` ×N + `holon settler` (N = 2 by default: five processes; the clients spread over
 * the APIs). Both on the same Postgres database kind and Redis, both as child processes of this one (the agent and
 * the load run in this process's worker thread). Reports calls/s, p50/p99 and the CPU each process (and each role)
 * used per paid call, which says what limits each shape, with the CPU of the Postgres backends serving the run and
 * the transactions Postgres committed per paid call; then the books must be whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { openDatabase } from '../shared/db/connect.js';
import { audit } from '../shared/ledger/audit.js';
import { createCluster, REPO_ROOT } from '../tests/support/processes.js';
import { AGENT_ID, createDriver, noopManifest, postgresBackendPids, sumProcCpuMs } from './gateway.js';
import { keepAliveAgent, processCpuMs, quantile } from './load.js';
import { postgresDatabase, redisTarget, untilNoneOpen } from './support.js';

export interface SplitRow {
  shape: string;
  perS: number;
  p50: number;
  p99: number;
  errors: string;
  /** CPU ms per paid call, by process name. */
  cpuPerCall: Record<string, number>;
  /** CPU ms per paid call, by role (`serve`, `api`, `runner`, `settler`), summed over the role's processes. */
  cpuPerRole: Record<string, number>;
  /** CPU ms per paid call of the Postgres backends serving the run's database. */
  postgresCpuPerCall: number;
  /** Transactions committed in the run's database per paid call (pg_stat_database.xact_commit; a lone statement is one). */
  commitsPerCall: number;
  /** Paid calls the per-call figures divide by (warm-up included: see benchSplit). */
  paidCalls: number;
  audit: string;
}

export interface PostgresMeter {
  /** CPU ms used since the meter started by the backends serving the database now: read it before they end. */
  cpuMs(): Promise<number>;
  /**
   * Transactions committed in the database since the meter started, the meter's own excluded, read once every other
   * backend of the database has ended (a backend reports its counts when it ends, else when idle at most once a
   * second, then only after 10 s idle: PGSTAT_IDLE_INTERVAL) or after 11 s. Ends the meter.
   */
  commits(): Promise<number>;
}

/**
 * Meters the Postgres backends serving this database from now on, from a connection of its own: their CPU (from
 * /proc: Postgres on this machine) and the transactions committed (pg_stat_database.xact_commit; a lone statement is
 * one). The backends are those of pg_stat_activity at the start and when `cpuMs` is read (`postgresBackendPids`): one
 * born meanwhile counts all its CPU, one that ended before is not counted.
 */
export async function meterPostgres(databaseUrl: string): Promise<PostgresMeter> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  // The meter's own statements commit too: counted, to be taken off.
  let own = 0;
  const commits = async () => Number((await client.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0].xact_commit);
  const pids = () => (own++, postgresBackendPids(client));
  const commitsBefore = await commits();
  own++;
  const base = new Map((await pids()).map((pid) => [pid, sumProcCpuMs([pid])]));
  return {
    async cpuMs() {
      return (await pids()).reduce((a, pid) => a + sumProcCpuMs([pid]) - (base.get(pid) ?? 0), 0);
    },
    async commits() {
      const until = Date.now() + 11_000;
      while ((await pids()).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      // This connection's own counts, now (Postgres 15+; older: they may come later, and are few).
      own++;
      await client.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
      const committed = (await commits()) - commitsBefore - own;
      await client.end();
      return committed;
    },
  };
}

/** `holon serve` as a child process on a free-ish port, once /healthz answers (no mandate files, no agent host). */
export async function spawnServe(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = 18_700 + Math.floor(Math.random() * 200);
  const child = spawn(process.execPath, ['bin/holon.mjs', 'serve', '--port', String(port)], {
    cwd: REPO_ROOT,
    stdio: 'ignore',
    env: { ...process.env, NODE_ENV: 'test', HOLON_MANDATES: '', HOLON_AGENT_HOST: '0', ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child);
  return { child, url };
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`holon serve exited (${child.exitCode})`);
    try {
      const res = await request(`${url}/healthz`);
      await res.body.text();
      if (res.statusCode === 200) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('holon serve did not answer /healthz');
}

/** The bench mandate (`loadtester/bench`, 1,000,000 EUR); returns the body of one paid call to `agent`. */
export async function createMandate(apiUrl: string, agent = AGENT_ID): Promise<string> {
  const dispatcher = keepAliveAgent(1);
  const res = await request(`${apiUrl}/v0/mandates`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'loadtester/bench',
      issuer: 'loadtester',
      grantee: 'loadtester/client',
      allow: { agents: ['bench/*'] },
      budget: { total: '1000000.00', currency: 'EUR' },
    }),
  });
  const text = await res.body.text();
  await dispatcher.close();
  if (res.statusCode !== 201) throw new Error(`mandate refused (${res.statusCode}): ${text}`);
  return JSON.stringify({ mandate: 'loadtester/bench', agent, input: { n: 1 } });
}

export interface SplitOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Which shapes, in this order (default both): `serve` one process, `split` api ×N + runner ×N + settler. */
  shapes?: ReadonlyArray<'serve' | 'split'>;
  /** N: API and runner processes of the split shape (default 2). */
  perRole?: number;
}

export async function benchSplit(options: SplitOptions): Promise<SplitRow[]> {
  const rows: SplitRow[] = [];
  const n = options.perRole ?? 2;
  for (const kind of options.shapes ?? (['serve', 'split'] as const)) {
    const shape = kind === 'serve' ? 'holon serve (1 process)' : `api ×${n} + runner ×${n} + settler (${2 * n + 1} processes)`;
    const database = await postgresDatabase();
    const redis = await redisTarget();
    if (!database || !redis) throw new Error('the split bench needs Postgres and Redis (DATABASE_URL, REDIS_URL)');
    const driver = createDriver('worker');
    const registry = mkdtempSync(path.join(os.tmpdir(), 'holon-bench-split-'));
    const env = {
      HOLON_SIGNUP_CREDIT: '1000000',
      HOLON_RUNNER_CONCURRENCY: '128',
      HOLON_SETTLER_CONCURRENCY: '32',
      HOLON_EXCLUDE: '',
      LOG_LEVEL: 'warn',
    };
    const cluster = createCluster({ databaseUrl: database.url, redisUrl: redis.url, redisPrefix: redis.prefix, registry, env });
    const children: Array<{ name: string; role: string; pid: number }> = [];
    let serve: ChildProcess | undefined;
    let postgres: PostgresMeter | undefined;
    try {
      mkdirSync(path.join(registry, 'noop'));
      writeFileSync(path.join(registry, 'noop', 'holon.yaml'), noopManifest(await driver.startAgent()));
      let urls: string[];
      if (kind === 'serve') {
        const started = await spawnServe({
          ...env,
          DATABASE_URL: database.url,
          REDIS_URL: redis.url,
          HOLON_REDIS_PREFIX: redis.prefix,
          HOLON_REGISTRY: registry,
        });
        serve = started.child;
        urls = [started.url];
        children.push({ name: 'serve', role: 'serve', pid: serve.pid! });
      } else {
        const settler = await cluster.start('settler');
        const runners = [];
        for (let i = 0; i < n; i++) runners.push(await cluster.start('runner'));
        const apis = [];
        for (let i = 0; i < n; i++) apis.push(await cluster.start('api'));
        urls = apis.map((a) => a.url!);
        for (const [role, ps] of [
          ['api', apis],
          ['runner', runners],
          ['settler', [settler]],
        ] as const) {
          for (const p of ps) children.push({ name: p.name, role, pid: p.pid });
        }
      }
      const body = await createMandate(urls[0]!);
      postgres = await meterPostgres(database.url);
      const before = children.map((c) => processCpuMs(c.pid));
      const load = await driver.load({
        url: urls.map((u) => `${u}/v0/calls`),
        body,
        concurrency: options.concurrency,
        warmupMs: options.warmupMs,
        durationMs: options.durationMs,
      });
      // CPU over warm-up + measured window, per call completed in that whole time (200s only).
      const calls = load.ok * ((options.warmupMs + options.durationMs) / options.durationMs);
      const cpuPerCall = Object.fromEntries(children.map((c, i) => [c.name, (processCpuMs(c.pid) - before[i]!) / calls]));
      const cpuPerRole: Record<string, number> = {};
      children.forEach((c) => {
        cpuPerRole[c.role] = (cpuPerRole[c.role] ?? 0) + cpuPerCall[c.name]!;
      });
      const postgresCpuMs = await postgres.cpuMs();
      const db = await openDatabase({ url: database.url, migrate: false });
      try {
        await untilNoneOpen(db.knex);
        const report = await audit(db.knex);
        const errors = Object.entries(load.byStatus)
          .filter(([s]) => s !== '200')
          .map(([s, n]) => `${s}×${n}`)
          .join(' ');
        rows.push({
          shape,
          perS: (load.ok * 1000) / load.elapsedMs,
          p50: quantile(load.latencies, 0.5),
          p99: quantile(load.latencies, 0.99),
          errors: errors || 'none',
          cpuPerCall,
          cpuPerRole,
          postgresCpuPerCall: postgresCpuMs / calls,
          // Filled in once the processes have ended (below): their backends' counts are reported by then.
          commitsPerCall: Number.NaN,
          paidCalls: calls,
          audit: report.ok ? 'ok' : `FAILED: ${report.problems.slice(0, 2).join('; ')}`,
        });
      } finally {
        await db.close();
      }
    } finally {
      if (serve && serve.exitCode === null) {
        serve.kill('SIGTERM');
        await new Promise((r) => serve!.once('exit', r));
      }
      await cluster.stopAll();
      const row = rows.find((r) => r.shape === shape);
      const committed = await postgres?.commits().catch(() => undefined);
      if (row && committed !== undefined) row.commitsPerCall = committed / row.paidCalls;
      await driver.close();
      rmSync(registry, { recursive: true, force: true });
      await database.drop();
      await redis.cleanup();
    }
  }
  return rows;
}
