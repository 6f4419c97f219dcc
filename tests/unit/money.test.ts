import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  convert,
  divRound,
  formatAmount,
  formatRate,
  mulRate,
  parseAmount,
  parseRate,
  tryParseAmount,
  tryParseRate,
  MAX_AMOUNT,
} from '../../shared/core/money.js';

describe('amounts', () => {
  it('parses decimal strings into micro-units', () => {
    expect(parseAmount('0.035')).toBe(35_000n);
    expect(parseAmount('5.00')).toBe(5_000_000n);
    expect(parseAmount('0')).toBe(0n);
    expect(parseAmount('0.000001')).toBe(1n);
    expect(parseAmount('12')).toBe(12_000_000n);
    expect(parseAmount('-0.01', { allowNegative: true })).toBe(-10_000n);
  });

  it.each([
    ['0.0000001', 'decimals'],
    ['1e3', 'not a plain decimal'],
    ['1E-3', 'not a plain decimal'],
    ['+1', 'not a plain decimal'],
    ['-1', 'must not be negative'],
    ['', 'empty string'],
    [' 1', 'not a plain decimal'],
    ['1.', 'not a plain decimal'],
    ['.5', 'not a plain decimal'],
    ['01', 'not a plain decimal'],
    ['0x10', 'not a plain decimal'],
    ['1,5', 'not a plain decimal'],
    ['NaN', 'not a plain decimal'],
    ['Infinity', 'not a plain decimal'],
    ['1\u00000', 'not a plain decimal'],
  ])('refuses %j', (input, why) => {
    const r = tryParseAmount(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(why);
  });

  it('refuses JSON numbers and other non-strings', () => {
    for (const v of [0.5, 1, null, undefined, true, {}, ['1'], 10n]) {
      const r = tryParseAmount(v);
      expect(r.ok).toBe(false);
    }
    const r = tryParseAmount(0.5);
    expect(!r.ok && r.message).toContain('JSON number 0.5');
  });

  it('refuses zero when asked and amounts above the maximum', () => {
    expect(tryParseAmount('0.00', { allowZero: false }).ok).toBe(false);
    expect(tryParseAmount('1000000000000.000001').ok).toBe(false);
    expect(parseAmount('1000000000000')).toBe(MAX_AMOUNT);
  });

  it('formats with at least two decimals and no trailing zeros beyond', () => {
    expect(formatAmount(5_000_000n)).toBe('5.00');
    expect(formatAmount(35_000n)).toBe('0.035');
    expect(formatAmount(3_500n)).toBe('0.0035');
    expect(formatAmount(4_725n)).toBe('0.004725');
    expect(formatAmount(100_000n)).toBe('0.10');
    expect(formatAmount(0n)).toBe('0.00');
    expect(formatAmount(-10_000n)).toBe('-0.01');
    expect(formatAmount(1n)).toBe('0.000001');
  });

  it('round-trips every amount (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX_AMOUNT, max: MAX_AMOUNT }), (m) => {
        expect(parseAmount(formatAmount(m), { allowNegative: true })).toBe(m);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('rates and rounding', () => {
  it('parses fractions with bounded decimals', () => {
    expect(parseRate('0.15', { maxDecimals: 4 })).toEqual({ num: 15n, den: 100n });
    expect(parseRate('1', { maxDecimals: 4 })).toEqual({ num: 1n, den: 1n });
    expect(tryParseRate('0.12345', { maxDecimals: 4 }).ok).toBe(false);
    expect(tryParseRate('1', { maxDecimals: 4, below: { num: 1n, den: 1n } }).ok).toBe(false);
    expect(tryParseRate(0.15, { maxDecimals: 4 }).ok).toBe(false);
    expect(tryParseRate('-0.1', { maxDecimals: 4 }).ok).toBe(false);
    expect(formatRate({ num: 15n, den: 100n })).toBe('0.15');
    expect(formatRate({ num: 92n, den: 100n })).toBe('0.92');
  });

  it('rounds explicitly', () => {
    expect(divRound(7n, 2n, 'up')).toBe(4n);
    expect(divRound(7n, 2n, 'down')).toBe(3n);
    expect(divRound(8n, 2n, 'up')).toBe(4n);
    expect(divRound(-7n, 2n, 'down')).toBe(-4n);
    // 0.0315 × 0.15 = 0.004725 exactly; 0.000001 × 0.92 rounds up to one micro-unit in conversion
    expect(mulRate(31_500n, { num: 15n, den: 100n }, 'down')).toBe(4_725n);
    expect(convert(1n, { num: 92n, den: 100n })).toBe(1n);
    expect(mulRate(1n, { num: 92n, den: 100n }, 'down')).toBe(0n);
  });

  it('up and down bracket the exact product (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_AMOUNT }), fc.bigInt({ min: 0n, max: 10n ** 8n }), fc.integer({ min: 0, max: 8 }), (amount, num, decimals) => {
        const r = { num, den: 10n ** BigInt(decimals) };
        const down = mulRate(amount, r, 'down');
        const up = mulRate(amount, r, 'up');
        expect(down * r.den <= amount * r.num).toBe(true);
        expect(up * r.den >= amount * r.num).toBe(true);
        expect(up - down === 0n || up - down === 1n).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
