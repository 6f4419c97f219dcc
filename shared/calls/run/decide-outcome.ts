/**
 * From what the agent did to what the call is worth (gateway.md §2), pure: the output checked against the
 * manifest's `interface.output`, the agent's error code checked for its shape, then `charge` decides what is
 * billed. Nothing here touches the database or the clock.
 */
import { compileInterface } from '../../core/manifest/interface-validator.js';
import { isErrorCode } from '../../core/manifest/schema.js';
import { RESERVED_ERROR_CODES, type Manifest } from '../../core/manifest/types.js';
import { charge, type MandateBudget, type Outcome } from '../../core/pricing.js';
import { unbilled, type CallOutcome } from '../call-outcome.js';
import type { RunResult } from '../../runtimes/types.js';

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
