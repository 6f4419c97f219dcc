/**
 * Waiting for calls to finish, for synchronous answers: ONE notifier subscription per API process, with
 * local fan-out to the requests waiting on each call id — never a connection per request.
 */
import type { Db } from '../db/connect.js';
import { CALLS_DONE_CHANNEL } from './jobs.js';
import type { Notifier } from '../messaging/types.js';

export interface CallWaiter {
  /** Resolves true when the call's receipt exists, false when `timeoutMs` passes first. */
  wait(callId: string, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function createCallWaiter(db: Db, notifier: Notifier): Promise<CallWaiter> {
  const waiting = new Map<string, Set<(done: boolean) => void>>();
  const unsubscribe = await notifier.subscribe(CALLS_DONE_CHANNEL, (callId) => {
    const set = waiting.get(callId);
    if (!set) return;
    waiting.delete(callId);
    for (const resolve of set) resolve(true);
  });
  return {
    async wait(callId, timeoutMs) {
      const done = new Promise<boolean>((resolve) => {
        const set = waiting.get(callId) ?? new Set();
        const timer = setTimeout(() => {
          set.delete(settle);
          if (set.size === 0) waiting.delete(callId);
          resolve(false);
        }, timeoutMs);
        const settle = (v: boolean) => {
          clearTimeout(timer);
          resolve(v);
        };
        set.add(settle);
        waiting.set(callId, set);
      });
      // The call may have finished before we subscribed: the receipt row is the truth.
      const receipt = await db('receipts').where({ id: callId }).first('id');
      if (receipt) {
        const set = waiting.get(callId);
        if (set) {
          waiting.delete(callId);
          for (const resolve of set) resolve(true);
        }
      }
      return done;
    },
    async close() {
      for (const set of waiting.values()) for (const resolve of set) resolve(false);
      waiting.clear();
      await unsubscribe();
    },
  };
}
