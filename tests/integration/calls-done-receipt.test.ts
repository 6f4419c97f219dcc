/**
 * The `calls-done` notice carries the receipt the settler committed (shared/calls/wire.ts `callsDoneNotice`), so the
 * request waiting for it answers without reading it again (shared/calls/answer/waiter.ts `receiptOf`). What it carries is
 * exactly what the database holds (the children of a delegation here); a parent, whose tree has children, is announced
 * by id only and read. A call admitted, run and settled in one process is heard there with its receipt before its
 * notice is published (`heard`), and published by id only: its answer is still the committed receipt. A bare id, a
 * notice that does not parse and one naming another call are read from the database too.
 */
import { describe, expect } from 'vitest';
import { CALLS_DONE_CHANNEL, callsDoneNotice, readCallsDone } from '../../shared/calls/wire.js';
import { createCallWaiter } from '../../shared/calls/answer/waiter.js';
import { createMemoryNotifier } from '../../shared/messaging/notifier.js';
import { loadReceiptTree, type ReceiptView } from '../../shared/receipts/store.js';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import type { CallRan } from '../support/http.js';

const MANDATE = { allow: { agents: ['examples/*'], capabilities: ['text.*'] }, delegation: { max_depth: 1 } };

test('every receipt a notice carries is the one in the database, and the answer is that receipt', async ({ gateway: g }) => {
  const carried = new Map<string, ReceiptView>();
  const bare: string[] = [];
  const unsubscribe = await g.gw.context.messaging.notifier.subscribe(CALLS_DONE_CHANNEL, (message) => {
    const notice = readCallsDone(message);
    const receipt = notice.receipt();
    if (receipt) carried.set(notice.callId, receipt);
    else bare.push(notice.callId);
  });
  try {
    await g.mandate(MANDATE);
    const answers = [
      await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'hi' } }),
      await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode: 'declared_billed' } }),
      await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode: 'crash' } }),
      await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/invoice-pipeline', input: { text: 'Invoice 42', to: 'fr' } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 502, 502, 200]);
    const [ok, billed, crashed, pipeline] = answers.map((a) => a.body.receipt as ReceiptView);
    // The pipeline's two children (settled on their own, under a parent) were announced with their receipts; the
    // pipeline itself (children) by id; the top-level calls answered here by id (their answers heard the receipt here).
    expect(pipeline!.children).toHaveLength(2);
    expect(bare.sort()).toEqual([ok!.id, billed!.id, crashed!.id, pipeline!.id].sort());
    expect([...carried.keys()].sort()).toEqual(pipeline!.children.map((c) => c.id).sort());
    for (const [id, receipt] of carried) expect(receipt).toEqual(await loadReceiptTree(g.gw.context.db, id));
    for (const answer of answers) expect(answer.body.receipt).toEqual(await loadReceiptTree(g.gw.context.db, answer.body.receipt.id));
    expect(billed!).toMatchObject({ status: 'failed', billed: true });
    expect(crashed!).toMatchObject({ status: 'failed', billed: false, cost: { own: '0.00', total: '0.00' } });
  } finally {
    await unsubscribe();
  }
});

describe('what the waiter answers', () => {
  test('the carried receipt without a read; a bare id, garbage or another call’s receipt: the row', async ({ gateway: g }) => {
    await g.mandate({});
    const real = await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'row' } });
    const stored = (await loadReceiptTree(g.gw.context.db, real.body.receipt.id))!;
    const notifier = createMemoryNotifier();
    const waiter = await createCallWaiter(g.gw.context.db, notifier);
    try {
      // A call the database does not know: only the notice can have answered it.
      const unknown = { ...stored, id: 'rcpt_not_in_the_database' };
      const fromNotice = waiter.receiptOf(unknown.id, 5_000);
      await notifier.publish(CALLS_DONE_CHANNEL, callsDoneNotice(unknown.id, unknown));
      expect(await fromNotice).toEqual(unknown);

      for (const message of [stored.id, `${stored.id}\n{not json`, callsDoneNotice(stored.id, { ...stored, id: 'rcpt_someone_else' })]) {
        const waited = waiter.receiptOf(stored.id, 5_000);
        await notifier.publish(CALLS_DONE_CHANNEL, message);
        expect(await waited).toEqual(stored);
      }
      // A wait that times out reads the row too (a call that finished while its notice was lost).
      expect(await waiter.receiptOf(stored.id, 10)).toEqual(stored);
    } finally {
      await waiter.close();
      await notifier.close();
    }
  });
});
