/**
 * The call's wire formats and keys: the queues between the roles and what their jobs carry (call ids only, never
 * inputs or outputs), the notifier channels and their messages, and the ephemeral store's keys — the input and the
 * output of a call wait there for a bounded time, a cancellation leaves its mark there.
 */
import type { ReceiptView } from '../receipts/store.js';

export const RUN_QUEUE = 'run';
export const SETTLE_QUEUE = 'settle';
export const CALLBACK_QUEUE = 'callback';
/** Notifier channel: a call whose receipt was just written (`callsDoneNotice`). */
export const CALLS_DONE_CHANNEL = 'calls-done';

/**
 * A `calls-done` message: the call id, then — for a receipt without children, as the settler wrote it — a newline
 * and the receipt as the API shows it (a receipt holds no input or output), so the request waiting for it answers
 * without reading it again. A bare id (a receipt with children, or a process of an earlier version) means "read it".
 */
export function callsDoneNotice(callId: string, receipt?: ReceiptView): string {
  return receipt ? `${callId}\n${JSON.stringify(receipt)}` : callId;
}

/** A `calls-done` message's call id, and a reader of the receipt it carries (parsed only when someone asks). */
export function readCallsDone(message: string): { callId: string; receipt(): ReceiptView | undefined } {
  const cut = message.indexOf('\n');
  if (cut < 0) return { callId: message, receipt: () => undefined };
  return {
    callId: message.slice(0, cut),
    receipt: () => {
      try {
        const receipt = JSON.parse(message.slice(cut + 1)) as ReceiptView;
        return receipt?.id === message.slice(0, cut) ? receipt : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

export interface CallJob {
  callId: string;
}

/** Notifier channel: a call someone cancelled (shared/calls/cancel.ts), heard by the runner that holds it (run/cancel-watcher.ts). */
export const CALLS_CANCEL_CHANNEL = 'calls-cancel';
/** The cancel mark a runner finds when the cancellation arrived before it started watching. */
export const cancelKey = (callId: string): string => `cancel:${callId}`;

export const inputKey = (callId: string): string => `input:${callId}`;
export const outputKey = (callId: string): string => `output:${callId}`;
