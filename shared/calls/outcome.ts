/** What a call's run decided, stored on the call row (never the output) and read by the settler. */
export interface CallOutcome {
  kind: 'success' | 'declared_error' | 'failure';
  code?: string;
  billed: boolean;
  /** Charged for the agent's own work, micro-units of the mandate currency, as a string. */
  own: string;
  duration_ms: number;
}

/** Failures that are never billed: the gateway's own (an error, a restart, a cancellation) and an agent_error. */
export type UnbilledCode = 'gateway_error' | 'gateway_restarted' | 'cancelled' | 'agent_error';

/**
 * Outcomes the agent did not cause: the gateway failed, restarted, or the caller cancelled. They are recorded
 * (receipt, call event) but never count in the agent's record: not as runs, not in its success rate, cost per
 * successful run or ranking (shared/catalogue/agent-record.ts).
 */
export const NOT_THE_AGENTS_DOING: readonly UnbilledCode[] = ['gateway_error', 'gateway_restarted', 'cancelled'];

/** A call that ends without being billed: a gateway failure, a restart, a cancellation, an agent error. */
export function unbilled(code: UnbilledCode): CallOutcome {
  return { kind: 'failure', code, billed: false, own: '0', duration_ms: 0 };
}
