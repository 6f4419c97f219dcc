import type { StreamRecord } from './events/types.js';

/** What a call's run decided, stored on the call row (never the output) and read by the settler. */
export interface CallOutcome {
  kind: 'success' | 'declared_error' | 'failure';
  code?: string;
  billed: boolean;
  /** Charged for the agent's own work, micro-units of the mandate currency, as a string. */
  own: string;
  duration_ms: number;
  /**
   * runtime_unavailable only: which endpoint could not be reached and how, in the gateway's own words (origin and
   * path, never credentials or a query string: shared/runtimes/remote.ts). The failed call's answer repeats it.
   */
  detail?: string;
  /** A call that streamed or asked its caller: what it delivered and how it ended (the receipt's `delivered`, `ended_by`). */
  stream?: StreamRecord;
}

/**
 * Failures that are never billed: the gateway's own (an error, a restart, a cancellation), an agent_error, and a
 * file the input names that is gone when the run starts (`file_not_found`: deleted or expired after admission).
 */
export type UnbilledCode = 'gateway_error' | 'gateway_restarted' | 'cancelled' | 'agent_error' | 'file_not_found' | 'payment_failed' | 'no_answer';

/**
 * Outcomes the agent did not cause: the gateway failed, restarted, the caller cancelled, or the caller's file was
 * gone before the agent ran, or the payer's payment could not be collected. They are recorded (receipt, call event) but never count in the agent's record: not as
 * runs, not in its success rate, cost per successful run or ranking (shared/catalogue/agent-record.ts).
 */
export const NOT_THE_AGENTS_DOING: readonly string[] = [
  'gateway_error',
  'gateway_restarted',
  'cancelled',
  'file_not_found',
  'payment_failed',
  // A streamed call ended by its caller's budget, or a question its caller never answered.
  'budget_reached',
  'no_answer',
];

/** A call that ends without being billed: a gateway failure, a restart, a cancellation, an agent error. */
export function unbilled(code: UnbilledCode): CallOutcome {
  return { kind: 'failure', code, billed: false, own: '0', duration_ms: 0 };
}

/**
 * A paid call whose payment could not be collected on chain (docs/payments.md): unbilled, whatever the run did, with
 * `payment_failed`; its run's duration is kept. The agent is not to blame, so its record does not count it.
 */
export function paymentFailed(outcome: CallOutcome): CallOutcome {
  return {
    kind: 'failure',
    code: 'payment_failed',
    billed: false,
    own: '0',
    duration_ms: outcome.duration_ms,
    ...(outcome.stream ? { stream: outcome.stream } : {}),
  };
}
