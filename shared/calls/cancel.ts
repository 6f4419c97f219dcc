/**
 * Cancelling a call on the caller's behalf (spec/mcp.md §3: an MCP client's `notifications/cancelled`).
 * A cancelled call is `failed / cancelled`, never billed, its hold released by the settler.
 *
 *   queued   → closed right here (queued → settling): no runner will invoke the agent.
 *   running  → the runner that holds it is told, wherever it runs: a mark in the ephemeral store (the truth, for
 *              a runner that has not started watching yet) plus a notification (the prompt path). The runner
 *              aborts the run's signal with a cancel reason, so the agent sees the cancellation exactly as at
 *              a timeout, and the runtime reports `cancelled`.
 *   anything else (settling, done): too late, nothing happens.
 */
import type { Notifier, EphemeralStore } from '../messaging/types.js';
import { cancelReason } from '../../services/runner/runtimes/node.js';
import { inputKey, type GatewayContext } from '../context.js';
import { closeCall } from '../../services/runner/run-call.js';

export const CALLS_CANCEL_CHANNEL = 'calls-cancel';
export const cancelKey = (callId: string): string => `cancel:${callId}`;
/** A cancel mark outlives any run (timeout_s ≤ 300). */
const CANCEL_MARK_TTL_S = 900;

export type CancelOutcome = 'cancelled' | 'signalled' | 'too_late';

export async function requestCancel(ctx: GatewayContext, callId: string): Promise<CancelOutcome> {
  const closed = await closeCall(ctx, callId, 'queued', { kind: 'failure', code: 'cancelled', billed: false, own: '0', duration_ms: 0 });
  if (closed) {
    await ctx.messaging.store.delete(inputKey(callId));
    return 'cancelled';
  }
  const row = await ctx.db('calls').where({ id: callId }).first('status');
  if (row?.status !== 'running') return 'too_late';
  await ctx.messaging.store.put(cancelKey(callId), '1', CANCEL_MARK_TTL_S);
  await ctx.messaging.notifier.publish(CALLS_CANCEL_CHANNEL, callId);
  return 'signalled';
}

export interface CancelWatch {
  /** Aborts (with a cancel reason) when someone cancels the call. */
  signal: AbortSignal;
  release(): void;
}

/** One per runner process: one subscription, fanned out to the runs it holds. */
export interface CancelWatcher {
  watch(callId: string): Promise<CancelWatch>;
  close(): Promise<void>;
}

export async function createCancelWatcher(notifier: Notifier, store: EphemeralStore): Promise<CancelWatcher> {
  const running = new Map<string, AbortController>();
  const cancel = (callId: string): void => {
    const controller = running.get(callId);
    if (controller && !controller.signal.aborted) controller.abort(cancelReason('the caller cancelled the call'));
  };
  const unsubscribe = await notifier.subscribe(CALLS_CANCEL_CHANNEL, cancel);
  return {
    async watch(callId) {
      const controller = new AbortController();
      running.set(callId, controller);
      // A cancel that arrived before this run started watching left its mark.
      if ((await store.peek(cancelKey(callId))) !== undefined) cancel(callId);
      return {
        signal: controller.signal,
        release: () => {
          if (running.get(callId) === controller) running.delete(callId);
        },
      };
    },
    async close() {
      running.clear();
      await unsubscribe();
    },
  };
}
