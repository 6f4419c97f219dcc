/**
 * The circuit breaker of one destination host (docs/webhooks.md, "Fair delivery"). Pure: no clock (the time is
 * passed in), no I/O.
 *
 * - closed: attempts go; `failures` counts the host's consecutive failures. The `failures`-th opens it.
 * - open until `until`: the host's attempts wait without taking a slot. Once `until` has passed, one attempt is let
 *   through as the probe (the state becomes `probing`); the others keep waiting.
 * - probing: the probe is out; nothing else goes. Its success closes the breaker, its failure opens it again for
 *   another cool-down.
 *
 * A failure is what says the host is unwell: no connection, no answer in time, a 5xx. Any other answer (2xx, 3xx,
 * 4xx — 429 included) is the receiver's verdict on this delivery and proves the host is up: a success here. An
 * attempt that never reached the network (no signing secret, the gateway's own failure) tells nothing; if it was the
 * probe, the next attempt is the probe.
 */
import type { AttemptResult } from './schedule.js';

export interface BreakerSettings {
  /** HOLON_WEBHOOK_BREAKER_FAILURES: consecutive failures that open the breaker. */
  failures: number;
  /** HOLON_WEBHOOK_BREAKER_COOLDOWN_MS: how long it stays open before one probe goes. */
  coolDownMs: number;
}

export type BreakerState = { kind: 'closed'; failures: number } | { kind: 'open'; until: number } | { kind: 'probing' };

export const CLOSED: BreakerState = Object.freeze({ kind: 'closed', failures: 0 });

/** What the host's breaker lets an attempt do now: go, go as the probe, or wait (until a time, or for the probe). */
export type Admission = { kind: 'go' } | { kind: 'probe' } | { kind: 'wait'; until?: number };

export function admission(state: BreakerState, nowMs: number): Admission {
  if (state.kind === 'closed') return { kind: 'go' };
  if (state.kind === 'probing') return { kind: 'wait' };
  return nowMs >= state.until ? { kind: 'probe' } : { kind: 'wait', until: state.until };
}

/** The state once an attempt was let through as `admitted` (a probe moves the breaker to `probing`). */
export function afterAdmission(state: BreakerState, admitted: Admission): BreakerState {
  return admitted.kind === 'probe' ? { kind: 'probing' } : state;
}

/** How an attempt's result counts for its host. */
export type HostOutcome = 'success' | 'failure' | 'neutral';

export function hostOutcome(result: AttemptResult, reachedNetwork: boolean): HostOutcome {
  if (!reachedNetwork) return 'neutral';
  if ('statusCode' in result) return result.statusCode >= 500 ? 'failure' : 'success';
  return 'failure';
}

/**
 * The state after an attempt ended with `outcome`. A success closes the breaker from any state; a failure counts
 * while closed and opens it at `settings.failures`, and a failed probe opens it again. A result that arrives while
 * the breaker is open (an attempt that started before it opened) changes nothing but a success, which closes it.
 */
export function afterResult(state: BreakerState, outcome: HostOutcome, nowMs: number, settings: BreakerSettings): BreakerState {
  // Nothing learnt; a probe that never reached the host lets the next one go at once.
  if (outcome === 'neutral') return state.kind === 'probing' ? { kind: 'open', until: nowMs } : state;
  if (outcome === 'success') return CLOSED;
  const open: BreakerState = { kind: 'open', until: nowMs + settings.coolDownMs };
  if (state.kind === 'probing') return open;
  if (state.kind === 'open') return state;
  const failures = state.failures + 1;
  return failures >= settings.failures ? open : { kind: 'closed', failures };
}

/** The breaker's key: the URL's host and port (two services on one machine are two hosts); undefined if unreadable. */
export function hostKey(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.hostname.toLowerCase()}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return undefined;
  }
}
