/**
 * The queues between the services and what their jobs carry: call ids only, never inputs or outputs.
 * The input and the output of a call wait in the ephemeral store under these keys, for a bounded time.
 */
export const RUN_QUEUE = 'run';
export const SETTLE_QUEUE = 'settle';
export const CALLBACK_QUEUE = 'callback';
/** Notifier channel: message = a call id whose receipt was just written. */
export const CALLS_DONE_CHANNEL = 'calls-done';

export interface CallJob {
  callId: string;
}

export const inputKey = (callId: string): string => `input:${callId}`;
export const outputKey = (callId: string): string => `output:${callId}`;
