/**
 * The platform's exchange rates (HOLON_FX: `USD:EUR=0.92`, 1 USD is 0.92 EUR), pure. A mandate the platform makes
 * for a payment (shared/payments/) needs rates from each agent's currency into the payment's currency: a pair given
 * that way is used as it is; a pair given the other way is inverted, rounded UP to 6 decimals (converting a price
 * into the payer's currency always rounds up, pricing.ts), so the inverse never undercharges the author.
 */
import { divRound, type Rate, tryParseRate } from './money.js';

export interface FxPair {
  from: string;
  to: string;
  rate: Rate;
}

const INVERSE_DECIMALS = 6n;

/** The pairs of the setting's text (its syntax was checked where it was read); a problem names the pair. */
export function parseFxTable(text: string | undefined): { ok: true; pairs: FxPair[] } | { ok: false; message: string } {
  const pairs: FxPair[] = [];
  for (const part of (text ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([A-Z]{3}):([A-Z]{3})=(.+)$/.exec(part);
    if (!m) return { ok: false, message: `"${part}" is not FROM:TO=rate` };
    const [, from, to, value] = m;
    if (from === to) return { ok: false, message: `"${part}" converts ${from} into itself` };
    const rate = tryParseRate(value, { maxDecimals: 6, allowZero: false });
    if (!rate.ok) return { ok: false, message: `"${part}": the rate ${rate.message}` };
    if (pairs.some((p) => (p.from === from && p.to === to) || (p.from === to && p.to === from)))
      return { ok: false, message: `${from} and ${to} are given twice` };
    pairs.push({ from: from!, to: to!, rate: rate.value });
  }
  return { ok: true, pairs };
}

/** 1/rate as a decimal fraction of 6 digits, rounded up. */
export function invertRate(rate: Rate): Rate {
  const den = 10n ** INVERSE_DECIMALS;
  return { num: divRound(rate.den * den, rate.num, 'up'), den };
}

/** The rates from every currency the table knows into `currency` (1 X = rate `currency`), as a mandate's `budget.fx`. */
export function ratesInto(currency: string, pairs: readonly FxPair[]): Record<string, Rate> {
  const out: Record<string, Rate> = {};
  for (const p of pairs) {
    if (p.to === currency) out[p.from] = p.rate;
    else if (p.from === currency) out[p.to] = invertRate(p.rate);
  }
  return out;
}
