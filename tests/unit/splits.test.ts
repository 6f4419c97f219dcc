import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { journalLinesForSettlement, split } from '../../shared/core/splits.js';
import type { Rate } from '../../shared/core/money.js';
import { r } from '../support/pricing-fixtures.js';

const sum = (lines: Array<{ amount: bigint }>): bigint => lines.reduce((t, l) => t + l.amount, 0n);

describe('split', () => {
  it("worked example: 0.035 EUR to lena's fork (royalty 0.15) of acme's agent", () => {
    expect(split(35_000n, [{ account: 'lena', royalty: r('0.15') }, { account: 'acme' }])).toEqual([
      { account: 'holon', amount: 3_500n },
      { account: 'lena', amount: 26_775n },
      { account: 'acme', amount: 4_725n },
    ]);
  });

  it('gives a non-fork author everything after the fee, rounding the fee down', () => {
    expect(split(19n, [{ account: 'acme' }])).toEqual([
      { account: 'holon', amount: 1n },
      { account: 'acme', amount: 18n },
    ]);
  });

  it('rounds each royalty down: the level keeps the remainder', () => {
    // fee 0 (floor 0.9), revenue 9, royalty 0.5 → upstream 4, level 0 keeps 5
    expect(split(9n, [{ account: 'a', royalty: r('0.5') }, { account: 'b' }])).toEqual([
      { account: 'a', amount: 5n },
      { account: 'b', amount: 4n },
    ]);
  });

  it("computes royalties on each level's revenue, down a chain", () => {
    const lines = split(1_000_000n, [
      { account: 'c', royalty: r('0.5') },
      { account: 'b', royalty: r('0.1') },
      { account: 'a', royalty: r('0.9') }, // the last level keeps all: its royalty is ignored
    ]);
    expect(lines).toEqual([
      { account: 'holon', amount: 100_000n },
      { account: 'c', amount: 450_000n },
      { account: 'b', amount: 405_000n },
      { account: 'a', amount: 45_000n },
    ]);
  });

  it('sums an account appearing twice and the platform as an author, keeping first-appearance order', () => {
    const lines = split(1_000_000n, [{ account: 'x', royalty: r('0.5') }, { account: 'holon', royalty: r('0.5') }, { account: 'x' }]);
    expect(lines).toEqual([
      { account: 'holon', amount: 100_000n + 225_000n },
      { account: 'x', amount: 450_000n + 225_000n },
    ]);
  });

  it('omits zero lines', () => {
    expect(split(0n, [{ account: 'a', royalty: r('0.5') }, { account: 'b' }])).toEqual([]);
    expect(split(5n, [{ account: 'a', royalty: r('0') }, { account: 'b' }])).toEqual([{ account: 'a', amount: 5n }]);
  });

  it('uses the platform account and fee rate given', () => {
    expect(split(100n, [{ account: 'a' }], 'ops', r('0.25'))).toEqual([
      { account: 'ops', amount: 25n },
      { account: 'a', amount: 75n },
    ]);
  });

  it('refuses negative amounts, empty or too long chains, and bad rates', () => {
    const link = { account: 'a', royalty: r('0.1') };
    expect(() => split(-1n, [link])).toThrow(RangeError);
    expect(() => split(1n, [])).toThrow(RangeError);
    expect(() => split(1n, Array(10).fill(link))).toThrow(RangeError);
    expect(split(1_000n, Array(9).fill(link))).toHaveLength(2); // 9 accounts = 8 levels is fine
    expect(() => split(1n, [{ account: 'a', royalty: r('1') }, { account: 'b' }])).toThrow(RangeError);
    expect(() => split(1n, [{ account: 'a', royalty: { num: -1n, den: 10n } }, { account: 'b' }])).toThrow(RangeError);
    expect(() => split(1n, [{ account: 'a' }], 'holon', r('1.1'))).toThrow(RangeError);
  });
});

describe('journalLinesForSettlement', () => {
  it('debits the payer and sums to zero', () => {
    const lines = journalLinesForSettlement('alice', 35_000n, [{ account: 'lena', royalty: r('0.15') }, { account: 'acme' }], { platformAccount: 'holon' });
    expect(lines).toEqual([
      { account: 'alice', amount: -35_000n },
      { account: 'holon', amount: 3_500n },
      { account: 'lena', amount: 26_775n },
      { account: 'acme', amount: 4_725n },
    ]);
    expect(sum(lines)).toBe(0n);
  });

  it("keeps the payer's debit apart from its own credit, and gives no lines for zero", () => {
    expect(journalLinesForSettlement('acme', 100n, [{ account: 'acme' }])).toEqual([
      { account: 'acme', amount: -100n },
      { account: 'holon', amount: 10n },
      { account: 'acme', amount: 90n },
    ]);
    expect(journalLinesForSettlement('alice', 0n, [{ account: 'acme' }])).toEqual([]);
  });
});

describe('properties', () => {
  const royalty: fc.Arbitrary<Rate> = fc.integer({ min: 0, max: 9_999 }).map((n) => ({ num: BigInt(n), den: 10_000n }));
  const account = fc.constantFrom('holon', 'a', 'b', 'c', 'd'); // few names: repeats are frequent
  const chain = fc.array(fc.record({ account, royalty: fc.option(royalty, { nil: undefined }) }), { minLength: 1, maxLength: 9 });
  const amount = fc.bigInt({ min: 0n, max: 10n ** 15n });

  it('always sums exactly to the amount, pays no one a negative or zero line, one line per account', () => {
    fc.assert(
      fc.property(amount, chain, (amt, links) => {
        const lines = split(amt, links);
        expect(sum(lines)).toBe(amt);
        for (const l of lines) expect(l.amount > 0n).toBe(true);
        expect(new Set(lines.map((l) => l.account)).size).toBe(lines.length);
        if (amt >= 10n) expect(lines[0]!.account).toBe('holon'); // a fee is due: the platform line comes first
        expect(sum(journalLinesForSettlement('payer', amt, links))).toBe(0n);
      }),
      { numRuns: 2000 },
    );
  });

  it('the platform gets at least floor(10%), exactly that when it is not also an author', () => {
    fc.assert(
      fc.property(amount, chain, (amt, links) => {
        const lines = split(amt, links);
        const platform = lines.find((l) => l.account === 'holon')?.amount ?? 0n;
        expect(platform >= amt / 10n).toBe(true);
        if (!links.some((l) => l.account === 'holon')) expect(platform).toBe(amt / 10n);
      }),
      { numRuns: 1000 },
    );
  });
});
