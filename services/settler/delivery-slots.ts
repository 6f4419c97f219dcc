/**
 * The delivery slots of one settler process (docs/webhooks.md, "Fair delivery"): who may POST now. The rule is
 * shared/webhooks/fair-schedule.ts (slots, the per-account cap, round robin) and circuit-breaker.ts (per host);
 * this keeps its state for the process and answers each attempt's `deliver` job:
 *
 * - `go`, with a lease to release once the attempt ended (with how it counts for its host);
 * - or `postpone` (ms): the attempt does not take a slot now. Its job goes back to the queue, delayed, under its own
 *   id (QueueBackend's postponement): no attempt is used, the delivery stays pending, and the delivery sweep still
 *   sees the job. That is the answer for an attempt whose host's breaker is open (until the cool-down ends), for one
 *   that waited here `holdMs` without its turn, and at once for an account that has `accountCap` attempts waiting
 *   here already (so one account's backlog does not fill the process's intake either).
 *
 * An attempt waits here at most `holdMs`, in memory: the job stays `active` meanwhile (its lock renewed by the
 * worker), so a settler that dies loses nothing (the job is delivered again; in process, the delivery sweep at
 * start-up queues it again).
 *
 * The cap and the breakers are per process: with n settler processes an account may have up to n × cap attempts in
 * flight, and each process learns a host's failures on its own (docs/webhooks.md says so).
 */
import { afterResult, type BreakerSettings, type HostOutcome } from '../../shared/webhooks/circuit-breaker.js';
import { type FairLimits, type FairState, planAttempts, type WaitingAttempt } from '../../shared/webhooks/fair-schedule.js';

type SlotAnswer = { kind: 'go'; release(outcome: HostOutcome): void } | { kind: 'postpone'; ms: number };

export interface DeliverySlots {
  acquire(attempt: WaitingAttempt): Promise<SlotAnswer>;
  /** Attempts in flight now (for tests and the log). */
  inFlight(): number;
}

export interface DeliverySlotOptions extends FairLimits {
  breaker: BreakerSettings;
  /** How long an attempt waits here for its turn before it is postponed, and the delay of a postponement. */
  holdMs: number;
  now: () => number;
}

/** A postponement's delay: `ms` and up to a quarter more, so postponed jobs do not all come back at once. */
const jittered = (ms: number): number => Math.round(ms * (1 + Math.random() / 4));

export function deliverySlots(options: DeliverySlotOptions): DeliverySlots {
  let state: FairState<WaitingAttempt> = { ring: [], waiting: new Map(), inFlight: new Map(), breakers: new Map() };
  const answers = new Map<string, { answer(a: SlotAnswer): void; timer: NodeJS.Timeout }>();
  const busy = new Set<string>();

  const answer = (key: string, a: SlotAnswer) => {
    const waiter = answers.get(key);
    if (!waiter) return;
    answers.delete(key);
    clearTimeout(waiter.timer);
    if (a.kind === 'postpone') busy.delete(key);
    waiter.answer(a);
  };

  const release = (w: WaitingAttempt, outcome: HostOutcome) => {
    busy.delete(w.key);
    const inFlight = new Map(state.inFlight);
    const left = (inFlight.get(w.account) ?? 1) - 1;
    if (left > 0) inFlight.set(w.account, left);
    else inFlight.delete(w.account);
    const breakers = new Map(state.breakers);
    const b = afterResult(breakers.get(w.host) ?? { kind: 'closed', failures: 0 }, outcome, options.now(), options.breaker);
    if (b.kind === 'closed' && b.failures === 0) breakers.delete(w.host);
    else breakers.set(w.host, b);
    state = { ...state, inFlight, breakers };
    pump();
  };

  const pump = () => {
    const now = options.now();
    const plan = planAttempts(state, options, now);
    state = plan.state;
    for (const s of plan.start) {
      let released = false;
      answer(s.attempt.key, {
        kind: 'go',
        release: (outcome) => {
          if (released) return;
          released = true;
          release(s.attempt, outcome);
        },
      });
    }
    for (const p of plan.parked) answer(p.attempt.key, { kind: 'postpone', ms: jittered(p.until !== undefined ? Math.max(p.until - now, 1) : options.holdMs) });
  };

  /** Takes a waiting attempt out of the state (its hold ended). */
  const withdraw = (w: WaitingAttempt) => {
    const waiting = new Map(state.waiting);
    const list = (waiting.get(w.account) ?? []).filter((x) => x.key !== w.key);
    if (list.length > 0) waiting.set(w.account, list);
    else waiting.delete(w.account);
    state = { ...state, waiting };
  };

  return {
    inFlight: () => [...state.inFlight.values()].reduce((a, b) => a + b, 0),
    acquire(w) {
      // The same attempt already here (a duplicate job of one delivery's step): it waits its turn elsewhere.
      if (busy.has(w.key)) return Promise.resolve({ kind: 'postpone', ms: jittered(options.holdMs) });
      if ((state.waiting.get(w.account)?.length ?? 0) >= options.accountCap) return Promise.resolve({ kind: 'postpone', ms: jittered(options.holdMs) });
      busy.add(w.key);
      return new Promise<SlotAnswer>((resolve) => {
        const timer = setTimeout(() => {
          withdraw(w);
          answer(w.key, { kind: 'postpone', ms: jittered(options.holdMs) });
        }, options.holdMs);
        answers.set(w.key, { answer: resolve, timer });
        const waiting = new Map(state.waiting);
        waiting.set(w.account, [...(waiting.get(w.account) ?? []), w]);
        state = { ...state, waiting };
        pump();
      });
    },
  };
}
