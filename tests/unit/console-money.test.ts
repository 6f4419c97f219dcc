/**
 * The console's money (services/api/console/js/money.js: plain JavaScript, served as it is) against the core's
 * (shared/core/money.ts), on arbitrary amounts: the console formats every amount as the gateway does, reads back
 * what the gateway writes, adds exactly, and takes a typed price or credit as the gateway would.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAmount, MAX_AMOUNT, parseAmount, tryParseAmount } from '../../shared/core/money.js';

/** The console module's exports used here (its own types are JSDoc, checked by tsconfig.console.json). */
interface ConsoleMoney {
  toMicros(amount: string): bigint;
  formatMicros(micros: bigint): string;
  money(amount: string | bigint, currency?: string | null): string;
  sum(amounts: ReadonlyArray<string | bigint>): bigint;
  typedAmount(text: string): string;
  isPositiveAmount(value: string): boolean;
}

const consoleMoney = (await import(new URL('../../services/api/console/js/money.js', import.meta.url).href)) as ConsoleMoney;

const micros = fc.bigInt({ min: -MAX_AMOUNT, max: MAX_AMOUNT });
const currency = fc.stringMatching(/^[A-Z]{3}$/);
/** Decimal-looking strings, good and bad: a sign, up to 12 digits (leading zeros too), a point and up to 8 decimals. */
const decimalish = fc.stringMatching(/^-?[0-9]{1,12}(\.[0-9]{0,8})?$/);
/** The console reads "007" as 7 where the core refuses leading zeros: compare on the core's spelling. */
const withoutLeadingZeros = (s: string) => s.replace(/^(-?)0+(?=[0-9])/, '$1');

describe('the console’s money agrees with the core’s', () => {
  it('formats every amount as the gateway does, and reads it back', () => {
    fc.assert(
      fc.property(micros, (m) => {
        expect(consoleMoney.formatMicros(m)).toBe(formatAmount(m));
        expect(consoleMoney.toMicros(formatAmount(m))).toBe(m);
        expect(parseAmount(consoleMoney.formatMicros(m), { allowNegative: true })).toBe(m);
      }),
    );
  });

  it('reads a decimal string as the core does, and refuses what the core refuses', () => {
    fc.assert(
      fc.property(decimalish, (s) => {
        const core = tryParseAmount(withoutLeadingZeros(s), { allowNegative: true });
        let mine: bigint | undefined;
        try {
          mine = consoleMoney.toMicros(s);
        } catch {
          mine = undefined;
        }
        expect(mine).toBe(core.ok ? core.value : undefined);
      }),
    );
  });

  it('says an amount with its currency in the gateway’s format', () => {
    fc.assert(
      fc.property(micros, currency, (m, c) => {
        expect(consoleMoney.money(formatAmount(m), c)).toBe(`${formatAmount(m)} ${c}`);
        expect(consoleMoney.money(m, c)).toBe(`${formatAmount(m)} ${c}`);
        expect(consoleMoney.money(m)).toBe(formatAmount(m));
      }),
    );
  });

  it('adds amounts exactly, to the micro-unit', () => {
    fc.assert(
      fc.property(fc.array(micros, { maxLength: 20 }), (ms) => {
        expect(consoleMoney.sum(ms.map(formatAmount))).toBe(ms.reduce((a, b) => a + b, 0n));
      }),
    );
  });

  it('takes a typed amount above zero exactly when the core would', () => {
    fc.assert(
      fc.property(decimalish, fc.boolean(), (s, comma) => {
        const typed = consoleMoney.typedAmount(` ${comma ? s.replace('.', ',') : s} `);
        expect(typed).toBe(s);
        expect(consoleMoney.isPositiveAmount(typed)).toBe(tryParseAmount(withoutLeadingZeros(s), { allowZero: false }).ok);
      }),
    );
  });

  it('formats the edges as the core does', () => {
    for (const m of [0n, 1n, -1n, 10_000n, 1_000_000n, 3_500n, -10_000n, MAX_AMOUNT, -MAX_AMOUNT]) {
      expect(consoleMoney.formatMicros(m)).toBe(formatAmount(m));
    }
    expect(consoleMoney.money('0.0035', 'EUR')).toBe('0.0035 EUR');
  });
});
