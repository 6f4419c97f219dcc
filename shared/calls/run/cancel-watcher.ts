/**
 * Hears cancellations for the runs this runner process holds (shared/calls/cancel.ts says who cancels): one
 * notifier subscription per process, fanned out to the runs; a cancel that arrived before a run started
 * watching left its mark in the ephemeral store.
 */
import type { EphemeralStore, Notifier } from '../../messaging/types.js';
import { CALLS_CANCEL_CHANNEL, cancelKey, readCancelNotice } from '../wire.js';
import { cancelReason, type CancelWhy } from '../../runtimes/abort.js';

interface CancelWatch {
  /** Aborts (with a cancel reason) when someone cancels the call. */
  signal: AbortSignal;
  release(): void;
}

/** One per runner process: one subscription, fanned out to the runs it holds. */
export interface CancelWatcher {
  /**
   * `admittedHere`: the call was admitted by this process a moment ago and its id has not left it yet, so no cancel
   * can have come before this watch — there is no mark to look for (shared/calls/run/run-here.ts).
   */
  watch(callId: string, options?: { admittedHere?: boolean }): Promise<CancelWatch>;
  close(): Promise<void>;
}

export async function createCancelWatcher(notifier: Notifier, store: EphemeralStore): Promise<CancelWatcher> {
  const running = new Map<string, AbortController>();
  const cancel = (callId: string, why: CancelWhy = 'cancelled'): void => {
    const controller = running.get(callId);
    if (controller && !controller.signal.aborted) {
      controller.abort(cancelReason(why === 'disconnected' ? 'the caller went away and did not come back' : 'the caller cancelled the call', why));
    }
  };
  const unsubscribe = await notifier.subscribe(CALLS_CANCEL_CHANNEL, (message) => {
    const { callId, why } = readCancelNotice(message);
    cancel(callId, why);
  });
  return {
    async watch(callId, options = {}) {
      const controller = new AbortController();
      running.set(callId, controller);
      // A cancel that arrived before this run started watching left its mark.
      const mark = options.admittedHere ? undefined : await store.peek(cancelKey(callId));
      if (mark !== undefined) cancel(callId, mark === 'disconnected' ? 'disconnected' : 'cancelled');
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
