/**
 * Waiting for calls to finish, for synchronous answers and long-polls: ONE notifier subscription per API process,
 * with local fan-out to the requests waiting on each call id — never a connection per request. The receipt row is
 * the truth: a waiter registers before it reads the row, so a call that finished just before is not missed, and
 * whoever is woken reads the database again — unless the notice carried the receipt the settler committed
 * (`receiptOf`).
 */
import type { Db } from '../../db/connect.js';
import { loadReceiptTree, type ReceiptView } from '../../receipts/store.js';
import { CALLS_DONE_CHANNEL, readCallsDone } from '../wire.js';
import type { Notifier } from '../../messaging/types.js';

export interface CallWaiter {
  /**
   * Resolves true when the call's receipt exists, false when `timeoutMs` passes first or `signal` fires (a client
   * that went away: its place is released at once).
   */
  wait(callId: string, timeoutMs: number, options?: WaitOptions): Promise<boolean>;
  /**
   * Waits as `wait`, then answers the call's receipt tree: the one its `calls-done` notice carried (the settler's
   * own, wire.ts `callsDoneNotice`), else read from the database; null when the call has not finished.
   */
  receiptOf(callId: string, timeoutMs: number, options?: WaitOptions): Promise<ReceiptView | null>;
  /**
   * A call settled in this very process, heard before its `calls-done` notice is published: its waiters here wake with
   * its receipt as committed (not serialised), without the round trip through the notifier (the published notice,
   * heard again later, finds nobody left to wake).
   */
  heard(callId: string, receipt: ReceiptView | undefined): void;
  close(): Promise<void>;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /**
   * The caller queued this call itself just now, while the waiter was subscribed (a synchronous POST /v0/calls): any
   * end since then was heard, so the notices of the last seconds stand in for the receipt read. A notice lost on the
   * way ends the wait at its timeout, after which the caller reads the receipt, as for any wait.
   */
  queuedHere?: boolean;
}

/** How long, and how many, `calls-done` notices are remembered for `queuedHere` waits. */
const RECENT_MS = 30_000;
const RECENT_MAX = 100_000;

/** How a wait ended: not finished (timeout, signal, close), or finished — with the receipt its notice carried, if any. */
type Woken = { done: false } | { done: true; receipt?: () => ReceiptView | undefined };
const NOT_DONE: Woken = { done: false };
const DONE: Woken = { done: true };

export async function createCallWaiter(db: Db, notifier: Notifier): Promise<CallWaiter> {
  const waiting = new Map<string, Set<(woken: Woken) => void>>();
  // Call ids whose notice arrived in the last RECENT_MS, oldest first (a Map keeps insertion order).
  const recent = new Map<string, number>();
  const remember = (callId: string): void => {
    const now = Date.now();
    recent.delete(callId); // a repeated notice moves to the end
    recent.set(callId, now);
    for (const [id, at] of recent) {
      if (now - at <= RECENT_MS && recent.size <= RECENT_MAX) break;
      recent.delete(id);
    }
  };
  const wake = (callId: string, woken: Woken): void => {
    const set = waiting.get(callId);
    if (!set) return;
    waiting.delete(callId);
    for (const resolve of [...set]) resolve(woken);
  };
  const heard = (callId: string, receipt: (() => ReceiptView | undefined) | ReceiptView | undefined): void => {
    remember(callId);
    wake(callId, { done: true, receipt: typeof receipt === 'function' ? receipt : () => receipt });
  };
  const unsubscribe = await notifier.subscribe(CALLS_DONE_CHANNEL, (message) => {
    const notice = readCallsDone(message);
    heard(notice.callId, notice.receipt);
  });
  const waitFor = async (callId: string, timeoutMs: number, options: WaitOptions): Promise<Woken> => {
    const { signal } = options;
    if (signal?.aborted) return NOT_DONE;
    const done = new Promise<Woken>((resolve) => {
      const set = waiting.get(callId) ?? new Set();
      const settle = (v: Woken): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abandon);
        set.delete(settle);
        if (set.size === 0 && waiting.get(callId) === set) waiting.delete(callId);
        resolve(v);
      };
      const abandon = (): void => settle(NOT_DONE);
      const timer = setTimeout(abandon, timeoutMs);
      signal?.addEventListener('abort', abandon, { once: true });
      set.add(settle);
      waiting.set(callId, set);
    });
    // The call may have finished before we registered: the receipt row is the truth (or, for a call queued here
    // just now, the notices heard since).
    if (options.queuedHere ? recent.has(callId) : await db('receipts').where({ id: callId }).first('id')) wake(callId, DONE);
    return done;
  };
  return {
    heard,
    wait: async (callId, timeoutMs, options = {}) => (await waitFor(callId, timeoutMs, options)).done,
    async receiptOf(callId, timeoutMs, options = {}) {
      const woken = await waitFor(callId, timeoutMs, options);
      // The notice's receipt is the settler's own, as committed; without one (or after a timeout) the row decides.
      return (woken.done ? woken.receipt?.() : undefined) ?? loadReceiptTree(db, callId);
    },
    async close() {
      recent.clear();
      for (const callId of [...waiting.keys()]) wake(callId, NOT_DONE);
      await unsubscribe();
    },
  };
}
