/**
 * Which payers count toward ranking facts and `require.min_success_rate` (shared/core/counted-payer.ts
 * `payerCounts`): on a hosted gateway, an account linked to GitHub, or one whose outside funding (not sign-up credit)
 * covers, currency by currency, what it spent on the version; on a dev gateway, every payer. Properties over
 * standings and spending.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { payerCounts, UNVOUCHED, type PayerStanding } from '../../shared/core/counted-payer.js';

const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
const amounts = fc.dictionary(fc.constantFrom(...CURRENCIES), fc.bigInt({ min: 0n, max: 10n ** 10n })).map((d) => new Map(Object.entries(d)));
const standing: fc.Arbitrary<PayerStanding> = fc.record({ linkedToGitHub: fc.boolean(), outsideFunding: amounts });

describe('payerCounts', () => {
  it('on a dev gateway every payer counts, whatever vouches for it', () => {
    fc.assert(
      fc.property(standing, amounts, (s, spent) => {
        expect(payerCounts('every_payer', s, spent)).toBe(true);
      }),
    );
  });

  it('an account linked to GitHub counts, whatever it spent', () => {
    fc.assert(
      fc.property(amounts, amounts, (funding, spent) => {
        expect(payerCounts('vouched_payers', { linkedToGitHub: true, outsideFunding: funding }, spent)).toBe(true);
      }),
    );
  });

  it('otherwise: exactly when it received outside money and, in every currency it spent, at least what it spent', () => {
    fc.assert(
      fc.property(amounts, amounts, (funding, spent) => {
        const funded = [...funding.values()].some((a) => a > 0n);
        const covered = [...spent].every(([c, a]) => (funding.get(c) ?? 0n) >= a);
        expect(payerCounts('vouched_payers', { linkedToGitHub: false, outsideFunding: funding }, spent)).toBe(funded && covered);
      }),
      { numRuns: 2000 },
    );
  });

  it('more outside funding never makes a counted payer stop counting; more spending never makes one start', () => {
    fc.assert(
      fc.property(standing, amounts, fc.constantFrom(...CURRENCIES), fc.bigInt({ min: 1n, max: 10n ** 9n }), (s, spent, currency, more) => {
        const before = payerCounts('vouched_payers', s, spent);
        const richer = new Map(s.outsideFunding).set(currency, (s.outsideFunding.get(currency) ?? 0n) + more);
        if (before) expect(payerCounts('vouched_payers', { ...s, outsideFunding: richer }, spent)).toBe(true);
        const spentMore = new Map(spent).set(currency, (spent.get(currency) ?? 0n) + more);
        if (!before) expect(payerCounts('vouched_payers', s, spentMore)).toBe(false);
      }),
    );
  });

  it('the reviewer’s puppet: sign-up credit only, no GitHub, counts for nothing, even for a free version', () => {
    expect(payerCounts('vouched_payers', UNVOUCHED, new Map([['EUR', 300_000n]]))).toBe(false);
    expect(payerCounts('vouched_payers', UNVOUCHED, new Map())).toBe(false);
    expect(payerCounts('vouched_payers', UNVOUCHED, new Map([['EUR', 0n]]))).toBe(false);
    // Outside money in one currency does not cover spending in another.
    expect(payerCounts('vouched_payers', { linkedToGitHub: false, outsideFunding: new Map([['USD', 10n ** 9n]]) }, new Map([['EUR', 1n]]))).toBe(false);
    expect(payerCounts('vouched_payers', { linkedToGitHub: false, outsideFunding: new Map([['EUR', 300_000n]]) }, new Map([['EUR', 300_000n]]))).toBe(true);
    expect(payerCounts('vouched_payers', { linkedToGitHub: false, outsideFunding: new Map([['EUR', 299_999n]]) }, new Map([['EUR', 300_000n]]))).toBe(false);
  });
});
