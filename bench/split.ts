/**
 * One process or five (issue 14, docs/PERFORMANCE.md "Split processes"): the same load — synchronous paid calls
 * from 64 clients to the no-op webhook agent, on one mandate — against `holon serve` as ONE OS process, and against
 * `holon api` ×2 + `holon runner` ×2 + `holon settler` as five (the clients spread over the two APIs). Both on the
 * same Postgres database kind and Redis, both as child processes of this one (the agent and the load run in this
 * process's worker thread). Reports calls/s, p50/p99 and the CPU each process used per paid call, which says what
 * limits each shape; then the books must be whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { openDatabase } from '../shared/db/connect.js';
import { audit } from '../shared/ledger/audit.js';
import { createCluster, REPO_ROOT } from '../tests/support/processes.js';
import { AGENT_ID, createDriver, noopManifest } from './gateway.js';
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
  audit: string;
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

export async function benchSplit(options: { concurrency: number; warmupMs: number; durationMs: number }): Promise<SplitRow[]> {
  const rows: SplitRow[] = [];
  for (const shape of ['holon serve (1 process)', 'api ×2 + runner ×2 + settler (5 processes)'] as const) {
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
    const children: Array<{ name: string; pid: number }> = [];
    let serve: ChildProcess | undefined;
    try {
      mkdirSync(path.join(registry, 'noop'));
      writeFileSync(path.join(registry, 'noop', 'holon.yaml'), noopManifest(await driver.startAgent()));
      let urls: string[];
      if (shape.startsWith('holon serve')) {
        const started = await spawnServe({
          ...env,
          DATABASE_URL: database.url,
          REDIS_URL: redis.url,
          HOLON_REDIS_PREFIX: redis.prefix,
          HOLON_REGISTRY: registry,
        });
        serve = started.child;
        urls = [started.url];
        children.push({ name: 'serve', pid: serve.pid! });
      } else {
        const settler = await cluster.start('settler');
        const runners = [await cluster.start('runner'), await cluster.start('runner')];
        const apis = [await cluster.start('api'), await cluster.start('api')];
        urls = apis.map((a) => a.url!);
        for (const p of [...apis, ...runners, settler]) children.push({ name: p.name, pid: p.pid });
      }
      const body = await createMandate(urls[0]!);
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
      await driver.close();
      rmSync(registry, { recursive: true, force: true });
      await database.drop();
      await redis.cleanup();
    }
  }
  return rows;
}
