/**
 * How an admitted, refused, finished or replayed call is answered over HTTP (gateway.md §5), in one place:
 * 200 succeeded · 202 pending approval, async, or still running past the sync bound · 403 denied ·
 * 404 unknown mandate or agent · 409/422 an Idempotency-Key that cannot replay · 422 rejected input ·
 * 502 the agent failed (with its receipt).
 */
import type { Request, Response } from 'express';
import { HolonError } from '../../../../shared/core/errors.js';
import { httpStatusOf } from '../../http-status.js';
import type { ServiceContext } from '../../../../shared/context.js';
import type { Submitted } from '../../../../shared/calls/submit/submit.js';
import { handOutput, outputFields, readOutput } from '../../../../shared/calls/answer/outputs.js';
import { callStatus } from '../../../../shared/calls/transitions.js';
import type { CallWaiter } from '../../../../shared/calls/answer/waiter.js';
import type { CallEngine } from '../../../../shared/calls/engine-types.js';
import { STALE_CLAIM_MS, type IdempotencyRow } from '../../../../shared/calls/submit/idempotency.js';
import { describeFailure, failureDetail, loadReceiptTree, type ReceiptView } from '../../../../shared/receipts/store.js';

export interface AnswerDeps {
  ctx: ServiceContext;
  /** The call engine (shared/calls/engine.ts), with the API's waiter: submit, answer, cancel. */
  engine: CallEngine;
  waiter: CallWaiter;
  /** The longest a synchronous request waits before answering 202 (HOLON_SYNC_WAIT_S). */
  syncWaitMs: number;
}

/** `Prefer: respond-async` asks for 202 at once. */
export function wantsAsync(req: Request): boolean {
  return /\brespond-async\b/i.test(req.get('prefer') ?? '');
}

/** Answer a submission as POST /v0/calls does: refusals, 202 async, or wait (bounded) for the outcome. */
export async function answerSubmission(
  deps: AnswerDeps,
  res: Response,
  submitted: Submitted,
  how: {
    async: boolean;
    /** Headers a finished call's answer carries besides (a paid call's PAYMENT-RESPONSE: paid.ts). */
    decorate?: (receipt: ReceiptView) => Promise<void>;
  },
): Promise<void> {
  const { async, decorate } = how;
  if (submitted.kind === 'held') {
    res.status(202).json({ status: 'pending_approval', approval: submitted.approval, receipt: submitted.receipt });
    return;
  }
  if (submitted.kind === 'refused') {
    const { code, message, problems, receipt } = submitted;
    res.status(httpStatusOf(code)).json({ error: { code, message, ...(problems ? { problems } : {}) }, receipt });
    return;
  }
  const { callId, timeoutMs } = submitted;
  if (async) {
    res
      .status(202)
      .location(`/v0/calls/${callId}`)
      .json({ status: 'queued', call: { id: callId, status: 'queued' } });
    return;
  }
  // The receipt decides, not the notification: the one the settler committed (carried by its notice) or, without
  // one, the row — a call that finished while its notice was lost is answered as finished; 202 only ever says a call
  // is still on its way (queued, running, settling).
  const receipt = await deps.engine.answer(callId, Math.min(timeoutMs + 5_000, deps.syncWaitMs), { queuedHere: true });
  if (receipt) {
    await decorate?.(receipt);
    await answerFinished(deps.ctx, res, receipt);
    return;
  }
  const status = (await callStatus(deps.ctx.db, callId)) ?? 'queued';
  // `Location`: the call's state URL (GET it, with ?wait= to long-poll), whichever API process answers it.
  res
    .status(202)
    .location(`/v0/calls/${callId}`)
    .json({ status, call: { id: callId, status } });
}

/**
 * A repeated Idempotency-Key: the original receipt, with a success's output while it is kept (read, not handed
 * over: the retry of a request whose answer was lost gets what it would have got), or 409/422
 * (shared/calls/submit/idempotency.ts).
 */
export async function answerReplay(ctx: ServiceContext, res: Response, row: IdempotencyRow, hash: string): Promise<void> {
  if (row.requestHash !== hash) {
    throw new HolonError('idempotency_key_reused', 'this Idempotency-Key was used for a different request; use a new key for a new request');
  }
  const interrupted = new HolonError(
    'idempotency_key_interrupted',
    'the call under this Idempotency-Key was interrupted by a restart and its outcome is unknown: check GET /v0/receipts before sending it again with a new key',
  );
  if (row.status === 'interrupted') throw interrupted;
  if (row.callId === null) {
    if (ctx.now() - row.createdAt.getTime() > STALE_CLAIM_MS) throw interrupted;
    throw new HolonError('idempotency_key_in_use', 'the call under this Idempotency-Key is still running');
  }
  const receipt = await loadReceiptTree(ctx.db, row.callId);
  if (!receipt) throw new HolonError('idempotency_key_in_use', `the call under this Idempotency-Key is still running (call ${row.callId})`);
  if (receipt.error === 'gateway_restarted') throw interrupted;
  if (row.refused) {
    res.status(row.refused.status).json({
      replayed: true,
      status: receipt.status,
      ...(receipt.status === 'pending_approval' ? {} : { error: { code: row.refused.code, message: receipt.reasons[0] ?? row.refused.code } }),
      receipt,
    });
    return;
  }
  res.status(receipt.status === 'succeeded' ? 200 : 502).json({
    replayed: true,
    status: receipt.status,
    ...(receipt.status === 'succeeded'
      ? outputFields(await readOutput(ctx, receipt.id))
      : { error: describeFailure(receipt, await failureDetail(ctx.db, receipt)) }),
    receipt,
  });
}

async function answerFinished(ctx: ServiceContext, res: Response, receipt: ReceiptView): Promise<void> {
  // The client that waited went away: nobody is handed the output, it stays for a retry (Idempotency-Key) or GET.
  if (receipt.status === 'succeeded' && res.destroyed) return;
  res.status(receipt.status === 'succeeded' ? 200 : 502).json(await finishedBody(ctx, receipt, { handOver: true }));
}

/**
 * A finished call's answer: its status, a success's output (handed over to the synchronous answer, or only read) or
 * a failure's words, and the receipt. The body of a synchronous 200/502 and of a stream's `completed` event.
 */
export async function finishedBody(ctx: ServiceContext, receipt: ReceiptView, how: { handOver: boolean }): Promise<Record<string, unknown>> {
  if (receipt.status === 'succeeded') {
    const output = how.handOver ? await handOutput(ctx, receipt.id, 'sync') : await readOutput(ctx, receipt.id);
    return { status: receipt.status, ...outputFields(output), receipt };
  }
  return { status: receipt.status, error: describeFailure(receipt, await failureDetail(ctx.db, receipt)), receipt };
}
