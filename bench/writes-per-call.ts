/**
 * What a paid call costs under load in counts that do not move with this machine's speed: a scratch tool for
 * docs/PERFORMANCE.md (not part of `npm run bench`).
 *
 *   node --import tsx bench/writes-per-call.ts [seconds, default 8]
 *
 * Starts the gateway bench's gateway (api + runner + settler, Postgres + Redis, the no-op agent and the client in a
 * worker thread), warms it for 2 s at 64 clients, then counts over the measured window, in the gateway thread: socket
 * writes (`net.Socket#_writeGeneric`: every write and writev of every connection — HTTP in and out, Postgres, Redis),
 * Redis commands sent (ioredis `sendCommand`), garbage collections (PerformanceObserver `gc`) — each per paid call —
 * with the rate, the event-loop utilisation and the process's CPU per call beside them. The throw-away database and
 * Redis keys are removed.
 */
import net from 'node:net';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { createDriver, startBenchGateway } from './gateway.js';
import { postgresDatabase, redisTarget } from './support.js';

const seconds = Number(process.argv[2] ?? 8);
let counting = false;
let writes = 0;
let redisCommands = 0;

const socket = net.Socket.prototype as unknown as { _writeGeneric(...args: unknown[]): unknown };
const writeGeneric = socket._writeGeneric;
socket._writeGeneric = function (this: unknown, ...args: unknown[]) {
  if (counting) writes++;
  return writeGeneric.apply(this, args);
};
const redis = Redis.prototype as unknown as { sendCommand(...args: unknown[]): unknown };
const sendCommand = redis.sendCommand;
redis.sendCommand = function (this: unknown, ...args: unknown[]) {
  if (counting) redisCommands++;
  return sendCommand.apply(this, args);
};

const database = await postgresDatabase();
const target = await redisTarget();
if (!database || !target) throw new Error('writes-per-call needs Postgres and Redis (DATABASE_URL, REDIS_URL)');
const driver = createDriver('worker');
const bench = await startBenchGateway({ database, redis: target, driver, runnerConcurrency: 64, settlerConcurrency: 32 });
try {
  const spec = { url: `${bench.url}/v0/calls`, body: bench.callBodies, concurrency: 64, warmupMs: 0 };
  await driver.load({ ...spec, durationMs: 2000 });
  let gcs = 0;
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcs++;
      gcMs += e.duration;
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const elu = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  counting = true;
  const r = await driver.load({ ...spec, durationMs: seconds * 1000 });
  counting = false;
  gc.disconnect();
  const busy = performance.eventLoopUtilization(elu);
  const used = process.cpuUsage(cpu);
  const n = Math.max(1, r.ok);
  const line = (what: string, value: string) => console.log(`  ${what.padEnd(48)} ${value}`);
  console.log(`${seconds} s at 64 clients, paid calls POST /v0/calls`);
  line('paid calls answered', `${r.ok} (${(r.ok / seconds).toFixed(0)}/s)`);
  line('socket writes per paid call (gateway thread)', (writes / n).toFixed(2));
  line('Redis commands sent per paid call', (redisCommands / n).toFixed(2));
  line('garbage collections per 1,000 paid calls', ((gcs * 1000) / n).toFixed(1));
  line('GC pause per paid call', `${(gcMs / n).toFixed(3)} ms`);
  line('gateway thread busy (event-loop utilisation)', `${(busy.utilization * 100).toFixed(0)} %`);
  line('process CPU per paid call (all its threads)', `${((used.user + used.system) / 1000 / n).toFixed(2)} ms`);
} finally {
  await bench.stop();
  await driver.close();
  await database.drop();
  await target.cleanup();
}
