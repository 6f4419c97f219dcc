/**
 * Where a Redis is, and a connection to it: one server (`redis://…`, `rediss://…`, handed to ioredis as it is) or a
 * Redis Cluster (`redis+cluster://[user:password@]host:port[,host:port…]`, `rediss+cluster://…` for TLS): the nodes
 * listed are seeds, ioredis' Cluster learns the rest from them and follows the slots as they move.
 *
 * On a cluster every command that touches several keys (a Lua script, a MULTI) must name keys of one slot, so the
 * keys that go together share a hash tag (`{…}`), on a cluster only (`isClusterUrl`). The queues (bullmq.ts
 * `bullQueuePrefix`) and the ephemeral store (ephemeral.ts) take their tags from it; on one server nothing changes.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';

/** A connection to either: the commands Holon uses are the same on both. */
export type RedisClient = Redis | Cluster;

const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#@]+)\/?$/;

/** Whether this URL names a Redis Cluster (`redis+cluster://…`). */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//.test(url);
}

interface ClusterSeeds {
  nodes: Array<{ host: string; port: number }>;
  options: Pick<RedisOptions, 'username' | 'password' | 'tls'>;
}

function clusterSeeds(url: string): ClusterSeeds | undefined {
  const m = CLUSTER_URL.exec(url);
  if (!m) return undefined;
  const nodes = m[3]!.split(',').map((hostPort) => {
    const hp = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(hostPort.trim());
    return hp ? { host: hp[1]!.replace(/^\[|\]$/g, ''), port: Number(hp[2]) } : undefined;
  });
  if (nodes.length === 0 || nodes.some((n) => n === undefined || n.port < 1 || n.port > 65535)) return undefined;
  const [user, password] = (m[2] ?? '').split(':').map((s) => decodeURIComponent(s));
  return {
    nodes: nodes as ClusterSeeds['nodes'],
    options: {
      ...(user ? { username: user } : {}),
      ...(password ? { password } : {}),
      ...(m[1] === 'rediss' ? { tls: {} } : {}),
    },
  };
}

/**
 * A new connection to the Redis `url` names, with `options` (a cluster gets them for each of its node connections,
 * but for the key prefix, its own, and auto-pipelining, never on a cluster).
 * A cluster URL that does not parse throws: settings check their URLs with `redisUrlProblem` before.
 */
export function openRedis(url: string, options: RedisOptions = {}): RedisClient {
  if (!isClusterUrl(url)) return new Redis(url, options);
  const seeds = clusterSeeds(url);
  if (!seeds) throw new TypeError(`not a Redis Cluster URL: ${url.replace(/\/\/[^@/]*@/, '//…@')}`);
  // A key prefix is the cluster's (the slot is the prefixed key's), the rest each node connection's. Never
  // auto-pipelined on a cluster: ioredis sends a cluster pipeline again only when all its commands failed alike and
  // only read, so writes in flight when a node's connection closes (or its slots move) fail where one command alone
  // is sent again; and a keyless PUBLISH may go to any node, two nodes relaying a channel's messages out of order.
  const { keyPrefix, enableAutoPipelining: _notOnACluster, ...perNode } = options;
  const cluster: ClusterOptions = {
    redisOptions: { ...perNode, ...seeds.options },
    ...(keyPrefix ? { keyPrefix } : {}),
  };
  return new Cluster(seeds.nodes, cluster);
}
