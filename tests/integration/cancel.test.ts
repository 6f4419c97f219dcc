/**
 * Cancelling a call (shared/calls/cancel.ts): a queued call is closed on the spot; a running one is aborted by
 * whichever runner holds it, told through Redis; either way it ends failed / cancelled, unbilled, hold released.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { requestCancel } from '../../shared/calls/cancel.js';
import { cancelKey } from '../../shared/calls/wire.js';
import { createCancelWatcher } from '../../shared/calls/run/cancel-watcher.js';
import { inputKey } from '../../shared/calls/wire.js';
import { createMemoryStore } from '../../shared/messaging/ephemeral.js';
import { createMemoryNotifier } from '../../shared/messaging/notifier.js';
import { isCancel } from '../../shared/runtimes/abort.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import type { Schema } from '../support/http.js';

async function receiptOf(g: TestGateway, id: string): Promise<any> {
  return poll(
    async () => {
      const r = await g.get(`/v0/receipts/${id}`);
      return r.status === 200 ? r.body : undefined;
    },
    { what: `the receipt of ${id}`, timeoutMs: 15_000, intervalMs: 25 },
  );
}

describe('cancelling calls', () => {
  test('a queued call is closed at once: no runner ever invokes it, its input is gone, nothing is billed', async () => {
    // No runner: the call stays queued until cancelled.
    await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
      await g.mandate({});
      const queued = await g.post<Schema<'CallQueued'>>(
        '/v0/calls',
        { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } },
        { prefer: 'respond-async' },
      );
      expect(queued.status).toBe(202);
      const id = queued.body.call.id;
      expect(await requestCancel(g.gw.engine, id)).toBe('cancelled');
      expect(await g.gw.context.messaging.store.peek(inputKey(id))).toBeUndefined();
      expect(await receiptOf(g, id)).toMatchObject({ status: 'failed', error: 'cancelled', billed: false });
      expect(await requestCancel(g.gw.engine, id)).toBe('too_late');
      expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
    });
  });

  test('a running call is aborted by the runner that holds it, told through Redis from another service', async () => {
    await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
      let runner: TestGateway | undefined;
      try {
        runner = await startTestGateway({ beside: g, roles: ['runner'] });
        await g.mandate({});
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-cancel-')), 'patient.log');
        const queued = await g.post<Schema<'CallQueued'>>(
          '/v0/calls',
          { mandate: 'alice/test', agent: 'fixtures/patient', input: { file, ms: 20_000 } },
          { prefer: 'respond-async' },
        );
        const id = queued.body.call.id;
        // Running, and the agent has started (a cancel before that means the agent is never invoked at all).
        await poll(async () => (await readFile(file, 'utf8').catch(() => '')).includes('started'), {
          what: 'the call to run',
          timeoutMs: 10_000,
          intervalMs: 20,
        });
        expect(await requestCancel(g.gw.engine, id)).toBe('signalled');
        expect(await receiptOf(g, id)).toMatchObject({ status: 'failed', error: 'cancelled', billed: false, cost: { total: '0.00' } });
        expect((await readFile(file, 'utf8')).trim().split('\n')).toEqual(['started', 'aborted:CancelledError']);
        expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
      } finally {
        await runner?.stop();
      }
    });
  });

  test('the watcher: a cancel left before the run starts watching still aborts it; a released run hears nothing', async () => {
    const notifier = createMemoryNotifier();
    const store = createMemoryStore();
    const watcher = await createCancelWatcher(notifier, store);
    try {
      await store.put(cancelKey('early'), '1', 60);
      const early = await watcher.watch('early');
      expect(early.signal.aborted).toBe(true);
      expect(isCancel(early.signal.reason)).toBe(true);

      const late = await watcher.watch('late');
      expect(late.signal.aborted).toBe(false);
      await notifier.publish('calls-cancel', 'late');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(late.signal.aborted).toBe(true);

      const released = await watcher.watch('released');
      released.release();
      await notifier.publish('calls-cancel', 'released');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(released.signal.aborted).toBe(false);
    } finally {
      await watcher.close();
      await notifier.close();
      await store.close();
    }
  });
});
