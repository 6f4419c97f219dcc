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
/** A `calls-cancel` message: the call id, and `\ndisconnected` when a streamed call's caller went away (not a cancel). */
export function cancelNotice(callId: string, why: 'cancelled' | 'disconnected'): string {
  return why === 'disconnected' ? `${callId}\n${why}` : callId;
}

/** A `calls-cancel` message (or a cancel mark's value) read back. */
export function readCancelNotice(message: string): { callId: string; why: 'cancelled' | 'disconnected' } {
  const [callId = '', why] = message.split('\n');
  return { callId, why: why === 'disconnected' ? 'disconnected' : 'cancelled' };
}

/** The cancel mark a runner finds when the cancellation arrived before it started watching (its value: who ended it). */
export const cancelKey = (callId: string): string => `cancel:${callId}`;

export const inputKey = (callId: string): string => `input:${callId}`;
export const outputKey = (callId: string): string => `output:${callId}`;

/** Notifier channel: a running call appended an event to its stream (shared/calls/events/), heard by the API's readers. */
export const CALLS_EVENTS_CHANNEL = 'calls-events';
/** Notifier channel: a question of a running call was answered (shared/calls/events/answer.ts), heard by its runner. */
export const CALLS_INPUT_CHANNEL = 'calls-input';
/** The content of a call's stream event `seq` (a chunk's data, a progress message, a question): never in Postgres. */
export const eventKey = (callId: string, seq: number): string => `event:${callId}:${seq}`;
/** An answer to a call's question, under the reference its question row took (`call_stream_events.answer_ref`). */
export const answerKey = (callId: string, ref: string): string => `answer:${callId}:${ref}`;
/** A call its caller asked to stream (`Accept: text/event-stream`): a cut stream not resumed in time ends it. */
export const streamedKey = (callId: string): string => `streamed:${callId}`;
/** The stream connection that attached to a call last (or refreshed it): a cut is final if nobody attached since. */
export const attachedKey = (callId: string): string => `attached:${callId}`;
