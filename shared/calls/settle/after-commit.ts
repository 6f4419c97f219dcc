/**
 * After a settlement's commit: the metrics, the parent's turn (its last child settled), the waiters, and the callback
 * job — only a wake-up for the dispatcher: the delivery's row is already written, and the settler's delivery sweep
 * finds it without the job (a process that dies here loses nothing).
 */
import type { ServiceContext } from '../../context.js';
import { runErrorLabel } from '../../platform/metrics.js';
import type { ReceiptView } from '../../receipts/store.js';
import { CALLBACK_QUEUE, CALLS_DONE_CHANNEL, callsDoneNotice, type CallJob } from '../wire.js';
import { enqueueSettle } from '../transitions.js';
import type { PlannedCall } from './plan.js';
import { openChildren } from './rows.js';
import type { WrittenSettlement } from './write.js';

/** What follows one call's commit: its plan's part, and its receipt as written (null when the notice carries none). */
export interface Settled {
  after: PlannedCall['after'];
  receipt: ReceiptView | null;
}

export const settledOf = (planned: PlannedCall, written: WrittenSettlement): Settled => ({
  after: planned.after,
  receipt: planned.after.showsReceipt ? (written.receipts.get(planned.id) ?? null) : null,
});

/** Told of a settled call (and the receipt its notice carries) before the notice is published: this process's waiter. */
export type HeardHere = (callId: string, receipt: ReceiptView | undefined) => void;

/**
 * `answeredHere`: the call was admitted, run and settled in this process (settle.ts `Closing`), so its synchronous
 * answer waits here and hears the receipt from `heard`: the published notice is the bare id (a waiter elsewhere reads
 * the receipt), not the receipt serialised for every call.
 */
export async function afterSettled(
  ctx: ServiceContext,
  callId: string,
  { after, receipt }: Settled,
  here: { heard?: HeardHere; answeredHere?: boolean } = {},
): Promise<void> {
  if (ctx.metrics) {
    const { status, errorCode, agent, handedOffAt } = after.counted;
    ctx.metrics.calls.inc({ status, error_code: runErrorLabel(errorCode), agent });
    if (handedOffAt instanceof Date) ctx.metrics.settleLagSeconds.observe(Math.max(0, ctx.now() - handedOffAt.getTime()) / 1000);
  }
  if (after.parentId) {
    const parent = await ctx.db('calls').where({ id: after.parentId }).first('status');
    if (parent?.status === 'settling' && (await openChildren(ctx.db, after.parentId)) === 0) await enqueueSettle(ctx, after.parentId, ctx.now());
  }
  here.heard?.(callId, receipt ?? undefined);
  await ctx.messaging.notifier.publish(CALLS_DONE_CHANNEL, callsDoneNotice(callId, here.answeredHere ? undefined : (receipt ?? undefined)));
  if (after.callbackUrl) {
    await ctx.messaging.queues.queue<CallJob>(CALLBACK_QUEUE).add({ callId }, { jobId: `callback-${callId}`, attempts: 8, backoffMs: 1000 });
  }
}
