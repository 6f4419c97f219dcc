/**
 * The settlement's plan (shared/calls/settle/plan.ts), pure: from a call's locked row and what its transaction read
 * — its hold's resolution, its journal entry, the mandates above its parent hold, its children's costs — the rows to
 * write and the moves on the hot rows. Examples for each kind of call, then properties over any call: the journal
 * lines balance per currency, and a hold is never posted beyond what it holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChainLink } from '../../shared/core/splits.js';
import type { HoldResolution } from '../../shared/ledger/holds.js';
import { type CallToSettle, holdEndOf, journalEntryOf, type PlanInput, planSettlement } from '../../shared/calls/settle/plan.js';

const CHAIN: ChainLink[] = [{ account: 'alice', royalty: { num: 20n, den: 100n } }, { account: 'upstream' }];

function call(over: Partial<CallToSettle> = {}, outcome: Partial<CallToSettle['outcome']> = {}): CallToSettle {
  return {
    id: 'r_1',
    status: 'settling',
    mandateId: 'bob/m',
    subMandateId: null,
    parentId: null,
    caller: 'bob',
    agentId: 'alice/echo',
    agentVersion: '1.0.0',
    payer: 'bob',
    currency: 'EUR',
    worstCase: 1_000n,
    approvalId: null,
    delegated: false,
    callbackUrl: null,
    settleEnqueuedAt: null,
    outcome: { kind: 'success', billed: true, own: '1000', duration_ms: 12.4, ...outcome },
    ...over,
  };
}

const hold = (amount: bigint, over: Partial<HoldResolution> = {}): HoldResolution =>
  ({ id: 'r_1', account: 'bob', currency: 'EUR', amount, mandateId: 'bob/m', parentHoldId: null, kind: 'posted', ...over }) as HoldResolution;

const input = (c: CallToSettle, over: Partial<PlanInput> = {}): PlanInput => ({
  call: c,
  chain: CHAIN,
  hold: hold(c.worstCase, { kind: holdEndOf(c) }),
  entry: journalEntryOf(c, CHAIN) ? { id: 7n, created: true } : null,
  ancestors: [],
  downstream: 0n,
  ...over,
});

const sumPerCurrency = (lines: ReadonlyArray<{ currency: string; amount: bigint }>) => {
  const sums = new Map<string, bigint>();
  for (const l of lines) sums.set(l.currency, (sums.get(l.currency) ?? 0n) + l.amount);
  return sums;
};

describe('the settlement plan', () => {
  it('a billed top-level call: its hold posted, its entry applied to the balances, its receipt, event and status', () => {
    const c = call({ callbackUrl: 'https://example.com/hook', settleEnqueuedAt: new Date(5) });
    const plan = planSettlement([input(c)]);
    expect(holdEndOf(c)).toBe('posted');
    expect(plan.calls).toHaveLength(1);
    expect(plan.calls[0]!.moves).toEqual({
      mandates: [{ id: 'bob/m', release: 1_000n }],
      spent: 1_000n,
      parentHold: null,
      hold: { account: 'bob', currency: 'EUR', amount: 1_000n },
      lines: [
        { account: 'bob', currency: 'EUR', amount: -1_000n },
        { account: 'holon', currency: 'EUR', amount: 100n },
        { account: 'alice', currency: 'EUR', amount: 720n },
        { account: 'upstream', currency: 'EUR', amount: 180n },
      ],
    });
    expect(plan.calls[0]!.after).toEqual({
      showsReceipt: true,
      callbackUrl: 'https://example.com/hook',
      parentId: null,
      counted: { status: 'succeeded', errorCode: undefined, agent: 'alice/echo', handedOffAt: new Date(5) },
    });
    expect(plan.receipts[0]).toMatchObject({
      id: 'r_1',
      status: 'succeeded',
      billed: true,
      cost_own: '1000',
      cost_total: '1000',
      entry_id: '7',
      signature: null,
    });
    expect(plan.events).toEqual([
      {
        call_id: 'r_1',
        agent_id: 'alice/echo',
        agent_version: '1.0.0',
        status: 'succeeded',
        error_code: null,
        latency_ms: 12,
        cost: '1000',
        currency: 'EUR',
        delegated: false,
      },
    ]);
    expect(plan.finals).toEqual([{ id: 'r_1', status: 'succeeded' }]);
    expect(plan.deliveries).toEqual([{ id: expect.any(String), call_id: 'r_1', account: 'bob' }]);
  });

  it('an unbilled failure: its hold voided, all of it released, no entry, no lines', () => {
    const c = call({}, { kind: 'failure', code: 'gateway_error', billed: false, own: '0' });
    expect(holdEndOf(c)).toBe('voided');
    expect(journalEntryOf(c, CHAIN)).toBeNull();
    const plan = planSettlement([input(c)]);
    expect(plan.calls[0]!.moves).toEqual({
      mandates: [{ id: 'bob/m', release: 1_000n }],
      spent: 0n,
      parentHold: null,
      hold: { account: 'bob', currency: 'EUR', amount: 1_000n },
      lines: [],
    });
    expect(plan.receipts[0]).toMatchObject({ status: 'failed', error_code: 'gateway_error', billed: false, entry_id: null });
    expect(plan.deliveries).toEqual([]);
  });

  it('a partial post: less charged than held, the rest released from the mandate and the held balance', () => {
    const c = call({}, { own: '300' });
    const moves = planSettlement([input(c)]).calls[0]!.moves;
    expect(moves).toMatchObject({ mandates: [{ id: 'bob/m', release: 1_000n }], spent: 300n, hold: { amount: 1_000n } });
  });

  it('a hold ended before (a retried settlement): the hold and the own mandate move nothing, no parent top-up', () => {
    const c = call({ subMandateId: 'bob/m.r_0', parentId: 'r_0' });
    const moves = planSettlement([input(c, { hold: hold(1_000n, { kind: 'already_resolved', as: 'posted', parentHoldId: 'r_0' }) as HoldResolution })])
      .calls[0]!.moves;
    expect(moves).toMatchObject({ mandates: [{ id: 'bob/m', release: 0n }], parentHold: null, hold: null });
  });

  it('an entry replayed (recorded before): its lines reach no balance again', () => {
    const c = call();
    expect(planSettlement([input(c, { entry: { id: 7n, created: false } })]).calls[0]!.moves.lines).toEqual([]);
  });

  it('a passthrough child: the ancestors release what was charged, the parent hold gets the rest, the notice carries no receipt', () => {
    const c = call({ subMandateId: 'bob/m.r_0', parentId: 'r_0' }, { own: '400' });
    const plan = planSettlement([input(c, { hold: hold(1_000n, { parentHoldId: 'r_0' }), ancestors: ['bob/root', 'bob/mid'], downstream: 50n })]);
    expect(plan.calls[0]!.moves).toMatchObject({
      mandates: [
        { id: 'bob/root', release: 400n },
        { id: 'bob/mid', release: 400n },
        { id: 'bob/m', release: 1_000n },
      ],
      spent: 400n,
      parentHold: { id: 'r_0', back: 600n },
    });
    expect(plan.calls[0]!.after.showsReceipt).toBe(false);
    expect(plan.receipts[0]).toMatchObject({ cost_own: '400', cost_downstream: '50', cost_total: '450' });
  });

  it('is immutable', () => {
    const plan = planSettlement([input(call())]);
    expect(Object.isFrozen(plan)).toBe(true);
    expect(Object.isFrozen(plan.calls)).toBe(true);
    expect(Object.isFrozen(plan.calls[0])).toBe(true);
    expect(Object.isFrozen(plan.receipts)).toBe(true);
  });
});

const link = fc.record({
  account: fc.constantFrom('alice', 'carol', 'dave', 'holon', 'bob'),
  royalty: fc.option(
    fc.integer({ min: 0, max: 99 }).map((n) => ({ num: BigInt(n), den: 100n })),
    { nil: undefined },
  ),
});
const anyCall = fc.record({
  chain: fc.array(link, { minLength: 1, maxLength: 9 }).map((links) => links.map((l) => (l.royalty ? l : { account: l.account }))),
  held: fc.bigInt({ min: 0n, max: 10n ** 12n }),
  share: fc.double({ min: 0, max: 1, noNaN: true }),
  billed: fc.boolean(),
  success: fc.boolean(),
  currency: fc.constantFrom('EUR', 'USD'),
  parentHold: fc.option(fc.constant('r_parent'), { nil: null }),
  ended: fc.boolean(),
  created: fc.boolean(),
  ancestors: fc.array(fc.constantFrom('bob/root', 'bob/mid'), { maxLength: 2 }),
});

describe('the settlement plan, for any call', () => {
  it('balances: the journal entry and the lines applied to the balances sum to zero per currency', () => {
    fc.assert(
      fc.property(fc.array(anyCall, { minLength: 1, maxLength: 5 }), (calls) => {
        const inputs = calls.map((a, i) => {
          const own = a.billed ? BigInt(Math.floor(Number(a.held) * a.share)) : 0n;
          const c = call(
            { id: `r_${i}`, currency: a.currency, worstCase: a.held },
            { kind: a.success ? 'success' : 'declared_error', billed: a.billed, own: own.toString() },
          );
          const entry = journalEntryOf(c, a.chain);
          if (entry) expect([...sumPerCurrency(entry.lines).values()].every((s) => s === 0n)).toBe(true);
          return input(c, {
            chain: a.chain,
            hold: hold(a.held, { id: c.id, currency: a.currency }),
            entry: entry ? { id: BigInt(i), created: a.created } : null,
          });
        });
        const lines = planSettlement(inputs).calls.flatMap((p) => p.moves.lines);
        for (const sum of sumPerCurrency(lines).values()) expect(sum).toBe(0n);
      }),
    );
  });

  it('never posts beyond the hold: what is charged and what goes back add up to what was held', () => {
    fc.assert(
      fc.property(anyCall, (a) => {
        const own = a.billed ? BigInt(Math.floor(Number(a.held) * a.share)) : 0n;
        const c = call(
          { parentId: a.parentHold, subMandateId: a.parentHold ? 'bob/m.r_parent' : null, worstCase: a.held },
          { billed: a.billed, own: own.toString() },
        );
        const resolution = a.ended
          ? hold(a.held, { kind: holdEndOf(c), parentHoldId: a.parentHold })
          : hold(a.held, { kind: 'already_resolved', as: holdEndOf(c), parentHoldId: a.parentHold });
        const moves = planSettlement([input(c, { chain: a.chain, hold: resolution as HoldResolution, ancestors: a.parentHold && a.ended ? a.ancestors : [] })])
          .calls[0]!.moves;
        expect(moves.spent).toBeLessThanOrEqual(a.held);
        const ownMandate = moves.mandates.at(-1)!;
        expect(ownMandate.id).toBe('bob/m');
        if (!a.ended) {
          // Ended before: nothing of the hold moves again.
          expect(moves.hold).toBeNull();
          expect(ownMandate.release).toBe(0n);
          expect(moves.parentHold).toBeNull();
          return;
        }
        expect(moves.hold?.amount).toBe(a.held);
        expect(ownMandate.release).toBe(a.held);
        expect(holdEndOf(c)).toBe(own > 0n ? 'posted' : 'voided');
        if (a.parentHold) expect(moves.parentHold!.back + moves.spent).toBe(a.held);
        else expect(moves.parentHold).toBeNull();
        for (const m of moves.mandates.slice(0, -1)) expect(m.release).toBe(moves.spent);
      }),
    );
  });
});
