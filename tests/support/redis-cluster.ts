/**
 * Redis for the tests beyond the run's one server: the three-node Redis Cluster on loopback (127.0.0.1:7301-7303,
 * started by scripts/redis-cluster.sh — as CI does before the tests — when it is not up already), and plain
 * servers of a test's own on free ports (a Redis per part of the messaging). Each test keeps to its own key prefix
 * on the cluster (createTestRedis(REDIS_CLUSTER_URL)).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, freePort } from './processes.js';
import { poll } from './poll.js';

const run = promisify(execFile);

export const REDIS_CLUSTER_PORTS = [7301, 7302, 7303] as const;
/** HOLON's form of a cluster URL: its seed nodes (shared/messaging/redis-target.ts). */
const REDIS_CLUSTER_URL = `redis+cluster://${REDIS_CLUSTER_PORTS.map((p) => `127.0.0.1:${p}`).join(',')}`;

/** The cluster up and `cluster_state:ok` (scripts/redis-cluster.sh does nothing when it is); its URL. */
export async function ensureRedisCluster(): Promise<string> {
  await run(path.join(REPO_ROOT, 'scripts/redis-cluster.sh'), { env: { ...process.env, REDIS_CLUSTER_PORTS: REDIS_CLUSTER_PORTS.join(' ') } });
  return REDIS_CLUSTER_URL;
}

/** `redis-cli -p <port> <args…>`'s answer. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

export interface PlainRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A Redis server of the test's own on a free loopback port, nothing persisted; `stop()` shuts it down. */
export async function startPlainRedis(): Promise<PlainRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-redis-'));
  await run('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--dir', dir]);
  await poll(async () => (await redisCli(port, 'ping').catch(() => '')) === 'PONG', { what: `redis-server on ${port}`, timeoutMs: 10_000, intervalMs: 50 });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await redisCli(port, 'shutdown', 'nosave').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
