/**
 * `npm run bench:peer`: Holon side by side with a real stateless gateway, Portkey's open-source AI gateway
 * (`@portkey-ai/gateway`, pinned below), on the same no-op upstream with the same load generator.
 *
 * Holon is the gateway bench's (bench/gateway.ts: api + runner + settler in this process, a throw-away Postgres
 * database and Redis prefix, real paid calls `POST /v0/calls` on a mandate). Portkey runs as a child process on a
 * loopback port, routed to the same no-op agent with its custom-host headers (provider openai, a small
 * chat-completions body to /v1/chat/completions); the agent answers `{"ok":true}`, which Portkey passes through
 * with 200. The client and the upstream run in the gateway bench's worker thread for both.
 *
 * Phases: c=1 latency (sequential requests) straight to the upstream, through Holon and through Portkey; then
 * BENCH_PEER_ROUNDS (default 2) rounds at BENCH_PEER_CONCURRENCY clients (default 64), each Holon and Portkey
 * back to back, alternating which goes first, BENCH_PEER_WARMUP_S (3) of warm-up then BENCH_PEER_DURATION_S (10)
 * measured. Any answer other than 200, an open call or a ledger audit that is not clean fails the run. On a Postgres
 * without autovacuum (this machine's), Holon's database is vacuumed after each of its rounds, outside the windows.
 * The figures go to the `peer` section of bench/results.json (BENCH_PEER_NO_WRITE=1: nothing is written).
 *
 * Portkey is not a dependency of the project: it is installed on first use into HOLON_BENCH_CACHE, else
 * ~/.cache/holon-bench/portkey-gateway-<version>.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { audit } from '../shared/ledger/audit.js';
import { type BenchGateway, createDriver, describeStatuses, type Driver, envInt, startBenchGateway } from './gateway.js';
import { keepAliveAgent, type LoadResult, quantile } from './load.js';
import { autovacuumOff, postgresDatabase, redisTarget, untilNoneOpen, vacuumBetweenPhases, writeResultSections } from './support.js';

/** The newest release on npm (its package.json declares no engines; it runs on Node 20). */
const PORTKEY_VERSION = '1.15.2';
const PORTKEY_PACKAGE = '@portkey-ai/gateway';

const options = {
  concurrency: Math.max(1, envInt('BENCH_PEER_CONCURRENCY', 64)),
  warmupMs: envInt('BENCH_PEER_WARMUP_S', 3) * 1000,
  durationMs: Math.max(1, envInt('BENCH_PEER_DURATION_S', 10)) * 1000,
  rounds: Math.max(1, envInt('BENCH_PEER_ROUNDS', 2)),
  latencyWarmup: 100,
  latencySamples: Math.max(1, envInt('BENCH_PEER_LATENCY_SAMPLES', 300)),
  write: process.env.BENCH_PEER_NO_WRITE !== '1',
};

/** What Portkey forwards to the upstream: a minimal OpenAI chat completion. */
const CHAT_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });

// ---------------------------------------------------------------------------------------------------------
// Cleanup: everything started is stopped, in reverse order, on success, on error and on a signal.

const cleanups: Array<() => unknown> = [];
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const f of cleanups.reverse()) {
      try {
        await f();
      } catch (e) {
        console.error(`  cleanup: ${(e as Error).message}`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(1));
  });
}

// ---------------------------------------------------------------------------------------------------------
// Portkey: installed on demand outside the project, started as a child process.

function portkeyCacheDir(): string {
  return process.env.HOLON_BENCH_CACHE ?? path.join(os.homedir(), '.cache', 'holon-bench', `portkey-gateway-${PORTKEY_VERSION}`);
}

/** Installs the pinned Portkey into `dir` unless it is there; answers the package's directory and its start file. */
function ensurePortkey(dir: string): { packageDir: string; entry: string } {
  const packageDir = path.join(dir, 'node_modules', ...PORTKEY_PACKAGE.split('/'));
  const manifest = path.join(packageDir, 'package.json');
  if (!existsSync(manifest)) {
    mkdirSync(dir, { recursive: true });
    const spec = `${PORTKEY_PACKAGE}@${PORTKEY_VERSION}`;
    console.log(`installing ${spec} into ${dir} (once; not a dependency of the project)`);
    // cwd = the cache directory, so that no project .npmrc or package.json is involved.
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', spec], { cwd: dir, stdio: 'inherit' });
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: string | Record<string, string>; main?: string };
  if (pkg.version !== PORTKEY_VERSION) {
    throw new Error(`${manifest} is version ${pkg.version}, not ${PORTKEY_VERSION}: remove ${dir} or set HOLON_BENCH_CACHE to another directory`);
  }
  // `bin` is build/start-server.js: it parses --port=<n> and --headless, and serves on Node (@hono/node-server).
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (Object.values(pkg.bin ?? {})[0] ?? pkg.main);
  if (!bin) throw new Error(`${manifest} names no start file (bin, main)`);
  return { packageDir, entry: path.join(packageDir, bin) };
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Portkey {
  url: string;
  pid: number;
  command: string;
  stop(): Promise<void>;
}

let portkeyChild: ChildProcess | undefined;
// Last resort (process.exit, an uncaught error): the child never outlives the bench.
process.once('exit', () => portkeyChild?.kill('SIGKILL'));

async function startPortkey(packageDir: string, entry: string): Promise<Portkey> {
  const port = await freeLoopbackPort();
  const args = [entry, `--port=${port}`, '--headless'];
  // A clean environment: NODE_ENV=production leaves out the log-stream UI; no Redis (REDIS_CONNECTION_STRING), no proxy.
  const child = spawn(process.execPath, args, {
    cwd: packageDir,
    env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  portkeyChild = child;
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping = false;
  const stop = async () => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    }
    portkeyChild = undefined;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Portkey did not start within 30 s:\n${output}`)), 30_000);
      const onData = () => {
        if (!output.includes('Ready for connections')) return;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      };
      child.stdout!.on('data', onData);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`Portkey could not be started: ${err.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`Portkey exited (${code ?? signal}) before it was ready:\n${output}`));
      });
    });
  } catch (e) {
    await stop();
    throw e;
  }
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`  Portkey exited unexpectedly (${code ?? signal}):\n${output}`);
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, command: `node ${path.relative(packageDir, entry)} --port=${port} --headless`, stop };
}

/** Portkey's custom-host routing to the no-op upstream (an OpenAI-compatible base URL). */
function portkeyHeaders(agentUrl: string): Record<string, string> {
  return {
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': new URL('v1', agentUrl).href,
    authorization: 'Bearer x',
  };
}

// ---------------------------------------------------------------------------------------------------------
// The measurements.

type Side = 'holon' | 'portkey';

interface Target {
  side: Side;
  url: string;
  body: string | string[];
  headers?: Record<string, string>;
}

interface Latency {
  p50: number;
  p99: number;
  samples: number;
  errors: Record<string, number>;
  upstreamServed: number;
}

interface Round {
  round: number;
  side: Side;
  reqPerS: number;
  p50: number;
  p99: number;
  ok: number;
  errors: Record<string, number>;
  upstreamServed: number;
  loadBefore: number;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const ms = (v: number) => v.toFixed(2);
const perS = (v: number) => v.toFixed(1);
const sumStatuses = (all: Array<Record<string, number>>) => {
  const sum: Record<string, number> = {};
  for (const e of all) for (const [s, n] of Object.entries(e)) sum[s] = (sum[s] ?? 0) + n;
  return sum;
};
const nonOk = (byStatus: Record<string, number>) => Object.fromEntries(Object.entries(byStatus).filter(([s]) => s !== '200'));

async function sequential(driver: Driver, t: { url: string; body: string; headers?: Record<string, string> }): Promise<Latency> {
  const before = await driver.agentServed();
  const r = await driver.sequential({ ...t, warmup: options.latencyWarmup, samples: options.latencySamples });
  return {
    p50: quantile(r.latencies, 0.5),
    p99: quantile(r.latencies, 0.99),
    samples: r.latencies.length,
    errors: r.errors,
    upstreamServed: (await driver.agentServed()) - before,
  };
}

async function sustained(driver: Driver, t: Target, round: number): Promise<Round> {
  const loadBefore = os.loadavg()[0]!;
  const before = await driver.agentServed();
  const load: LoadResult = await driver.load({
    url: t.url,
    body: t.body,
    headers: t.headers,
    concurrency: options.concurrency,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
  });
  const r: Round = {
    round,
    side: t.side,
    reqPerS: (load.ok * 1000) / load.elapsedMs,
    p50: quantile(load.latencies, 0.5),
    p99: quantile(load.latencies, 0.99),
    ok: load.ok,
    errors: nonOk(load.byStatus),
    upstreamServed: (await driver.agentServed()) - before,
    loadBefore,
  };
  console.log(
    `  round ${round} ${t.side.padEnd(7)} ${perS(r.reqPerS).padStart(8)} req/s  p50 ${ms(r.p50)} ms  p99 ${ms(r.p99)} ms  ` +
      `200s ${r.ok}, errors ${describeStatuses(r.errors)}, upstream served ${r.upstreamServed}, load avg before ${r.loadBefore.toFixed(2)}`,
  );
  for (const e of load.sampleErrors) console.log(`    e.g. ${e}`);
  return r;
}

async function main(): Promise<void> {
  console.log(`holon bench:peer — node ${process.version}, ${new Date().toISOString()}, ${os.cpus().length} cores, load avg ${os.loadavg()[0]!.toFixed(2)}`);
  const cacheDir = portkeyCacheDir();
  const { packageDir, entry } = ensurePortkey(cacheDir);

  const database = await postgresDatabase();
  if (database) cleanups.push(() => database.drop());
  const redis = await redisTarget();
  if (redis) cleanups.push(() => redis.cleanup());
  if (!database || !redis) throw new Error('bench:peer needs Postgres and Redis (DATABASE_URL, REDIS_URL)');

  const driver = createDriver(process.env.BENCH_GATEWAY_DRIVER);
  cleanups.push(() => driver.close());
  const bench: BenchGateway = await startBenchGateway({
    database,
    redis,
    driver,
    runnerConcurrency: Math.max(64, options.concurrency),
    settlerConcurrency: 32,
  });
  cleanups.push(() => bench.stop());
  const portkey = await startPortkey(packageDir, entry);
  cleanups.push(() => portkey.stop());

  const headers = portkeyHeaders(bench.agentUrl);
  const holon: Target = { side: 'holon', url: `${bench.url}/v0/calls`, body: bench.callBodies };
  const peer: Target = { side: 'portkey', url: `${portkey.url}/v1/chat/completions`, body: CHAT_BODY, headers };
  const problems: string[] = [];

  // Portkey must reach the upstream and pass its answer through.
  const dispatcher = keepAliveAgent(1);
  const smoke = await request(peer.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: CHAT_BODY, dispatcher });
  const smokeText = await smoke.body.text();
  await dispatcher.close();
  if (smoke.statusCode !== 200 || smokeText !== '{"ok":true}')
    throw new Error(`Portkey did not pass the upstream's answer through: ${smoke.statusCode} ${smokeText}`);

  console.log(`Portkey ${PORTKEY_VERSION}: ${portkey.command} (pid ${portkey.pid}, NODE_ENV=production), from ${packageDir}`);
  console.log(`  routed with x-portkey-provider: openai, x-portkey-custom-host: ${headers['x-portkey-custom-host']}, POST /v1/chat/completions`);
  console.log(`Holon: api + runner + settler in this process (${bench.url}), paid calls POST /v0/calls on one mandate, Postgres + Redis`);
  console.log(
    `client + no-op upstream (${bench.agentUrl}) in ${driver.kind === 'worker' ? 'a worker thread' : 'the gateway thread'}; ` +
      `${options.concurrency} clients, ${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured, ${options.rounds} round(s) interleaved`,
  );

  // c=1: the upstream directly, then through each gateway.
  console.log(`\nc=1 (sequential, ${options.latencySamples} samples after ${options.latencyWarmup} warm-up)`);
  const direct = await sequential(driver, { url: bench.agentUrl, body: bench.agentBody });
  const c1: Record<Side, Latency> = {
    holon: await sequential(driver, { url: holon.url, body: bench.callBody }),
    portkey: await sequential(driver, { url: peer.url, body: CHAT_BODY, headers }),
  };
  for (const [name, l] of [['upstream', direct], ...Object.entries(c1)] as Array<[string, Latency]>) {
    console.log(
      `  ${name.padEnd(8)} p50 ${ms(l.p50)} ms  p99 ${ms(l.p99)} ms  (200s ${l.samples}, errors ${describeStatuses(l.errors)}, upstream served ${l.upstreamServed})`,
    );
  }
  for (const [name, l] of [['upstream', direct], ...Object.entries(c1)] as Array<[string, Latency]>) {
    if (Object.keys(l.errors).length) problems.push(`c=1 ${name}: answers other than 200: ${describeStatuses(l.errors)}`);
    if (l.upstreamServed < options.latencyWarmup + options.latencySamples) problems.push(`c=1 ${name}: the upstream served ${l.upstreamServed} requests only`);
  }

  // Sustained load, interleaved: A/B, then B/A, …
  console.log(`\nsustained, c=${options.concurrency}`);
  const db = bench.gw.db.knex;
  const vacuum = await autovacuumOff(db);
  if (vacuum) console.log('  (autovacuum is off on this Postgres: the database is vacuumed after each Holon round, as autovacuum would have)');
  const rounds: Round[] = [];
  for (let i = 1; i <= options.rounds; i++) {
    for (const t of i % 2 ? [holon, peer] : [peer, holon]) {
      const r = await sustained(driver, t, i);
      rounds.push(r);
      if (Object.keys(r.errors).length) problems.push(`round ${i} ${r.side}: answers other than 200: ${describeStatuses(r.errors)}`);
      if (r.upstreamServed < r.ok) problems.push(`round ${i} ${r.side}: ${r.ok} answers but the upstream served ${r.upstreamServed}`);
      // Holon's settlements finish before the next phase, so that none of its work falls on Portkey's.
      if (t.side === 'holon') {
        await untilNoneOpen(db);
        if (vacuum) await vacuumBetweenPhases(db);
      }
    }
  }

  // Money is never lost: every call final, the ledger balanced.
  const open = await untilNoneOpen(db);
  const report = await audit(db);
  if (open) problems.push(`${open} calls not in a final state after the load`);
  if (!report.ok) problems.push(`ledger audit FAILED: ${report.problems.slice(0, 3).join('; ')}`);
  const loadAfter = os.loadavg()[0]!;

  // The table.
  const of = (side: Side) => rounds.filter((r) => r.side === side);
  const summary = (side: Side) => {
    const rs = of(side);
    const l = c1[side];
    return {
      reqPerS: rs.map((r) => r.reqPerS),
      reqPerSMedian: median(rs.map((r) => r.reqPerS)),
      p50Ms: rs.map((r) => r.p50),
      p99Ms: rs.map((r) => r.p99),
      p50MsMedian: median(rs.map((r) => r.p50)),
      p99MsMedian: median(rs.map((r) => r.p99)),
      errors: describeStatuses(sumStatuses([...rs.map((r) => r.errors), l.errors])),
      c1: { p50Ms: l.p50, p99Ms: l.p99, addedP50Ms: l.p50 - direct.p50, addedP99Ms: l.p99 - direct.p99 },
    };
  };
  const h = summary('holon');
  const p = summary('portkey');
  const ratios = h.reqPerS.map((v, i) => v / p.reqPerS[i]!);
  const ratio = h.reqPerSMedian / p.reqPerSMedian;
  const rows: Array<[string, string, string]> = [
    ...h.reqPerS.map((v, i): [string, string, string] => [`req/s, round ${i + 1}`, perS(v), perS(p.reqPerS[i]!)]),
    ['req/s, median over rounds', perS(h.reqPerSMedian), perS(p.reqPerSMedian)],
    [`p50 under load (c=${options.concurrency}), ms, median over rounds`, ms(h.p50MsMedian), ms(p.p50MsMedian)],
    [`p99 under load (c=${options.concurrency}), ms, median over rounds`, ms(h.p99MsMedian), ms(p.p99MsMedian)],
    ['c=1 p50, ms', ms(h.c1.p50Ms), ms(p.c1.p50Ms)],
    ['c=1 p99, ms', ms(h.c1.p99Ms), ms(p.c1.p99Ms)],
    [`c=1 added over the bare upstream (p50 ${ms(direct.p50)}), p50, ms`, ms(h.c1.addedP50Ms), ms(p.c1.addedP50Ms)],
    [`c=1 added over the bare upstream (p99 ${ms(direct.p99)}), p99, ms`, ms(h.c1.addedP99Ms), ms(p.c1.addedP99Ms)],
    ['answers other than 200', h.errors, p.errors],
  ];
  console.log(`\n| | Holon (paid calls) | Portkey ${PORTKEY_VERSION} (proxied) |`);
  console.log('|---|---|---|');
  for (const [name, a, b] of rows) console.log(`| ${name} | ${a} | ${b} |`);
  console.log(
    `\nHolon paid calls/s ÷ Portkey req/s: ${ratios.map((r, i) => `round ${i + 1} ${r.toFixed(3)}`).join(', ')}; overall (median ÷ median) ${ratio.toFixed(3)}`,
  );
  console.log(`calls not final ${open}, ledger audit ${report.ok ? 'ok' : 'FAILED'}, load avg after ${loadAfter.toFixed(2)}`);

  if (problems.length) {
    for (const m of problems) console.error(`  PROBLEM: ${m}`);
    throw new Error(`bench:peer: ${problems.length} problem(s); bench/results.json left as it was`);
  }
  if (!options.write) {
    console.log('(BENCH_PEER_NO_WRITE=1: bench/results.json left as it was)');
    return;
  }
  writeResultSections({
    peer: {
      at: new Date().toISOString(),
      node: process.version,
      cores: os.cpus().length,
      peerGateway: { package: PORTKEY_PACKAGE, version: PORTKEY_VERSION, start: 'node build/start-server.js --port=<n> --headless, NODE_ENV=production' },
      concurrency: options.concurrency,
      rounds: options.rounds,
      order: rounds.map((r) => `${r.round}:${r.side}`),
      warmupS: options.warmupMs / 1000,
      durationS: options.durationMs / 1000,
      latencyWarmup: options.latencyWarmup,
      latencySamples: options.latencySamples,
      upstreamC1: { p50Ms: direct.p50, p99Ms: direct.p99 },
      holon: h,
      portkey: p,
      ratioHolonOverPortkey: { perRound: ratios, overall: ratio },
      callsNotFinal: open,
      ledgerAudit: report.ok ? 'ok' : 'FAILED',
      loadAverage: { before: rounds[0]!.loadBefore, after: loadAfter },
    },
  });
  console.log('\nwritten to bench/results.json (section peer)');
}

try {
  await main();
} catch (e) {
  process.exitCode = 1;
  console.error(e);
} finally {
  await cleanup();
}
