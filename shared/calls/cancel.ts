/**
 * Cancelling a call on the caller's behalf (spec/mcp.md §3: an MCP client's `notifications/cancelled`).
 * A cancelled call is `failed / cancelled`, never billed, its hold released by the settler.
 *
 *   queued   → closed right here (queued → settling): no runner will invoke the agent.
 *   running  → the runner that holds it is told, wherever it runs: a mark in the ephemeral store (the truth, for
 *              a runner that has not started watching yet) plus a notification (the prompt path). The runner
 *              aborts the run's signal with a cancel reason, so the agent sees the cancellation exactly as at
 *              a timeout, and the runtime reports `cancelled` (services/runner/cancel-watcher.ts).
 *   anything else (settling, done): too late, nothing happens.
 */
import type { ServiceContext } from '../context.js';
import { inputKey } from './jobs.js';
import { callStatus, closeCall } from './transitions.js';
import { unbilled } from './outcome.js';

export const CALLS_CANCEL_CHANNEL = 'calls-cancel';
export const cancelKey = (callId: string): string => `cancel:${callId}`;
/** A cancel mark outlives any run (timeout_s ≤ 300). */
const CANCEL_MARK_TTL_S = 900;

export type CancelOutcome = 'cancelled' | 'signalled' | 'too_late';

export async function requestCancel(ctx: ServiceContext, callId: string): Promise<CancelOutcome> {
  const closed = await closeCall(ctx, callId, 'queued', unbilled('cancelled'));
  if (closed) {
    await ctx.messaging.store.delete(inputKey(callId));
    return 'cancelled';
  }
  if ((await callStatus(ctx.db, callId)) !== 'running') return 'too_late';
  await ctx.messaging.store.put(cancelKey(callId), '1', CANCEL_MARK_TTL_S);
  await ctx.messaging.notifier.publish(CALLS_CANCEL_CHANNEL, callId);
  return 'signalled';
}
