/**
 * Redis as the tests look into it, one server or a cluster (no vitest, usable from scripts): every master node of
 * a connection, the one holding a key, and deleting every key under a prefix (a test's, a seeded gateway's).
 */
import { Cluster, type Redis } from 'ioredis';
import { openRedis, type RedisClient } from '../../shared/messaging/redis-target.js';

/** The connection itself for one server; each master's for a cluster (once its slots are known). */
export async function everyNode(client: RedisClient): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  if (client.status !== 'ready') await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
  return client.nodes('master');
}

/** The connection itself for one server; for a cluster, the connection to the master that holds `key`'s slot. */
export async function nodeOf(client: RedisClient, key: string): Promise<Redis> {
  const nodes = await everyNode(client);
  if (!(client instanceof Cluster)) return client;
  const slot = Number(await client.cluster('KEYSLOT', key));
  const owner = client.slots[slot]?.[0];
  const node = nodes.find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new Error(`no master holds slot ${slot} (${owner})`);
  return node;
}

export async function deleteKeysUnder(url: string, prefix: string): Promise<void> {
  const raw = openRedis(url, { maxRetriesPerRequest: 2 });
  try {
    for (const node of await everyNode(raw)) {
      // On a cluster the queues' keys start with their hash tag: `{<prefix>:q:<queue>}:…`.
      const pattern = raw instanceof Cluster ? `*${prefix}*` : `${prefix}*`;
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        // One key a command: a cluster refuses a DEL of keys in different slots.
        if (keys.length) await Promise.all(keys.map((k) => node.del(k)));
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    raw.disconnect();
  }
}
