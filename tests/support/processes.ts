/**
 * Gateway services as separate OS processes (`node bin/holon.mjs api|runner|settler|evaluator`), sharing one test
 * database and one Redis key prefix: what `holon serve` splits into when it scales out. Tests get a cluster from
 * gateway.ts `startTestCluster` (which makes its database and prefix); this is the machinery underneath.
 *
 *   const { cluster, db, stop } = await startTestCluster({ env: { … } });
 *   const settler = await cluster.start('settler');   // waits until its settle worker is connected
 *   const api = await cluster.start('api');           // waits until GET /healthz answers
 *   api.kill('SIGKILL'); await api.exit;              // a crash
 *   await cluster.stopAll();                          // SIGTERM, then SIGKILL after a grace period
 *
 * A worker is ready when its BullMQ blocking connection shows in Redis' CLIENT LIST: BullMQ names it
 * `<bull prefix>:<base64(queue name)>`, and the runner's, settler's and evaluator's workers are the only ones using it
 * (on a Redis Cluster, in the CLIENT LIST of the node that holds the queue's slot).
 * Every process's stdout and stderr are kept (the tail) so a failing test can say what the services said.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bullQueuePrefix } from '../../shared/messaging/bullmq.js';
import { isClusterUrl, openRedis, type RedisClient } from '../../shared/messaging/redis-target.js';
import { RUN_QUEUE, SETTLE_QUEUE } from '../../shared/calls/wire.js';
import { EVALUATE_QUEUE } from '../../shared/evaluation/jobs.js';
import { poll } from './poll.js';
import { nodeOf } from './redis-keys.js';

export type ServiceRole = 'api' | 'runner' | 'settler' | 'evaluator';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCALE_REGISTRY = 'examples,tests/fixtures/registry,tests/fixtures/scale';

const OUTPUT_TAIL = 64 * 1024;

interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: string;
  readonly role: ServiceRole;
  readonly pid: number;
  /** API only: the port it listens on and its base URL. */
  readonly port?: number;
  readonly url?: string;
  /** Resolves when the process has exited. */
  readonly exit: Promise<ProcessExit>;
  /** The exit, once it happened. */
  exited(): ProcessExit | undefined;
  /** What the process wrote to stdout and stderr (the last 64 KiB of each). */
  output(): string;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<ProcessExit>;
}

export interface ClusterOptions {
  databaseUrl: string;
  redisUrl: string;
  /** HOLON_REDIS_PREFIX: letters, digits, '_', '.', '-' (no ':'); see `processRedisPrefix`. */
  redisPrefix: string;
  /** HOLON_REGISTRY (default SCALE_REGISTRY). */
  registry?: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
}

export interface StartOptions {
  /** A label for messages (default role + a counter). */
  name?: string;
  /** Extra environment for this process. */
  env?: Record<string, string>;
  /** Longest wait for readiness (default 45 s). */
  readyTimeoutMs?: number;
}

export interface Cluster {
  readonly processes: readonly ServiceProcess[];
  start(role: ServiceRole, options?: StartOptions): Promise<ServiceProcess>;
  /** How many BullMQ workers of this queue are connected to Redis now. */
  connectedWorkers(queue: string): Promise<number>;
  /** How many jobs of this queue are active (taken by a worker, not finished): what a killed worker leaves behind. */
  activeJobs(queue: string): Promise<number>;
  /** The output of every process started, for failure messages. */
  describe(): string;
  /** Stops every process still running (SIGTERM, SIGKILL after `graceMs`) and closes the Redis client. */
  stopAll(graceMs?: number): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Never leave a service running when the test process itself goes away.
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

function tail(buffer: string, chunk: string): string {
  const next = buffer + chunk;
  return next.length > OUTPUT_TAIL ? next.slice(next.length - OUTPUT_TAIL) : next;
}

export function createCluster(options: ClusterOptions): Cluster {
  const processes: ServiceProcess[] = [];
  const counters: Record<ServiceRole, number> = { api: 0, runner: 0, settler: 0, evaluator: 0 };
  const bullPrefix = (queue: string) => bullQueuePrefix(options.redisPrefix, queue, isClusterUrl(options.redisUrl));
  let redis: RedisClient | undefined;
  const client = () => (redis ??= openRedis(options.redisUrl, { maxRetriesPerRequest: 2 }));

  // On a cluster a worker's blocking connection is to the node that holds its queue's slot (it may have others too).
  const connectedWorkers = async (queue: string): Promise<number> => {
    const name = `${bullPrefix(queue)}:${Buffer.from(queue).toString('base64')}`;
    const node = await nodeOf(client(), `${bullPrefix(queue)}:${queue}:wait`);
    const list = String(await node.call('CLIENT', 'LIST'));
    return list.split('\n').filter((line) => {
      const m = / name=(\S*)/.exec(line);
      return m !== null && (m[1] === name || m[1]!.startsWith(`${name}:w:`));
    }).length;
  };

  // BullMQ keeps a queue's active job ids in the list `<bull prefix>:<queue>:active`.
  const activeJobs = async (queue: string): Promise<number> => client().llen(`${bullPrefix(queue)}:${queue}:active`);

  const describe = () =>
    processes
      .map((p) => {
        const exit = p.exited();
        const state = exit ? `exited code=${exit.code} signal=${exit.signal}` : 'running';
        const out = p.output().trim();
        return `--- ${p.name} (pid ${p.pid}, ${state})${out ? `\n${out.slice(-4000)}` : ' (no output)'}`;
      })
      .join('\n');

  const start = async (role: ServiceRole, startOptions: StartOptions = {}): Promise<ServiceProcess> => {
    counters[role] += 1;
    const name = startOptions.name ?? `${role}-${counters[role]}`;
    const port = role === 'api' ? await freePort() : undefined;
    // Workers of the same role already running and connected: the new one is ready when there is one more.
    const queue = role === 'runner' ? RUN_QUEUE : role === 'settler' ? SETTLE_QUEUE : role === 'evaluator' ? EVALUATE_QUEUE : undefined;
    const peers = processes.filter((p) => p.role === role && !p.exited()).length;

    const child = spawn(process.execPath, ['bin/holon.mjs', role], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        HOLON_REDIS_PREFIX: options.redisPrefix,
        HOLON_REGISTRY: options.registry ?? SCALE_REGISTRY,
        HOLON_MANDATES: '',
        LOG_LEVEL: 'warn',
        PORT: String(port ?? 0),
        ...options.env,
        ...startOptions.env,
      },
    });
    trackChild(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout = tail(stdout, c)));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = tail(stderr, c)));
    let exitState: ProcessExit | undefined;
    const exit = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (code, signal) => {
        exitState = { code, signal };
        resolve(exitState);
      });
      child.once('error', (err) => {
        stderr = tail(stderr, `spawn error: ${err.message}\n`);
        exitState ??= { code: null, signal: null };
        resolve(exitState);
      });
    });

    const kill = (signal: NodeJS.Signals) => {
      if (!exitState && child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    const proc: ServiceProcess = {
      name,
      role,
      pid: child.pid ?? -1,
      ...(port !== undefined ? { port, url: `http://127.0.0.1:${port}` } : {}),
      exit,
      exited: () => exitState,
      output: () => [stderr && `[stderr]\n${stderr}`, stdout && `[stdout]\n${stdout}`].filter(Boolean).join('\n'),
      kill,
      stop: async (graceMs = 5_000) => {
        if (exitState) return exitState;
        kill('SIGTERM');
        const timer = setTimeout(() => kill('SIGKILL'), graceMs);
        try {
          return await exit;
        } finally {
          clearTimeout(timer);
        }
      },
    };
    processes.push(proc);

    const failIfExited = () => {
      if (exitState) throw new Error(`${name} exited while starting (code ${exitState.code}, signal ${exitState.signal})\n${describe()}`);
    };
    const timeoutMs = startOptions.readyTimeoutMs ?? 45_000;
    if (role === 'api') {
      await poll(
        async () => {
          failIfExited();
          try {
            const res = await fetch(`${proc.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
            return res.ok;
          } catch {
            return false;
          }
        },
        { what: `${name} to answer GET /healthz`, timeoutMs, intervalMs: 100, context: describe },
      );
    } else {
      await poll(
        async () => {
          failIfExited();
          return (await connectedWorkers(queue!)) >= peers + 1;
        },
        { what: `${name}'s ${queue} worker to connect`, timeoutMs, intervalMs: 100, context: describe },
      );
    }
    return proc;
  };

  return {
    get processes() {
      return processes;
    },
    start,
    connectedWorkers,
    activeJobs,
    describe,
    stopAll: async (graceMs = 5_000) => {
      await Promise.all(processes.map((p) => p.stop(graceMs)));
      redis?.disconnect();
      redis = undefined;
    },
  };
}

/**
 * The port a `holon serve` child prints on its start-up line (`"port":N`), read from what it wrote so far (`output`):
 * undefined when it exits, or 30 s pass, first.
 */
export async function printedPort(child: ChildProcess, output: () => string, timeoutMs = 30_000): Promise<number | undefined> {
  const port = await poll(
    () => {
      const m = /"port":(\d+)/.exec(output());
      if (m) return Number(m[1]);
      return child.exitCode !== null ? null : undefined;
    },
    { what: 'holon serve to print its port', timeoutMs, intervalMs: 100, orUndefined: true },
  );
  return port ?? undefined;
}

/** The queue whose workers show that a process of this role is up (none for the API). */
function workerQueueOf(role: ServiceRole): string | undefined {
  return role === 'runner' ? RUN_QUEUE : role === 'settler' ? SETTLE_QUEUE : role === 'evaluator' ? EVALUATE_QUEUE : undefined;
}

export interface Replacement {
  /** How the crashed process ended (signal SIGKILL). */
  exit: ProcessExit;
  /** The new process of the same role, ready. */
  replacement: ServiceProcess;
  /** From the kill until the replacement was ready (ms). */
  downMs: number;
}

/**
 * A crash and its recovery: `kill -9` the process, wait until it has exited and its workers have left Redis (so the
 * replacement's readiness counts only live peers), then start a process of the same role.
 */
export async function crashAndReplace(cluster: Cluster, victim: ServiceProcess, options: StartOptions = {}): Promise<Replacement> {
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  const exit = await victim.exit;
  const queue = workerQueueOf(victim.role);
  if (queue) {
    const peers = cluster.processes.filter((p) => p.role === victim.role && !p.exited()).length;
    await poll(async () => (await cluster.connectedWorkers(queue)) <= peers, {
      what: `${victim.name}'s ${queue} worker to leave Redis`,
      timeoutMs: 15_000,
      context: cluster.describe,
    });
  }
  const replacement = await cluster.start(victim.role, options);
  return { exit, replacement, downMs: Date.now() - killedAt };
}

/** The lines {call, pid} that fixtures/hang and the chaos fixtures append to HOLON_TEST_INVOCATIONS, one per invocation. */
export async function readInvocations(file: string): Promise<Array<{ call: string; pid: number }>> {
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return '';
    throw e;
  });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { call: string; pid: number });
}
