import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { charge, fxRateFor, ownWorstCase, subMandateBudget, worstCase, type Outcome } from '../../shared/core/pricing.js';
import { convert, type Micros, type Rate } from '../../shared/core/money.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { manifest, r } from '../support/pricing-fixtures.js';

const EUR = { currency: 'EUR', fx: { USD: r('0.92') } };
const perRun = manifest({ pricing: { model: 'per_run', amount: 10_000n } });
const perUnit = manifest({ pricing: { model: 'per_unit', amount: 5_000n, unit: 'page', max: 500_000n } });
const quote = manifest({ pricing: { model: 'quote', amount: undefined, max: 1_000_000n } });
const free = manifest({ pricing: { model: 'free', amount: undefined } });
const attempt = (m: Manifest): Manifest => ({ ...m, pricing: { ...m.pricing, chargeOn: 'attempt' } });

describe('ownWorstCase and fxRateFor', () => {
  it('gives the own worst case per model, in the agent currency', () => {
    expect(ownWorstCase(free.pricing)).toBe(0n);
    expect(ownWorstCase(perRun.pricing)).toBe(10_000n);
    expect(ownWorstCase(perUnit.pricing)).toBe(500_000n);
    expect(ownWorstCase(quote.pricing)).toBe(1_000_000n);
  });

  it('finds the fx rate, 1 for the same currency, null when missing', () => {
    expect(fxRateFor('EUR', EUR)).toEqual({ num: 1n, den: 1n });
    expect(fxRateFor('USD', EUR)).toEqual(r('0.92'));
    expect(fxRateFor('GBP', EUR)).toBeNull();
    expect(fxRateFor('constructor', EUR)).toBeNull();
  });
});

describe('worstCase', () => {
  it('converts rounding up: 0.000001 USD at 0.92 is 0.000001 EUR', () => {
    const m = manifest({ pricing: { currency: 'USD', amount: 1n } });
    expect(worstCase(m, EUR)).toEqual({ ok: true, own: 1n, downstream: 0n, total: 1n, listed: 1n });
  });

  it('converts own and cap separately, each rounded up', () => {
    const half = { currency: 'EUR', fx: { USD: r('0.5') } };
    const m = manifest({ pricing: { currency: 'USD', amount: 1n }, downstream: { mode: 'passthrough', cap: 1n } });
    expect(convert(2n, r('0.5'))).toBe(1n); // converting the sum would give 1
    expect(worstCase(m, half)).toEqual({ ok: true, own: 1n, downstream: 1n, total: 2n, listed: 2n });
  });

  it('refuses a currency without an fx rate', () => {
    const m = manifest({ pricing: { currency: 'GBP' } });
    expect(worstCase(m, EUR)).toMatchObject({ ok: false, code: 'no_fx_rate' });
  });

  it('needs no fx rate for an agent that can never cost anything', () => {
    const gbp = manifest({ pricing: { currency: 'GBP', model: 'free', amount: undefined } });
    expect(worstCase(gbp, EUR, 0n)).toEqual({ ok: true, own: 0n, downstream: 0n, total: 0n, listed: 0n });
    expect(charge(gbp, { kind: 'success' }, EUR)).toMatchObject({ billed: false, own: 0n });
    const orch = manifest({ pricing: { currency: 'GBP', model: 'free', amount: undefined }, downstream: { mode: 'passthrough', cap: 1n } });
    expect(worstCase(orch, EUR)).toMatchObject({ ok: false, code: 'no_fx_rate' });
  });

  it('lowers a per_unit worst case to max_cost', () => {
    expect(worstCase(perUnit, EUR, 200_000n)).toEqual({ ok: true, own: 200_000n, downstream: 0n, total: 200_000n, listed: 500_000n });
  });

  it('denies a max_cost below a per_run price, never buys the run for less', () => {
    expect(worstCase(perRun, EUR, 9_999n)).toMatchObject({ ok: false, code: 'below_per_run_price' });
    expect(worstCase(perRun, EUR, 10_000n)).toMatchObject({ ok: true, own: 10_000n, total: 10_000n });
    const usd = manifest({ pricing: { currency: 'USD', amount: 10_000n } }); // 0.0092 EUR
    expect(worstCase(usd, EUR, 9_199n)).toMatchObject({ ok: false, code: 'below_per_run_price' });
    expect(worstCase(usd, EUR, 9_200n)).toMatchObject({ ok: true, total: 9_200n });
  });

  it('gives an orchestrator (passthrough) what max_cost leaves after its own price', () => {
    const orch = manifest({
      pricing: { model: 'per_run', amount: 50_000n },
      calls: [{ capability: 'ocr.page', maxCost: 20_000n }],
      downstream: { mode: 'passthrough', cap: 400_000n },
    });
    expect(worstCase(orch, EUR)).toEqual({ ok: true, own: 50_000n, downstream: 400_000n, total: 450_000n, listed: 450_000n });
    expect(worstCase(orch, EUR, 200_000n)).toEqual({ ok: true, own: 50_000n, downstream: 150_000n, total: 200_000n, listed: 450_000n });
    expect(subMandateBudget(orch, EUR, 200_000n)).toBe(150_000n);
    expect(subMandateBudget(orch, EUR)).toBe(400_000n);
    expect(subMandateBudget(orch, EUR, 50_000n)).toBe(0n);
  });

  it('counts no downstream for an included orchestrator; its sub-mandate gets its own price', () => {
    const orch = manifest({
      pricing: { model: 'per_unit', amount: 1_000n, unit: 'page', max: 300_000n, currency: 'USD' },
      downstream: { mode: 'included', cap: 999_000n },
    });
    expect(worstCase(orch, EUR)).toEqual({ ok: true, own: 276_000n, downstream: 0n, total: 276_000n, listed: 276_000n });
    expect(subMandateBudget(orch, EUR)).toBe(276_000n);
    expect(subMandateBudget(orch, EUR, 100_000n)).toBe(100_000n);
  });

  it('throws for a sub-mandate of a call that cannot be admitted', () => {
    expect(() => subMandateBudget(manifest({ pricing: { currency: 'GBP' } }), EUR)).toThrow(/fx rate/);
  });
});

describe('charge: the billing table', () => {
  it('bills a valid output', () => {
    expect(charge(perRun, { kind: 'success' }, EUR)).toEqual({ billed: true, own: 10_000n, reason: 'success' });
  });

  it('bills a declared billed error under charge_on: attempt, with the units reported before it', () => {
    const c = charge(attempt(perUnit), { kind: 'declared_error', code: 'partial', units: 3 }, EUR);
    expect(c).toMatchObject({ billed: true, own: 15_000n });
  });

  it.each<[string, Manifest, string]>([
    ['billed: false under attempt', attempt(perRun), 'over_budget'],
    ['billed: true under success', perRun, 'partial'],
    ['billed: false under success', perRun, 'over_budget'],
  ])('does not bill a declared error %s', (_, m, code) => {
    expect(charge(m, { kind: 'declared_error', code, units: 1 }, EUR)).toMatchObject({ billed: false, own: 0n });
  });

  it.each(['timeout', 'invalid_output', 'agent_error', 'runtime_unavailable', 'gateway_error', 'gateway_restarted', 'cancelled', 'undeclared_error'])(
    'never bills a failure: %s',
    (code) => {
      expect(charge(attempt(perRun), { kind: 'failure', code }, EUR)).toMatchObject({ billed: false, own: 0n });
    },
  );

  it('never bills an undeclared or reserved error code, even under attempt', () => {
    for (const code of ['nope', 'timeout', 'toString', '__proto__']) {
      expect(charge(attempt(perRun), { kind: 'declared_error', code }, EUR)).toMatchObject({ billed: false, own: 0n });
    }
  });

  it.each(['denied', 'pending approval', 'rejected_input'])('never bills what did not run: %s', (why) => {
    expect(charge(perRun, { kind: 'not_run', why }, EUR)).toMatchObject({ billed: false, own: 0n });
  });

  it('reports a zero price as not billed (free, zero units, zero quote)', () => {
    expect(charge(free, { kind: 'success' }, EUR)).toMatchObject({ billed: false, own: 0n });
    expect(charge(perUnit, { kind: 'success', units: 0 }, EUR)).toMatchObject({ billed: false, own: 0n });
    expect(charge(quote, { kind: 'success', quote: 0n }, EUR)).toMatchObject({ billed: false, own: 0n });
  });
});

describe('charge: prices', () => {
  it('caps per_unit at max', () => {
    expect(charge(perUnit, { kind: 'success', units: 40 }, EUR).own).toBe(200_000n);
    expect(charge(perUnit, { kind: 'success', units: 1000n }, EUR).own).toBe(500_000n);
  });

  it('caps per_unit at max_cost: the agent absorbs the overrun', () => {
    const c = charge(perUnit, { kind: 'success', units: 80 }, EUR, 200_000n);
    expect(c).toMatchObject({ billed: true, own: 200_000n });
    expect(c.reason).toContain('max_cost');
  });

  it('caps a quote at max and at max_cost', () => {
    expect(charge(quote, { kind: 'success', quote: 250_000n }, EUR).own).toBe(250_000n);
    expect(charge(quote, { kind: 'success', quote: 5_000_000n }, EUR).own).toBe(1_000_000n);
    expect(charge(quote, { kind: 'success', quote: 5_000_000n }, EUR, 300_000n).own).toBe(300_000n);
  });

  it('converts into the mandate currency rounding up', () => {
    const usd = manifest({ pricing: { currency: 'USD', model: 'per_unit', amount: 1n, unit: 'token', max: 1_000n } });
    expect(charge(usd, { kind: 'success', units: 1 }, EUR).own).toBe(1n);
    expect(charge(usd, { kind: 'success', units: 13 }, EUR).own).toBe(12n); // 11.96 → 12
  });

  it('refuses invalid units and negative quotes', () => {
    for (const units of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -1n]) {
      expect(() => charge(perUnit, { kind: 'success', units }, EUR)).toThrow(RangeError);
    }
    expect(() => charge(quote, { kind: 'success', quote: -1n }, EUR)).toThrow(RangeError);
  });

  it('refuses to charge a call that could not have been admitted', () => {
    expect(() => charge(perRun, { kind: 'success' }, EUR, 1n)).toThrow(/per_run/);
  });
});

describe('properties', () => {
  const currencies = ['EUR', 'USD', 'GBP', 'JPY'] as const;
  const amount = fc.bigInt({ min: 0n, max: 10n ** 10n });
  const rate: fc.Arbitrary<Rate> = fc
    .tuple(fc.bigInt({ min: 1n, max: 10n ** 8n }), fc.integer({ min: 0, max: 6 }))
    .map(([num, k]) => ({ num, den: 10n ** BigInt(k) }));
  const budget = fc.record({
    currency: fc.constantFrom(...currencies),
    fx: fc.dictionary(fc.constantFrom(...currencies), rate),
  });
  const priced = fc
    .record({
      model: fc.constantFrom('free', 'per_run', 'per_unit', 'quote'),
      currency: fc.constantFrom(...currencies),
      amount,
      max: amount,
      cap: amount,
      mode: fc.constantFrom('passthrough', 'included', 'none'),
      chargeOn: fc.constantFrom('success', 'attempt'),
      partialBilled: fc.boolean(),
    } as const)
    .map((p) =>
      manifest({
        pricing: { model: p.model, currency: p.currency, amount: p.amount, max: p.max, unit: 'u', chargeOn: p.chargeOn },
        ...(p.mode === 'none' ? {} : { downstream: { mode: p.mode, cap: p.cap } }),
        interface: {
          input: {},
          output: {},
          examples: [],
          errors: { partial: { description: 'd', billed: p.partialBilled } },
        },
      }),
    );
  const units = fc.oneof(fc.nat({ max: 10 ** 9 }), fc.bigInt({ min: 0n, max: 10n ** 12n }));
  const outcome: fc.Arbitrary<Outcome> = fc.oneof(
    fc.record({ kind: fc.constant('success' as const), units, quote: amount }),
    fc.record({ kind: fc.constant('declared_error' as const), code: fc.constantFrom('partial', 'nope', 'timeout'), units, quote: amount }),
    fc.record({ kind: fc.constant('failure' as const), code: fc.constantFrom('timeout', 'agent_error', 'invalid_output') }),
    fc.constant({ kind: 'not_run' as const }),
  );
  const maxCost = fc.option(fc.bigInt({ min: 0n, max: 10n ** 11n }), { nil: undefined });

  it('worstCase: own + downstream == total ≤ listed, ≤ max_cost', () => {
    fc.assert(
      fc.property(priced, budget, maxCost, (m, b, cap) => {
        const wc = worstCase(m, b, cap);
        if (!wc.ok) return;
        expect(wc.own + wc.downstream).toBe(wc.total);
        expect(wc.total <= wc.listed).toBe(true);
        expect(wc.own >= 0n && wc.downstream >= 0n).toBe(true);
        if (cap !== undefined) {
          expect(wc.total <= cap).toBe(true);
          expect(wc.total).toBe(wc.listed < cap ? wc.listed : cap);
        } else expect(wc.total).toBe(wc.listed);
        if (m.downstream?.mode !== 'passthrough') expect(wc.downstream).toBe(0n);
      }),
      { numRuns: 2000 },
    );
  });

  it('charge never exceeds the worst case nor max_cost', () => {
    fc.assert(
      fc.property(priced, budget, maxCost, outcome, (m, b, cap, o) => {
        const wc = worstCase(m, b, cap);
        const ran = o.kind === 'success' || o.kind === 'declared_error';
        if (!wc.ok) {
          if (!ran) expect(charge(m, o, b, cap).billed).toBe(false);
          return;
        }
        const c = charge(m, o, b, cap);
        expect(c.own >= 0n).toBe(true);
        expect(c.own <= wc.own).toBe(true);
        if (cap !== undefined) expect(c.own <= cap).toBe(true);
        expect(c.billed).toBe(c.own > 0n);
        const billable =
          o.kind === 'success' ||
          (o.kind === 'declared_error' && o.code === 'partial' && m.interface.errors.partial!.billed && m.pricing.chargeOn === 'attempt');
        if (!billable) expect(c.billed).toBe(false);
        if (billable && cap === undefined) {
          // Without a cap, the charge is exactly the converted price.
          const p = m.pricing;
          const raw: Micros =
            p.model === 'free'
              ? 0n
              : p.model === 'per_run'
                ? p.amount!
                : p.model === 'per_unit'
                  ? minB(p.amount! * BigInt((o as { units: number | bigint }).units), p.max!)
                  : minB((o as { quote: Micros }).quote, p.max!);
          expect(c.own).toBe(convert(raw, fxRateFor(p.currency, b) ?? { num: 1n, den: 1n })); // no rate: raw is 0
        }
      }),
      { numRuns: 2000 },
    );
  });
});

function minB(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
