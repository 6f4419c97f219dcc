// @ts-check
// Amounts are decimal strings in the API and integer micro-units here (BigInt): no floating point touches money,
// so the console's sums agree with the gateway's to the micro-unit. The same rules as shared/core/money.ts
// (tests/unit/console-money.test.ts compares them on arbitrary amounts).

const DECIMALS = 6;
const UNIT = 10n ** BigInt(DECIMALS);

/** An amount a person types (a price, demo credit): digits, and up to 6 decimals after a point. */
const AMOUNT = /^[0-9]+(\.[0-9]{1,6})?$/;

/** What a person typed in an amount field, read as an amount: trimmed, a decimal comma taken as a point. */
export const typedAmount = (/** @type {string} */ text) => text.trim().replace(',', '.');

/** True when a typed amount (see typedAmount) is an amount above zero. */
export const isPositiveAmount = (/** @type {string} */ value) => AMOUNT.test(value) && toMicros(value) !== 0n;

/**
 * "0.0035" → 3500n. Throws on anything that is not a decimal amount.
 * @param {string | number} amount
 * @returns {bigint}
 */
export function toMicros(amount) {
  const m = /^(-?)([0-9]+)(?:\.([0-9]{1,6}))?$/.exec(String(amount));
  if (!m) throw new Error(`not an amount: ${amount}`);
  const micros = BigInt(m[2] ?? '0') * UNIT + BigInt((m[3] ?? '').padEnd(DECIMALS, '0') || '0');
  return m[1] ? -micros : micros;
}

/**
 * 3500n → "0.0035": the gateway's own format (no trailing zeros beyond two decimals).
 * @param {bigint} micros
 */
export function formatMicros(micros) {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  let frac = (abs % UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${negative ? '-' : ''}${abs / UNIT}.${frac}`;
}

/** @param {ReadonlyArray<string | bigint>} amounts */
export const sum = (amounts) => amounts.reduce((/** @type {bigint} */ total, a) => total + (typeof a === 'bigint' ? a : toMicros(a)), 0n);

/**
 * "0.0035 EUR"
 * @param {string | bigint} amount
 * @param {string | null} [currency]
 */
export const money = (amount, currency) =>
  `${typeof amount === 'bigint' ? formatMicros(amount) : formatMicros(toMicros(amount))}${currency ? ` ${currency}` : ''}`;

/**
 * A share in [0, 1] of two micro-unit amounts, for drawing only.
 * @param {bigint} part
 * @param {bigint} whole
 */
export const share = (part, whole) => (whole > 0n ? Math.min(1, Number((part * 10000n) / whole) / 10000) : 0);
