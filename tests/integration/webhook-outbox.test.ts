/**
 * A webhook delivery starts durably (docs/webhooks.md "Retries, durably"; shared/calls/settle/settle.ts,
 * shared/webhooks/deliveries.ts, services/settler/callbacks.ts): the settlement writes the delivery's row in its own
 * transaction, so a settler that dies right after the commit — before the `callback` wake-up is queued — loses no
 * delivery: the next settler to run sends it, once. Both settlement paths (`settleCall` and the batch `settleBatch`),
 * on Redis (BullMQ) and on the in-process queue. The "death" is a context whose callback queue throws on `add`, the
 * settlement's last step after its commit; no settler runs until then, and the one that starts afterwards runs in a
 * process of its own (a gateway beside the first, on its database). Every delivery is verified with
 * `standardwebhooks`, as a receiver would.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { CALLBACK_QUEUE } from '../../shared/calls/wire.js';
import type { Config, WebhookSettings } from '../../shared/platform/config.js';
import { settleBatch, settleCall } from '../../shared/calls/settle/settle.js';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { perTestCleanups } from '../support/cleanups.js';
import { losingJobs } from '../support/lost-jobs.js';
import { poll, sleep } from '../support/poll.js';
import { testWebhookSettings } from '../support/webhook-settings.js';
import { startReceiver as startReceiverOn } from '../support/webhook-receiver.js';
import type { Schema } from '../support/http.js';

const { defer } = perTestCleanups();
const startReceiver = () => startReceiverOn(defer);

type Backend = 'redis' | 'memory';

/** Dev mode, one known secret; `redisUrl: ''` overrides REDIS_URL: the in-process queues, notifier and store. */
function settings(backend: Backend, secret: string): Partial<Config> {
  const webhooks: WebhookSettings = testWebhookSettings({ devSecret: secret });
  return { webhooks, ...(backend === 'memory' ? { redisUrl: '' } : {}) };
}

/** An async call naming the receiver, run by g's runner and left `settling` (g runs no settler). */
async function settlingCall(g: TestGateway, callbackUrl: string, text: string): Promise<string> {
  const r = await g.post<Schema<'CallQueued'>>(
    '/v0/calls',
    { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text }, callback_url: callbackUrl },
    { prefer: 'respond-async' },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const id = r.body.call.id as string;
  await poll(async () => (await g.db.knex('calls').where({ id }).first('status'))?.status === 'settling', { what: `${id} to be settling` });
  return id;
}

describe.each(['redis', 'memory'] as const)('a settler that dies right after the commit (%s)', (backend) => {
  test('settleCall and settleBatch: each delivery is still sent, once, by the next settler to run', async () => {
    const secret = generateWebhookSecret();
    // API and runner only: calls reach `settling` and wait there (no settler, no sweep, no dispatcher).
    await useAudited(await startTestGateway({ roles: ['api', 'runner'], config: settings(backend, secret) }), async (g) => {
      await g.mandate({});
      const hook = await startReceiver();
      const single = await settlingCall(g, hook.url, 'one by one');
      const batched = await settlingCall(g, hook.url, 'in a batch');

      // Each settlement commits, then its process dies before the callback wake-up is queued.
      const dying = losingJobs(g.gw.context, CALLBACK_QUEUE, 'throw');
      await expect(settleCall(dying, single)).rejects.toThrow('the process died');
      await expect(settleBatch(dying, [batched])).rejects.toThrow('the process died');
      const knex = g.db.knex;
      expect(await knex('receipts').whereIn('id', [single, batched]).pluck('status')).toEqual(['succeeded', 'succeeded']);
      // The delivery rows were written with the settlements: pending, never attempted.
      const rows = await knex('webhook_deliveries').whereIn('call_id', [single, batched]).orderBy('id').select('id', 'state', 'steps_made', 'attempts');
      expect(rows).toEqual([single, batched].sort().map((id) => ({ id: `msg_${id}`, state: 'pending', steps_made: 0, attempts: 0 })));
      await sleep(300);
      expect(hook.received).toHaveLength(0);

      // A settler starts (another process on the same database): it finds both rows and sends each once.
      const settler = await startTestGateway({ beside: g, roles: ['settler'], config: settings(backend, secret) });
      try {
        await poll(
          async () =>
            Number((await knex('webhook_deliveries').whereIn('call_id', [single, batched]).where({ state: 'delivered' }).count({ n: '*' }).first())?.n) === 2,
          { what: 'both deliveries delivered', timeoutMs: 15_000 },
        );
        await sleep(700); // longer than the schedule's retries: nothing more may come
        expect(hook.received).toHaveLength(2);
        const bodies = hook.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>);
        for (const [id, text] of [
          [single, 'ONE BY ONE'],
          [batched, 'IN A BATCH'],
        ] as const) {
          const i = bodies.findIndex((b) => b.call.id === id);
          expect(hook.received[i]!.headers['webhook-id']).toBe(`msg_${id}`);
          const body = bodies[i]!;
          expect(body).toMatchObject({
            type: 'call.completed',
            version: 1,
            call: { id, status: 'succeeded' },
            status: 'succeeded',
            receipt: { id, billed: true },
          });
          // The timestamp is when the delivery was opened: the settlement.
          const created = (await knex('webhook_deliveries').where({ call_id: id }).first('created_at')).created_at as Date;
          expect(body.timestamp).toBe(new Date(created).toISOString());
          // On Redis the output waited there for the webhook; the in-process store died with the settling process.
          if (backend === 'redis') expect(body.output).toEqual({ text });
          else expect(body).toMatchObject({ output: null, output_expired: true, output_gone: 'expired' });
        }
        const attempts = await knex('webhook_attempts')
          .whereIn('delivery_id', [`msg_${single}`, `msg_${batched}`])
          .select('attempt', 'status_code');
        expect(attempts).toEqual([
          { attempt: 1, status_code: 204 },
          { attempt: 1, status_code: 204 },
        ]);
      } finally {
        await settler.stop();
      }
    });
  });
});
