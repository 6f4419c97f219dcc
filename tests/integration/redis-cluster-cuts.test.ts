/**
 * On a Redis Cluster a node's connection that is cut (a node restarting, a proxy's idle timeout, `CLIENT KILL`) loses
 * no command: the ephemeral store's writes and the notifier's PUBLISHes in flight when it closes are sent again once
 * the cluster has reconnected, and answer as if nothing happened; the notifier's subscription comes back. Only this test's own connections are cut (found by
 * their names under its prefix), so tests sharing the cluster are not touched.
 */
import { expect, test } from 'vitest';
import { namespaceOf } from '../../shared/messaging/ephemeral.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { perTestCleanups } from '../support/cleanups.js';
import { poll, sleep } from '../support/poll.js';
import { ensureRedisCluster, REDIS_CLUSTER_PORTS, redisCli } from '../support/redis-cluster.js';

const { defer, testRedis } = perTestCleanups();

/** Cut every connection of the cluster's nodes named `<namespace>…` (this test's); how many were cut. */
async function cutOwnConnections(namespace: string): Promise<number> {
  let cut = 0;
  for (const port of REDIS_CLUSTER_PORTS) {
    const list = await redisCli(port, 'CLIENT', 'LIST', 'TYPE', 'normal');
    for (const line of list.split('\n')) {
      const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
      const name = /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '';
      if (id && name.startsWith(namespace)) cut += Number(await redisCli(port, 'CLIENT', 'KILL', 'ID', id));
    }
  }
  return cut;
}

test('writes in flight when a node’s connections are cut are sent again: every put is kept, every notice sent', async () => {
  const r = await testRedis(await ensureRedisCluster());
  const m = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
  defer(() => m.close());
  const heardSet = new Set<string>();
  const channel = `cuts-${r.prefix}`;
  const unsubscribe = await m.notifier.subscribe(channel, (message) => void heardSet.add(message));
  defer(async () => unsubscribe());

  // Writes keep flowing, many in flight at once, while the test's connections are cut again and again.
  let writing = true;
  let n = 0;
  const failures: string[] = [];
  const sent: string[] = [];
  const writers = Array.from({ length: 16 }, async () => {
    while (writing) {
      const i = n++;
      await Promise.all([
        m.store.put(`input:call_${i}`, `value ${i}`, 120),
        m.notifier.publish(channel, `notice ${i}`).then(() => void sent.push(`notice ${i}`)),
      ]).catch((err: unknown) => void failures.push(`${i}: ${err instanceof Error ? err.message : String(err)}`));
    }
  });
  let cuts = 0;
  for (let round = 0; round < 12; round++) {
    await sleep(60);
    cuts += await cutOwnConnections(namespaceOf(r.prefix));
  }
  writing = false;
  await Promise.all(writers);

  expect(cuts, 'connections were cut').toBeGreaterThan(12);
  expect(n, 'writes were in flight across the cuts').toBeGreaterThan(100);
  expect(failures, 'no write failed').toEqual([]);
  for (let i = 0; i < n; i++) expect(await m.store.take(`input:call_${i}`), `input:call_${i}`).toBe(`value ${i}`);
  // A notice is a hint (one published while the subscription moves to another node is lost, as documented): the
  // subscription is there again after the cuts, and one sent now is heard.
  expect(sent.length, 'every notice was sent').toBe(n);
  let probe = 0;
  await poll(
    async () => {
      if (heardSet.has(`probe ${probe}`)) return true;
      await m.notifier.publish(channel, `probe ${++probe}`);
      return false;
    },
    { what: 'a notice sent after the cuts to be heard', timeoutMs: 10_000, intervalMs: 100 },
  );
});
