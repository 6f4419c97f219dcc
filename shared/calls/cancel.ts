/**
 * Cancelling a call on the caller's behalf: an MCP client's `notifications/cancelled` (spec/mcp.md §3), the REST
 * `POST /v0/calls/{id}/cancel` and an MCP `tasks/cancel` all come here. A cancelled call is `failed / cancelled`,
 * never billed, its hold released by the settler.
 *
 *   queued   → closed right here (queued → settling): no runner will invoke the agent.
 *   running  → the runner that holds it is told, wherever it runs: a mark in the ephemeral store (the truth, for
 *              a runner that has not started watching yet) plus a notification (the prompt path). The runner
 *              aborts the run's signal with a cancel reason, so the agent sees the cancellation exactly as at
 *              a timeout, and the runtime reports `cancelled` (shared/calls/run/cancel-watcher.ts).
 *   pending approval (a receipt, no call row, nothing held) → its approval is rejected: nobody can run it any more.
 *   anything else (settling, done): too late, nothing happens.
 *
 * Which one wins a race with the agent's answer is decided by the call row (one conditional UPDATE closes a call):
 * a run whose agent answered first settles as it ran, billed as its manifest says; a run aborted first ends
 * `cancelled`, unbilled. The receipt says which, so an answer about a cancellation reads it (`cancelState`) and
 * never guesses.
 */
import type { CallEngine, CallResources } from './engine-types.js';
import { decideApproval } from './submit/approvals.js';
import { CALLS_CANCEL_CHANNEL, cancelKey, cancelNotice, inputKey } from './wire.js';
import type { CancelWhy } from '../runtimes/abort.js';
import { callStatus } from './transitions.js';
import { unbilled } from './call-outcome.js';
import type { CallWaiter } from './answer/waiter.js';

/** A cancel mark outlives any run (timeout_s ≤ 300). */
const CANCEL_MARK_TTL_S = 900;
/** How long a cancel answered to a caller waits for the call's final state before it answers `cancelling`. */
const CANCEL_WAIT_MS = 5_000;

export type CancelOutcome = 'cancelled' | 'signalled' | 'too_late';

/**
 * `why`: the caller cancelled, or — a call streamed to its caller — the caller went away and did not come back within
 * HOLON_STREAM_RESUME_S (shared/calls/events/, the receipt's `ended_by: disconnected`). Billed alike: nothing, except
 * the units a per_unit stream delivered.
 */
export async function requestCancel(engine: CallEngine, callId: string, why: CancelWhy = 'cancelled'): Promise<CancelOutcome> {
  const ctx = engine.resources;
  const outcome = unbilled('cancelled');
  const closed = await engine.close(
    callId,
    'queued',
    why === 'disconnected' ? { ...outcome, stream: { delivered: { chunks: 0, units: '0' }, ended_by: why } } : outcome,
  );
  if (closed) {
    await ctx.messaging.store.delete(inputKey(callId));
    return 'cancelled';
  }
  const status = await callStatus(ctx.db, callId);
  if (status === undefined) return (await withdrawApproval(ctx, callId)) ? 'cancelled' : 'too_late';
  if (status !== 'running') return 'too_late';
  await ctx.messaging.store.put(cancelKey(callId), why, CANCEL_MARK_TTL_S);
  await ctx.messaging.notifier.publish(CALLS_CANCEL_CHANNEL, cancelNotice(callId, why));
  return 'signalled';
}

/** A request held for approval (its receipt `pending_approval`): the approval is rejected, its input erased. */
async function withdrawApproval(ctx: CallResources, receiptId: string): Promise<boolean> {
  const receipt = await ctx.db('receipts').where({ id: receiptId, status: 'pending_approval' }).first('approval_id');
  if (!receipt?.approval_id) return false;
  return (await decideApproval(ctx.db, String(receipt.approval_id), 'reject', ctx.now())) !== null;
}

/**
 * What a cancellation came to, read from the receipt (the truth): `cancelled` (the call ended `cancelled`, unbilled,
 * or its pending approval was withdrawn), `too_late` (it ended otherwise, as it ran), `cancelling` (asked, not final).
 */
export type CancelState = 'cancelled' | 'cancelling' | 'too_late';

export function cancelState(receipt: { status: string; error?: string | null } | null, approvalStatus?: string): CancelState {
  if (!receipt) return 'cancelling';
  if (receipt.status === 'failed' && receipt.error === 'cancelled') return 'cancelled';
  if (receipt.status === 'pending_approval' && approvalStatus === 'rejected') return 'cancelled';
  return 'too_late';
}

/**
 * Cancel, then wait (at most `waitMs`, or until `signal` fires) for the call's final state, so that the caller is
 * answered with the receipt in the common case. Idempotent: a second cancel, or one after the end, changes nothing.
 */
export async function cancelAndWait(
  engine: CallEngine,
  waiter: CallWaiter,
  callId: string,
  options: { waitMs?: number; signal?: AbortSignal } = {},
): Promise<CancelOutcome> {
  const outcome = await requestCancel(engine, callId);
  // A withdrawn approval is final at once; otherwise the settler writes the receipt.
  if (outcome !== 'too_late' || (await callStatus(engine.resources.db, callId)) === 'settling') {
    await waiter.wait(callId, options.waitMs ?? CANCEL_WAIT_MS, options.signal ? { signal: options.signal } : {});
  }
  return outcome;
}
