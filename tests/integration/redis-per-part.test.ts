/**
 * Each part of the messaging on a Redis of its own (HOLON_REDIS_URL_RUN, _SETTLE, _QUEUES, _STORE, _NOTIFIER): the
 * run queue, the settle queue, the store and the notifier each on a plain redis-server of the test's own, the other
 * queues (callback, deliver) on the three-node test cluster. An API + runner gateway and a settler gateway beside it
 * (so calls cross the settle queue) answer paid calls end to end, synchronously and with a webhook, and each part's
 * keys (or subscriptions) are on its Redis and nowhere else.
 */
import { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { CALLS_DONE_CHANNEL } from '../../shared/calls/wire.js';
import { bullQueuePrefix } from '../../shared/messaging/bullmq.js';
import { redisChannelName } from '../../shared/messaging/notifier.js';
import { perTestCleanups } from '../support/cleanups.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import type { Schema } from '../support/http.js';
import { poll } from '../support/poll.js';
import { ensureRedisCluster, startPlainRedis } from '../support/redis-cluster.js';
import { deleteKeysUnder, everyNode } from '../support/redis-keys.js';
import { openRedis } from '../../shared/messaging/redis-target.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { testWebhookSettings } from '../support/webhook-settings.js';

const { defer } = perTestCleanups();

async function plain() {
  const r = await startPlainRedis();
  defer(r.stop);
  const client = new Redis(r.url);
  defer(async () => void client.disconnect());
  return { url: r.url, client };
}

test('run, settle, store and notifier each on a Redis of their own, the other queues on a cluster: calls work end to end', async () => {
  const [run, settle, store, notifier] = [await plain(), await plain(), await plain(), await plain()];
  const clusterUrl = await ensureRedisCluster();
  const redisFor = { run: run.url, settle: settle.url, store: store.url, notifier: notifier.url, queues: clusterUrl };
  const config = { redisFor, webhooks: testWebhookSettings() };
  const g = await startTestGateway({ roles: ['api', 'runner'], config });
  defer(() => deleteKeysUnder(clusterUrl, g.redisPrefix));
  await useAudited(g, async (g) => {
    const settler = await startTestGateway({ beside: g, roles: ['settler'], config });
    defer(() => settler.stop());
    await g.mandate({});
    const hook = await startReceiver(defer);

    const sync = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'hi' } });
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    expect(sync.body).toMatchObject({ receipt: { status: 'succeeded', billed: true }, output: { text: 'HI' } });

    const queued = await g.post<Schema<'CallQueued'>>(
      '/v0/calls',
      { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'later' }, callback_url: hook.url },
      { prefer: 'respond-async' },
    );
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    await poll(() => hook.received.length === 1, { what: 'the webhook', timeoutMs: 30_000 });
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
      type: 'call.completed',
      call: { id: queued.body.call.id, status: 'succeeded' },
      output: { text: 'LATER' },
    });
    const receipts = await g.db.knex('receipts').select('status', 'billed');
    expect(receipts).toEqual([
      { status: 'succeeded', billed: true },
      { status: 'succeeded', billed: true },
    ]);

    // Each part's keys on its Redis, and nowhere else; the run's Redis (REDIS_URL) holds nothing of the gateway.
    const prefix = g.redisPrefix;
    const keysOn = async (client: Redis) => (await client.keys(`*${prefix}*`)).sort();
    const q = (name: string) => `${bullQueuePrefix(prefix, name, false)}:${name}:`;
    expect((await keysOn(run.client)).every((k) => k.startsWith(q('run'))) && (await keysOn(run.client)).length > 0, 'the run queue').toBe(true);
    expect((await keysOn(settle.client)).every((k) => k.startsWith(q('settle'))) && (await keysOn(settle.client)).length > 0, 'the settle queue').toBe(true);
    expect((await keysOn(store.client)).every((k) => k.startsWith(`${prefix}:e:`)) && (await keysOn(store.client)).length > 0, 'the store').toBe(true);
    expect(await keysOn(notifier.client), 'the notifier keeps no keys').toEqual([]);
    const cluster = openRedis(clusterUrl);
    defer(async () => void cluster.disconnect());
    const onCluster = (await Promise.all((await everyNode(cluster)).map((n) => n.keys(`*${prefix}*`)))).flat();
    for (const name of ['callback', 'deliver'])
      expect(
        onCluster.some((k) => k.startsWith(`${bullQueuePrefix(prefix, name, true)}:`)),
        `the ${name} queue on the cluster`,
      ).toBe(true);
    expect(
      onCluster.filter((k) => !k.startsWith(`{${prefix}:q:`)),
      'only queues on the cluster',
    ).toEqual([]);
    const main = new Redis(g.redisUrl);
    defer(async () => void main.disconnect());
    expect(await keysOn(main), 'REDIS_URL').toEqual([]);
    const subscribers = async (client: Redis) => Number(((await client.pubsub('NUMSUB', redisChannelName(prefix, CALLS_DONE_CHANNEL))) as [string, number])[1]);
    expect(await subscribers(notifier.client), 'calls-done subscribed on the notifier').toBeGreaterThanOrEqual(1);
    expect(await subscribers(store.client)).toBe(0);
  });
});

test('a part on a Redis of its own needs REDIS_URL', async () => {
  await expect(startTestGateway({ config: { redisUrl: '', redisFor: { run: 'redis://127.0.0.1:6379' } } })).rejects.toThrow(
    'HOLON_REDIS_URL_RUN needs REDIS_URL set',
  );
});
