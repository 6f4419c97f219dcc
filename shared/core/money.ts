/**
 * Money: the one module that parses, formats and rounds amounts.
 *
 * In code an amount is a `bigint` of micro-units (1 unit = 1_000_000 micro-units).
 * On the wire it is a decimal string with at most 6 decimals: "0.035", "5.00".
 * No floating point ever touches money.
 *
 * Rates (fx rates, royalties, fractions) are exact decimals too: `Rate = {num, den}`
 * with `den` a power of ten. Multiplying an amount by a rate always names its rounding.
 */

export type Micros = bigint;

const MICROS_PER_UNIT = 1_000_000n;
const AMOUNT_DECIMALS = 6;

/** An exact non-negative decimal fraction num/den, den = 10^k. */
export interface Rate {
  readonly num: bigint;
  readonly den: bigint;
}

export type Rounding = 'up' | 'down';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export interface AmountOptions {
  /** Allow a leading '-' (journal lines, adjustments). Default false. */
  allowNegative?: boolean;
  /** Allow exactly zero. Default true. */
  allowZero?: boolean;
}

const DECIMAL = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
/** Largest amount we accept on the wire: 10^12 units. Keeps every sum far inside bigint-to-NUMERIC range. */
export const MAX_AMOUNT: Micros = 1_000_000_000_000n * MICROS_PER_UNIT;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'number' ? `the JSON number ${String(value)}` : `a ${typeof value}`;
}

/**
 * Parse a decimal-string amount into micro-units, or say in plain words why not.
 * Refuses: non-strings (a JSON number is never an amount), empty strings, exponents,
 * '+' signs, '-' unless allowed, leading zeros ("01"), a bare "." or "1.", more than 6 decimals,
 * whitespace, and amounts above MAX_AMOUNT.
 */
export function tryParseAmount(value: unknown, options: AmountOptions = {}): Parsed<Micros> {
  if (typeof value !== 'string') {
    return { ok: false, message: `must be a decimal string such as "0.05", not ${describe(value)}` };
  }
  if (value === '') return { ok: false, message: 'must be a decimal string such as "0.05", not an empty string' };
  const m = DECIMAL.exec(value);
  if (!m) {
    return { ok: false, message: `"${truncate(value)}" is not a plain decimal amount (digits, an optional "." and up to ${AMOUNT_DECIMALS} decimals)` };
  }
  const [, sign, whole, frac = ''] = m;
  if (sign && !options.allowNegative) return { ok: false, message: `"${value}" must not be negative` };
  if (frac.length > AMOUNT_DECIMALS) {
    return { ok: false, message: `"${value}" has ${frac.length} decimals; at most ${AMOUNT_DECIMALS} are allowed (one micro-unit is 0.000001)` };
  }
  const magnitude = BigInt(whole!) * MICROS_PER_UNIT + BigInt(frac.padEnd(AMOUNT_DECIMALS, '0') || '0');
  if (magnitude > MAX_AMOUNT) return { ok: false, message: `"${truncate(value)}" is larger than the largest amount accepted` };
  const micros = sign ? -magnitude : magnitude;
  if (micros === 0n && options.allowZero === false) return { ok: false, message: 'must be more than zero' };
  return { ok: true, value: micros };
}

class MoneyError extends Error {
  override readonly name = 'MoneyError';
}

export function parseAmount(value: unknown, options: AmountOptions = {}): Micros {
  const r = tryParseAmount(value, options);
  if (!r.ok) throw new MoneyError(r.message);
  return r.value;
}

/**
 * Format micro-units as a decimal string: at least 2 decimals, trailing zeros beyond that trimmed.
 * 5_000_000n → "5.00", 35_000n → "0.035", 3_500n → "0.0035", -10_000n → "-0.01".
 */
export function formatAmount(micros: Micros): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  let frac = (abs % MICROS_PER_UNIT).toString().padStart(AMOUNT_DECIMALS, '0');
  while (frac.length > 2 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/**
 * Parse an exact decimal fraction ("0.15", "0.92", "1") as a Rate.
 * `maxDecimals` bounds precision (royalties: 4); `max` (exclusive or inclusive) bounds the value.
 */
export function tryParseRate(value: unknown, options: { maxDecimals: number; below?: Rate; atMost?: Rate; allowZero?: boolean }): Parsed<Rate> {
  if (typeof value !== 'string') {
    return { ok: false, message: `must be a decimal string such as "0.15", not ${describe(value)}` };
  }
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(value);
  if (!m) return { ok: false, message: `"${truncate(value)}" is not a plain non-negative decimal number` };
  const [, whole, frac = ''] = m;
  if (frac.length > options.maxDecimals) {
    return { ok: false, message: `"${value}" has ${frac.length} decimals; at most ${options.maxDecimals} are allowed` };
  }
  if (whole!.length > 15) return { ok: false, message: `"${truncate(value)}" is too large` };
  const den = 10n ** BigInt(frac.length);
  const rate: Rate = { num: BigInt(whole!) * den + BigInt(frac || '0'), den };
  if (options.allowZero === false && rate.num === 0n) return { ok: false, message: 'must be more than zero' };
  if (options.below && compareRates(rate, options.below) >= 0) {
    return { ok: false, message: `"${value}" must be below ${formatRate(options.below)}` };
  }
  if (options.atMost && compareRates(rate, options.atMost) > 0) {
    return { ok: false, message: `"${value}" must be at most ${formatRate(options.atMost)}` };
  }
  return { ok: true, value: rate };
}

export function parseRate(value: unknown, options: { maxDecimals: number; below?: Rate; atMost?: Rate }): Rate {
  const r = tryParseRate(value, options);
  if (!r.ok) throw new MoneyError(r.message);
  return r.value;
}

export const ONE_RATE: Rate = { num: 1n, den: 1n };

export function compareRates(a: Rate, b: Rate): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

export function formatRate(r: Rate): string {
  const whole = r.num / r.den;
  const rest = r.num % r.den;
  if (rest === 0n) return whole.toString();
  const digits = r.den.toString().length - 1;
  return `${whole}.${rest.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Divide with explicit rounding; `n` may be negative only with rounding 'down' meaning toward -infinity. */
export function divRound(n: bigint, d: bigint, rounding: Rounding): bigint {
  if (d <= 0n) throw new MoneyError('division by a non-positive number');
  const q = n / d;
  const r = n % d;
  if (r === 0n) return q;
  if (rounding === 'up') return n > 0n ? q + 1n : q;
  return n > 0n ? q : q - 1n;
}

/** amount × rate, rounded to the micro-unit as named. */
export function mulRate(amount: Micros, r: Rate, rounding: Rounding): Micros {
  return divRound(amount * r.num, r.den, rounding);
}

/** Convert an amount into another currency at `fxRate` (1 source = fxRate target), rounding up. */
export function convert(amount: Micros, fxRate: Rate): Micros {
  return mulRate(amount, fxRate, 'up');
}

export function minAmount(a: Micros, b: Micros): Micros {
  return a < b ? a : b;
}

const CURRENCY = /^[A-Z]{3}$/;

export function isCurrency(value: unknown): value is string {
  return typeof value === 'string' && CURRENCY.test(value);
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
