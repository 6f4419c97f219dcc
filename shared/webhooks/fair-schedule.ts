/**
 * Which waiting webhook attempts start now (docs/webhooks.md, "Fair delivery"). Pure: the state in, the next state
 * and the decisions out; no clock (the time is passed in), no I/O. The settler keeps the state of its process
 * (services/settler/delivery-slots.ts).
 *
 * - At most `slots` attempts in flight at once, and at most `accountCap` of one account (the account that pays for
 *   the call): one tenant's slow receivers cannot take every slot.
 * - Round robin between the accounts with work: each grant goes to the first account of the ring that may start one
 *   (below its cap, an attempt whose host admits it), which then moves to the ring's end. With k accounts able to
 *   start, k grants serve each of them once: no account with work waits more than one round.
 * - Within an account, oldest first, skipping attempts whose host's breaker holds them (circuit-breaker.ts).
 * - An attempt whose host's breaker is open (or probing) takes no slot: it is parked, handed back to wait
 *   elsewhere until the cool-down ends (`until`) or the probe has answered (no `until`). When the cool-down has
 *   ended, the first attempt granted for the host is its probe; the others are parked.
 *
 * Nothing is lost: every waiting attempt is started, parked or still waiting in the state answered.
 */
import { admission, afterAdmission, type BreakerState, CLOSED } from './circuit-breaker.js';

/** An attempt waiting for a slot: its key (unique among those waiting or in flight), its account and host. */
export interface WaitingAttempt {
  key: string;
  account: string;
  host: string;
}

export interface FairLimits {
  /** Attempts in flight at once (the process's delivery slots). */
  slots: number;
  /** Attempts of one account in flight at once (HOLON_WEBHOOK_ACCOUNT_INFLIGHT). */
  accountCap: number;
}

export interface FairState<T extends WaitingAttempt> {
  /** Accounts with waiting attempts, the next to serve first. */
  ring: readonly string[];
  /** Each account's waiting attempts, oldest first. */
  waiting: ReadonlyMap<string, readonly T[]>;
  /** Attempts in flight, per account. */
  inFlight: ReadonlyMap<string, number>;
  /** Each host's breaker (absent: closed, no failure). */
  breakers: ReadonlyMap<string, BreakerState>;
}

export interface FairPlan<T extends WaitingAttempt> {
  /** Start these now, in this order (each has taken a slot; `probe`: its host's one probe). */
  start: Array<{ attempt: T; probe: boolean }>;
  /** These wait elsewhere, without a slot: until the cool-down ends, or (no `until`) until their host's probe answered. */
  parked: Array<{ attempt: T; until?: number }>;
  state: FairState<T>;
}

const total = (m: ReadonlyMap<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

/** The plan for now: what starts, what is parked, and the state after. */
export function planAttempts<T extends WaitingAttempt>(state: FairState<T>, limits: FairLimits, nowMs: number): FairPlan<T> {
  const waiting = new Map<string, T[]>([...state.waiting].map(([a, list]) => [a, [...list]]));
  const inFlight = new Map(state.inFlight);
  const breakers = new Map(state.breakers);
  // The ring's accounts that still wait, then any account with work the ring does not name yet (newest last).
  const ring = state.ring.filter((a) => (waiting.get(a)?.length ?? 0) > 0);
  for (const [a, list] of waiting) if (list.length > 0 && !ring.includes(a)) ring.push(a);
  const start: FairPlan<T>['start'] = [];
  const breakerOf = (host: string): BreakerState => breakers.get(host) ?? CLOSED;

  let free = limits.slots - total(inFlight);
  while (free > 0) {
    let granted = false;
    for (let i = 0; i < ring.length && !granted; i++) {
      const account = ring[i]!;
      if ((inFlight.get(account) ?? 0) >= limits.accountCap) continue;
      const list = waiting.get(account)!;
      const at = list.findIndex((w) => admission(breakerOf(w.host), nowMs).kind !== 'wait');
      if (at < 0) continue;
      const [attempt] = list.splice(at, 1) as [T];
      const admitted = admission(breakerOf(attempt.host), nowMs);
      breakers.set(attempt.host, afterAdmission(breakerOf(attempt.host), admitted));
      start.push({ attempt, probe: admitted.kind === 'probe' });
      inFlight.set(account, (inFlight.get(account) ?? 0) + 1);
      free--;
      ring.splice(i, 1);
      ring.push(account);
      granted = true;
    }
    if (!granted) break;
  }

  const parked: FairPlan<T>['parked'] = [];
  for (const [account, list] of waiting) {
    const kept = list.filter((w) => {
      const a = admission(breakerOf(w.host), nowMs);
      if (a.kind !== 'wait') return true;
      parked.push({ attempt: w, ...(a.until !== undefined ? { until: a.until } : {}) });
      return false;
    });
    if (kept.length > 0) waiting.set(account, kept);
    else waiting.delete(account);
  }
  return { start, parked, state: { ring: ring.filter((a) => waiting.has(a)), waiting, inFlight, breakers } };
}
