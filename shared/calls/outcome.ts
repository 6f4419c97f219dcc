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

/** A call that ends without being billed: a gateway failure, a restart, a cancellation. */
export function unbilled(code: UnbilledCode): CallOutcome {
  return { kind: 'failure', code, billed: false, own: '0', duration_ms: 0 };
}
