/**
 * Fair webhook delivery, the pure parts: which waiting attempts start (shared/webhooks/fair-schedule.ts: the slots,
 * the per-account cap, round robin between accounts) and each host's circuit breaker
 * (shared/webhooks/circuit-breaker.ts: closed, open, one probe). Properties with fast-check: no account over its
 * cap, every account with work served within one round, a host whose breaker holds it takes no slot, nothing lost.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { admission, afterResult, type BreakerSettings, type BreakerState, CLOSED, hostKey, hostOutcome } from '../../shared/webhooks/circuit-breaker.js';
import { type FairLimits, type FairState, planAttempts, type WaitingAttempt } from '../../shared/webhooks/fair-schedule.js';

const BREAKER: BreakerSettings = { failures: 3, coolDownMs: 1_000 };
const NOW = 1_000_000;

const ACCOUNTS = ['acc_a', 'acc_b', 'acc_c', 'acc_d', 'acc_e'];
const HOSTS = ['a.test:443', 'b.test:443', 'c.test:80', 'd.test:8080'];

const breakerArb: fc.Arbitrary<BreakerState> = fc.oneof(
  fc.integer({ min: 0, max: 2 }).map((failures) => ({ kind: 'closed', failures }) as const),
  fc.integer({ min: -2_000, max: 2_000 }).map((d) => ({ kind: 'open', until: NOW + d }) as const),
  fc.constant({ kind: 'probing' } as const),
);

/** A state of one process: waiting attempts of some accounts, some in flight (never over the limits), some breakers. */
const scenario = fc
  .record({
    slots: fc.integer({ min: 1, max: 16 }),
    accountCap: fc.integer({ min: 1, max: 6 }),
    attempts: fc.array(fc.record({ account: fc.constantFrom(...ACCOUNTS), host: fc.constantFrom(...HOSTS) }), { maxLength: 60 }),
    inFlight: fc.dictionary(fc.constantFrom(...ACCOUNTS), fc.integer({ min: 0, max: 6 })),
    breakers: fc.dictionary(fc.constantFrom(...HOSTS), breakerArb),
    ring: fc.shuffledSubarray(ACCOUNTS),
  })
  .map(({ slots, accountCap, attempts, inFlight, breakers, ring }) => {
    const limits: FairLimits = { slots, accountCap };
    const waiting = new Map<string, WaitingAttempt[]>();
    attempts.forEach((a, i) => waiting.set(a.account, [...(waiting.get(a.account) ?? []), { key: `k${i}`, ...a }]));
    // In flight within the limits, as the dispatcher keeps it.
    const flying = new Map<string, number>();
    let room = slots;
    for (const [a, n] of Object.entries(inFlight)) {
      const k = Math.min(n, accountCap, room);
      room -= k;
      if (k > 0) flying.set(a, k);
    }
    const state: FairState<WaitingAttempt> = { ring, waiting, inFlight: flying, breakers: new Map(Object.entries(breakers)) };
    return { limits, state };
  });

const keysOf = (s: FairState<WaitingAttempt>): string[] => [...s.waiting.values()].flat().map((w) => w.key);
const sum = (m: ReadonlyMap<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

describe('planAttempts: the slots, the per-account cap, round robin', () => {
  test('no account exceeds its cap and no more than the slots are in flight', () => {
    fc.assert(
      fc.property(scenario, ({ limits, state }) => {
        const plan = planAttempts(state, limits, NOW);
        for (const n of plan.state.inFlight.values()) expect(n).toBeLessThanOrEqual(limits.accountCap);
        expect(sum(plan.state.inFlight)).toBeLessThanOrEqual(limits.slots);
        const started = new Map<string, number>();
        for (const s of plan.start) started.set(s.attempt.account, (started.get(s.attempt.account) ?? 0) + 1);
        for (const [a, n] of started) expect(plan.state.inFlight.get(a)).toBe((state.inFlight.get(a) ?? 0) + n);
      }),
    );
  });

  test('nothing is lost: every waiting attempt is started, parked or still waiting, once', () => {
    fc.assert(
      fc.property(scenario, ({ limits, state }) => {
        const plan = planAttempts(state, limits, NOW);
        const after = [...plan.start.map((s) => s.attempt.key), ...plan.parked.map((p) => p.attempt.key), ...keysOf(plan.state)];
        expect(after.sort()).toEqual(keysOf(state).sort());
        // The ring names exactly the accounts still waiting.
        expect([...plan.state.ring].sort()).toEqual([...plan.state.waiting.keys()].sort());
      }),
    );
  });

  test('every account with work is served within one round: one left able to start has at most one grant fewer than any other', () => {
    fc.assert(
      fc.property(scenario, ({ limits, state }) => {
        const plan = planAttempts(state, limits, NOW);
        const grants = new Map<string, number>();
        for (const s of plan.start) grants.set(s.attempt.account, (grants.get(s.attempt.account) ?? 0) + 1);
        const after = plan.state;
        const admits = (w: WaitingAttempt) => admission(after.breakers.get(w.host) ?? CLOSED, NOW).kind !== 'wait';
        // Able at the end means able all along (a plan only fills caps and turns breakers to probing).
        const able = [...after.waiting].filter(([a, list]) => (after.inFlight.get(a) ?? 0) < limits.accountCap && list.some(admits)).map(([a]) => a);
        if (able.length > 0) expect(sum(after.inFlight)).toBe(limits.slots); // only a full process leaves one waiting
        for (const a of able) for (const n of grants.values()) expect(n).toBeLessThanOrEqual((grants.get(a) ?? 0) + 1);
        // With a slot for every account that could start one, the first grants go to distinct accounts.
        const free = limits.slots - sum(state.inFlight);
        const probes = plan.start.some((s) => s.probe);
        const ableBefore = [...state.waiting].filter(
          ([a, list]) =>
            (state.inFlight.get(a) ?? 0) < limits.accountCap && list.some((w) => admission(state.breakers.get(w.host) ?? CLOSED, NOW).kind !== 'wait'),
        );
        if (!probes && free >= ableBefore.length) {
          const first = plan.start.slice(0, ableBefore.length).map((s) => s.attempt.account);
          expect(first.sort()).toEqual(ableBefore.map(([a]) => a).sort());
        }
      }),
    );
  });

  test('a host whose breaker is open takes no slot; after the cool-down exactly one probe goes; while probing, none', () => {
    fc.assert(
      fc.property(scenario, ({ limits, state }) => {
        const plan = planAttempts(state, limits, NOW);
        for (const host of HOSTS) {
          const b = state.breakers.get(host) ?? CLOSED;
          const started = plan.start.filter((s) => s.attempt.host === host);
          if (b.kind === 'probing' || (b.kind === 'open' && b.until > NOW)) expect(started).toEqual([]);
          if (b.kind === 'open' && b.until <= NOW) {
            expect(started.length).toBeLessThanOrEqual(1);
            expect(started.every((s) => s.probe)).toBe(true);
          }
          if (b.kind === 'closed') expect(started.every((s) => !s.probe)).toBe(true);
        }
        // Parked ones are exactly those their host holds back: they no longer wait here.
        for (const p of plan.parked) {
          const b = plan.state.breakers.get(p.attempt.host) ?? CLOSED;
          expect(admission(b, NOW).kind).toBe('wait');
        }
        for (const w of [...plan.state.waiting.values()].flat()) expect(admission(plan.state.breakers.get(w.host) ?? CLOSED, NOW).kind).not.toBe('wait');
      }),
    );
  });

  test('one slot freeing at a time: accounts that always have work are served in turn, each once per round', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 5 }), fc.integer({ min: 1, max: 4 }), (accounts, rounds) => {
        const names = ACCOUNTS.slice(0, accounts);
        let n = 0;
        const work = () => new Map(names.map((a) => [a, Array.from({ length: 3 }, () => ({ key: `k${n++}`, account: a, host: `${a}.test:443` }))]));
        let state: FairState<WaitingAttempt> = { ring: [], waiting: work(), inFlight: new Map(), breakers: new Map() };
        const served: string[] = [];
        for (let i = 0; i < accounts * rounds; i++) {
          const plan = planAttempts(state, { slots: 1, accountCap: 1 }, NOW);
          expect(plan.start).toHaveLength(1);
          served.push(plan.start[0]!.attempt.account);
          // The attempt ends; its account gets more work (it always has some).
          state = { ...plan.state, inFlight: new Map(), waiting: new Map([...plan.state.waiting, ...[...work()].filter(([a]) => !plan.state.waiting.has(a))]) };
        }
        for (let r = 0; r < rounds; r++) expect([...served.slice(r * accounts, (r + 1) * accounts)].sort()).toEqual([...names].sort());
      }),
    );
  });

  test('the tarpit case: one account’s forty waiting attempts take its cap, another account’s one starts at once', () => {
    const tarpit = Array.from({ length: 40 }, (_, i) => ({ key: `a${i}`, account: 'acc_a', host: '127.0.0.1:9001' }));
    const b = { key: 'b0', account: 'acc_b', host: '127.0.0.1:9002' };
    const plan = planAttempts(
      {
        ring: [],
        waiting: new Map([
          ['acc_a', tarpit],
          ['acc_b', [b]],
        ]),
        inFlight: new Map(),
        breakers: new Map(),
      },
      { slots: 16, accountCap: 4 },
      NOW,
    );
    expect(plan.start.map((s) => s.attempt.key)).toEqual(['a0', 'b0', 'a1', 'a2', 'a3']);
    expect(plan.state.waiting.get('acc_a')).toHaveLength(36);
  });
});

describe('the circuit breaker of a host', () => {
  test('N consecutive failures open it; a success before the N-th starts the count again', () => {
    let s: BreakerState = CLOSED;
    s = afterResult(s, 'failure', NOW, BREAKER);
    s = afterResult(s, 'failure', NOW, BREAKER);
    expect(s).toEqual({ kind: 'closed', failures: 2 });
    s = afterResult(s, 'success', NOW, BREAKER);
    expect(s).toEqual(CLOSED);
    for (let i = 0; i < 3; i++) s = afterResult(s, 'failure', NOW, BREAKER);
    expect(s).toEqual({ kind: 'open', until: NOW + 1_000 });
    expect(admission(s, NOW + 999)).toEqual({ kind: 'wait', until: NOW + 1_000 });
    expect(admission(s, NOW + 1_000)).toEqual({ kind: 'probe' });
  });

  test('the probe: its failure opens it again for a cool-down, its success closes it; a probe that never reached the host lets the next go', () => {
    expect(afterResult({ kind: 'probing' }, 'failure', NOW, BREAKER)).toEqual({ kind: 'open', until: NOW + 1_000 });
    expect(afterResult({ kind: 'probing' }, 'success', NOW, BREAKER)).toEqual(CLOSED);
    expect(afterResult({ kind: 'probing' }, 'neutral', NOW, BREAKER)).toEqual({ kind: 'open', until: NOW });
    expect(admission({ kind: 'probing' }, NOW)).toEqual({ kind: 'wait' });
    // A late failure of an attempt that started before it opened does not extend the cool-down.
    expect(afterResult({ kind: 'open', until: NOW + 5 }, 'failure', NOW, BREAKER)).toEqual({ kind: 'open', until: NOW + 5 });
  });

  test('failures are the host’s: no connection, no answer in time, 5xx; a 4xx (429 too) or 3xx is the receiver’s verdict; no network, nothing', () => {
    expect(hostOutcome({ error: 'the receiver x:443: connection refused (ECONNREFUSED)' }, true)).toBe('failure');
    expect(hostOutcome({ error: 'no answer within the first-byte timeout' }, true)).toBe('failure');
    expect(hostOutcome({ statusCode: 503 }, true)).toBe('failure');
    expect(hostOutcome({ statusCode: 500 }, true)).toBe('failure');
    for (const statusCode of [200, 204, 302, 400, 404, 410, 429]) expect(hostOutcome({ statusCode }, true)).toBe('success');
    expect(hostOutcome({ error: 'the account has no webhook secret yet' }, false)).toBe('neutral');
  });

  test('a host is its name and port', () => {
    expect(hostKey('https://Hooks.Example/a?token=x')).toBe('hooks.example:443');
    expect(hostKey('http://127.0.0.1:9001/hook')).toBe('127.0.0.1:9001');
    expect(hostKey('http://[::1]/x')).toBe('[::1]:80');
    expect(hostKey('not a url')).toBeUndefined();
  });
});
