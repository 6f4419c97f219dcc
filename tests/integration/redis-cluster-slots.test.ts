/**
 * On a Redis Cluster every command that names several keys must name keys of one slot: the keys the ephemeral
 * store's script and MULTIs touch together (a value and its companions), and the keys of one BullMQ queue (every
 * BullMQ script touches one queue's). What is in the three-node test cluster after real traffic is read back and
 * its slots asked of the cluster (CLUSTER KEYSLOT). On one server the names stay as they always were.
 */
import { expect, test } from 'vitest';
import { bullPrefixOf, bullQueuePrefix } from '../../shared/messaging/bullmq.js';
import { redisStoreKey } from '../../shared/messaging/ephemeral.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { perTestCleanups } from '../support/cleanups.js';
import { poll } from '../support/poll.js';
import { ensureRedisCluster } from '../support/redis-cluster.js';
import { everyNode } from '../support/redis-keys.js';
import type { TestRedis } from '../support/redis.js';

const { defer, testRedis } = perTestCleanups();

/** Every key under the test's prefix, on every node. */
async function keysOf(r: TestRedis): Promise<string[]> {
  const keys: string[] = [];
  for (const node of await everyNode(r.client)) keys.push(...(await node.keys(`*${r.prefix}*`)));
  return keys.sort();
}

/** The slot of each key, as the cluster computes it. */
async function slotsOf(r: TestRedis, keys: readonly string[]): Promise<Map<string, number>> {
  const [node] = await everyNode(r.client);
  return new Map(await Promise.all(keys.map(async (k) => [k, Number(await node!.cluster('KEYSLOT', k))] as const)));
}

test('the store: a value and its companions (the consumers due, the collected note) share a slot; calls spread over slots', async () => {
  const r = await testRedis(await ensureRedisCluster());
  const m = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
  defer(() => m.close());
  const calls = Array.from({ length: 12 }, (_, i) => `call_${i}`);
  for (const id of calls) {
    await m.store.put(`input:${id}`, 'in', 60);
    await m.store.keepFor(`output:${id}`, ['sync', 'webhook'], 60);
    await m.store.put(`output:${id}`, 'out', 60);
  }
  // Half of the outputs collected (value gone, note written), half still due to one consumer.
  for (const [i, id] of calls.entries()) {
    expect(await m.store.handOver(`output:${id}`, 'sync', 60)).toEqual({ kind: 'kept', value: 'out' });
    if (i % 2 === 0) expect(await m.store.handOver(`output:${id}`, 'webhook', 60)).toEqual({ kind: 'kept', value: 'out' });
    expect(await m.store.peekKept(`output:${id}`)).toEqual(i % 2 === 0 ? { kind: 'collected' } : { kind: 'kept', value: 'out' });
  }

  const keys = await keysOf(r);
  const slots = await slotsOf(r, keys);
  for (const [i, id] of calls.entries()) {
    const output = redisStoreKey(r.prefix, `output:${id}`, true);
    const together = keys.filter((k) => k.startsWith(output));
    expect(together).toEqual(i % 2 === 0 ? [`${output}:gone`] : [output, `${output}:due`]);
    expect(new Set(together.map((k) => slots.get(k))).size, `${id}'s output and its companions`).toBe(1);
    expect(keys).toContain(redisStoreKey(r.prefix, `input:${id}`, true));
  }
  expect(new Set(slots.values()).size, 'the calls are spread over slots').toBeGreaterThan(calls.length);
});

test('the queues: every key of one queue is in one slot (jobs waiting, delayed, done, failed), each queue a hash tag of its own', async () => {
  const r = await testRedis(await ensureRedisCluster());
  const m = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
  defer(() => m.close());
  const queues = ['run', 'settle', 'callback', 'deliver', 'evaluate'];
  const done: string[] = [];
  for (const name of queues) {
    m.queues.worker<{ n: number }>(
      name,
      async (data) => {
        if (data.n === 1) throw new Error('fails: kept as failed');
        done.push(`${name}:${data.n}`);
      },
      { concurrency: 2 },
    );
    const q = m.queues.queue<{ n: number }>(name);
    await q.add({ n: 0 }, { jobId: `${name}-done` });
    await q.add({ n: 1 }, { jobId: `${name}-failed` });
    await q.add({ n: 2 }, { jobId: `${name}-later`, delayMs: 60_000 });
  }
  await poll(() => expect(done.sort()).toEqual(queues.map((q) => `${q}:0`).sort()), { what: 'one job done per queue', assert: true, timeoutMs: 10_000 });
  await poll(async () => (await Promise.all(queues.map((q) => m.queues.queue(q).pending(`${q}-failed`)))).every((p) => !p), {
    what: 'the failing jobs to have failed',
    timeoutMs: 10_000,
  });

  const keys = await keysOf(r);
  const slots = await slotsOf(r, keys);
  const slotOfQueue = new Map<string, number>();
  for (const name of queues) {
    const prefix = `${bullQueuePrefix(r.prefix, name, true)}:${name}:`;
    const ofQueue = keys.filter((k) => k.startsWith(prefix));
    expect(ofQueue, `${name}'s keys`).toEqual(expect.arrayContaining([`${prefix}meta`, `${prefix}delayed`, `${prefix}failed`, `${prefix}id`]));
    const queueSlots = new Set(ofQueue.map((k) => slots.get(k)));
    expect(queueSlots.size, `${name}'s keys in one slot`).toBe(1);
    slotOfQueue.set(name, [...queueSlots][0]!);
  }
  // Nothing of the queues outside their hash tags; and the queues are not all in one slot.
  expect(keys.filter((k) => k.includes(`${bullPrefixOf(r.prefix)}:`) && !queues.some((q) => k.startsWith(`${bullQueuePrefix(r.prefix, q, true)}:`)))).toEqual(
    [],
  );
  expect(new Set(slotOfQueue.values()).size).toBe(queues.length);
});

test('on one server the names are unchanged: no hash tags', () => {
  expect(bullQueuePrefix('holon', 'run', false)).toBe('holon:q');
  expect(bullQueuePrefix('holon', 'run', true)).toBe('{holon:q:run}');
  expect(redisStoreKey('holon', 'output:call_1', false)).toBe('holon:e:output:call_1');
  expect(redisStoreKey('holon', 'output:call_1', true)).toBe('holon:e:{output:call_1}');
});
