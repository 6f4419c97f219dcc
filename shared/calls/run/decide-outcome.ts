/**
 * From what the agent did to what the call is worth (gateway.md §2), pure: the output checked against the
 * manifest's `interface.output`, the agent's error code checked for its shape, then `charge` decides what is
 * billed. Nothing here touches the database or the clock.
 */
import { compileInterface } from '../../core/manifest/interface-validator.js';
import { isErrorCode } from '../../core/manifest/schema.js';
import { RESERVED_ERROR_CODES, type Manifest } from '../../core/manifest/types.js';
import { charge, chargeDelivered, type MandateBudget, type Outcome } from '../../core/pricing.js';
import { unbilled, type CallOutcome } from '../call-outcome.js';
import type { RunResult } from '../../runtimes/types.js';
import type { CancelWhy } from '../../runtimes/abort.js';
import type { EndedBy } from '../events/types.js';
import { type StreamState, streamRecord } from './stream-state.js';

const RESERVED: ReadonlySet<string> = new Set(RESERVED_ERROR_CODES);

export interface DecidedOutcome {
  outcome: Omit<CallOutcome, 'duration_ms'>;
  /** The output to hand over, only for a success. */
  output?: unknown;
  /** Why the reported usage was refused (the call then failed `agent_error`), for the log. */
  refusedUsage?: string;
}

export function decideOutcome(manifest: Manifest, result: RunResult, budget: MandateBudget, maxCost: bigint | undefined): DecidedOutcome {
  let outcome: Outcome;
  let output: unknown;
  const usage = (r: { units?: bigint; quote?: bigint }) => ({
    ...(r.units !== undefined ? { units: r.units } : {}),
    ...(r.quote !== undefined ? { quote: r.quote } : {}),
  });
  if (result.kind === 'output') {
    const problems = compileInterface(manifest).output(result.output);
    if (problems.length) outcome = { kind: 'failure', code: 'invalid_output' };
    else {
      outcome = { kind: 'success', ...usage(result) };
      output = result.output;
    }
  } else if (result.kind === 'error' && (!isErrorCode(result.code) || RESERVED.has(result.code))) {
    // An agent's error code lands in receipts: one that is not a plain snake_case code is an agent error, and so is
    // one of the gateway's own codes (an agent saying `gateway_error` or `cancelled` would keep its failure out of
    // its Agent Record, and possibly out of its bill).
    outcome = { kind: 'failure', code: 'agent_error' };
  } else if (result.kind === 'error') {
    outcome = { kind: 'declared_error', code: result.code, ...usage(result) };
  } else {
    outcome = { kind: 'failure', code: result.code };
  }

  try {
    const c = charge(manifest, outcome, budget, maxCost);
    const code = outcome.kind === 'declared_error' || outcome.kind === 'failure' ? outcome.code : undefined;
    // The gateway's own words on an endpoint it could not reach (never an agent's text): the answer repeats them.
    const detail = result.kind === 'failure' && result.code === 'runtime_unavailable' ? result.message : undefined;
    return {
      outcome: { kind: outcome.kind, ...(code ? { code } : {}), billed: c.billed, own: c.own.toString(), ...(detail ? { detail } : {}) },
      ...(output !== undefined ? { output } : {}),
    };
  } catch (e) {
    return { outcome: unbilled('agent_error'), refusedUsage: (e as Error).message };
  }
}

/** How the run that streamed or asked was told apart at its end (run-call.ts). */
export interface StreamedRun {
  state: StreamState;
  /** Why the call was cancelled, when it was: its caller's cancel, or a streamed caller that went away. */
  cancelWhy?: CancelWhy;
  /** The caller asked for the call's stream (`Accept: text/event-stream`). */
  streamed?: boolean;
}

/**
 * The outcome of a run that may have streamed or asked (docs/lifecycle.md, "How a stream ends"): a run that did
 * neither, of an agent that declares no stream, is decided as always. Otherwise the receipt records what was delivered
 * and how the call ended, and a stream cut before its output (the budget cap, the caller's cancel or disconnect) is
 * billed for the units delivered under per_unit and nothing under any other model; an unanswered question, an agent
 * error, a timeout or an invalid chunk are never billed.
 */
export function decideRun(
  manifest: Manifest,
  result: RunResult,
  money: { budget: MandateBudget; maxCost: bigint | undefined },
  run: StreamedRun,
): DecidedOutcome {
  const { state } = run;
  const { budget, maxCost } = money;
  if (!state.active && !manifest.interface.stream && !run.streamed) return decideOutcome(manifest, result, budget, maxCost);
  let decided: DecidedOutcome;
  let endedBy: EndedBy;
  const cut = (code: string): DecidedOutcome => {
    const c = chargeDelivered(manifest, state.units, budget, maxCost);
    return { outcome: { kind: 'failure', code, billed: c.billed, own: c.own.toString() } };
  };
  if (state.ended) {
    endedBy = state.ended.endedBy;
    decided = endedBy === 'budget' ? cut(state.ended.code) : { outcome: { kind: 'failure', code: state.ended.code, billed: false, own: '0' } };
  } else if (result.kind === 'failure' && result.code === 'cancelled') {
    endedBy = run.cancelWhy ?? 'cancelled';
    decided = cut('cancelled');
  } else {
    // A streamed per_unit output that reported no units at its end is billed for the units its chunks delivered.
    const units = (result.kind === 'output' || result.kind === 'error') && result.units === undefined && state.chunks > 0 ? { units: state.units } : {};
    decided = decideOutcome(manifest, { ...result, ...units } as RunResult, budget, maxCost);
    endedBy = decided.outcome.kind === 'success' ? 'completed' : result.kind === 'failure' && result.code === 'timeout' ? 'timeout' : 'error';
  }
  return { ...decided, outcome: { ...decided.outcome, stream: streamRecord(state, endedBy) } };
}
