/**
 * Pricing: worst cases and charges (gateway.md §2, manifest.md §4, §7). Pure, bigint only.
 *
 * Conventions (where the spec is silent, decided here):
 * - Conversion into the mandate's currency always rounds UP (money.convert). The agent's own worst case
 *   and the passthrough `downstream.cap` are converted SEPARATELY, each rounded up, then added:
 *   `listed = convert(own) + convert(cap)`. This can be one micro-unit above `convert(own + cap)`, never
 *   below, so the hold always covers the own charge and the downstream budget, each converted on its own.
 * - With a caller `max_cost` (mandate currency): `own = min(ownConverted, max_cost)`,
 *   `downstream = min(capConverted, max_cost − own)` for passthrough (0 for included: the caller never
 *   pays an included agent's downstream calls), `total = own + downstream = min(listed, max_cost)`.
 * - A `per_run` price whose converted amount exceeds `max_cost` is `below_per_run_price` (a deny).
 * - A missing fx rate is `no_fx_rate`, except for an agent that can never cost anything (own worst case 0
 *   and no passthrough cap): its worst case is 0 in any currency, as checkCall admits it.
 * - A charge of zero is reported as `billed: false` (nothing moves; a "billed" receipt for 0 would mislead).
 * - Missing `units` (per_unit) or `quote` (quote) on a billable outcome count as 0: never guess upward.
 *   Negative or non-integer units, or a negative quote, throw a RangeError: the runtime validates what
 *   the run reports before calling `charge`, so reaching here with one is a programming error.
 */
import { convert, formatAmount, minAmount, ONE_RATE, type Micros, type Rate } from './money.js';
import { RESERVED_ERROR_CODES, type Manifest, type Pricing } from './manifest/types.js';

export interface MandateBudget {
  currency: string;
  fx: Record<string, Rate>;
}

export type WorstCase =
  | { ok: true; own: Micros; downstream: Micros; total: Micros; listed: Micros }
  | { ok: false; code: 'no_fx_rate' | 'below_per_run_price'; message: string };

type FailureCode =
  | 'timeout'
  | 'invalid_output'
  | 'agent_error'
  | 'runtime_unavailable'
  | 'gateway_error'
  | 'gateway_restarted'
  | 'cancelled'
  | 'undeclared_error'
  | (string & {});

export type Outcome =
  | { kind: 'success'; units?: number | bigint; quote?: Micros }
  | { kind: 'declared_error'; code: string; units?: number | bigint; quote?: Micros }
  | { kind: 'failure'; code: FailureCode }
  /** Denied, pending approval, rejected input: nothing ran. */
  | { kind: 'not_run'; why?: string };

export interface Charge {
  billed: boolean;
  /** In the mandate's currency; 0n whenever billed is false. */
  own: Micros;
  reason: string;
}

function required(value: Micros | undefined, what: string): Micros {
  if (value === undefined) throw new RangeError(`pricing: ${what} is missing (the manifest was not validated)`);
  return value;
}

/** The most one run can cost for the agent's own work, in the agent's pricing currency. */
export function ownWorstCase(pricing: Pricing): Micros {
  switch (pricing.model) {
    case 'free':
      return 0n;
    case 'per_run':
      return required(pricing.amount, 'per_run amount');
    case 'per_unit':
      return required(pricing.max, 'per_unit max');
    case 'quote':
      return required(pricing.max, 'quote max');
  }
}

/** Own worst case 0 and nothing passed through downstream: the agent can never cost the caller anything. */
export function costsNothing(manifest: Manifest): boolean {
  const cap = manifest.downstream?.mode === 'passthrough' ? (manifest.downstream.cap ?? 0n) : 0n;
  return ownWorstCase(manifest.pricing) === 0n && cap === 0n;
}

/** The rate from the agent's currency into the mandate's (1 agent unit = rate mandate units), or null. */
export function fxRateFor(agentCurrency: string, mandate: MandateBudget): Rate | null {
  if (agentCurrency === mandate.currency) return ONE_RATE;
  return Object.hasOwn(mandate.fx, agentCurrency) ? mandate.fx[agentCurrency]! : null;
}

/** The caller's worst case in the mandate's currency, after `maxCost` (mandate currency). */
export function worstCase(manifest: Manifest, budget: MandateBudget, maxCost?: Micros): WorstCase {
  const { pricing } = manifest;
  if (maxCost !== undefined && maxCost < 0n) throw new RangeError('max_cost must not be negative');
  const passthrough = manifest.downstream?.mode === 'passthrough';
  const ownListed = ownWorstCase(pricing);
  const capListed = passthrough ? (manifest.downstream?.cap ?? 0n) : 0n;
  // An agent that can never cost anything needs no rate: 0 is 0 in every currency (as in checkCall).
  const fx = fxRateFor(pricing.currency, budget) ?? (costsNothing(manifest) ? ONE_RATE : null);
  if (!fx) {
    return { ok: false, code: 'no_fx_rate', message: `the mandate has no fx rate from ${pricing.currency} to ${budget.currency}` };
  }
  const ownConverted = convert(ownListed, fx);
  const capConverted = convert(capListed, fx);
  const listed = ownConverted + capConverted;
  if (maxCost === undefined) return { ok: true, own: ownConverted, downstream: capConverted, total: listed, listed };
  if (pricing.model === 'per_run' && ownConverted > maxCost) {
    const price = `${formatAmount(ownConverted)} ${budget.currency}`;
    const cap = `${formatAmount(maxCost)} ${budget.currency}`;
    return { ok: false, code: 'below_per_run_price', message: `max_cost ${cap} is below the per_run price ${price}; it is never lowered` };
  }
  const own = minAmount(ownConverted, maxCost);
  const downstream = minAmount(capConverted, maxCost - own);
  return { ok: true, own, downstream, total: own + downstream, listed };
}

/**
 * `budget.total` of the sub-mandate derived for a run (gateway.md §3, mandate.md §5), mandate currency.
 * passthrough: the downstream budget left by `worstCase` (the cap, or what `maxCost` leaves after the own
 * price). included: the agent's own worst case after `maxCost` — the most this run can earn its author,
 * whose account pays the downstream calls with its own hold.
 * Throws when `worstCase` is not ok: admission denies those calls, so no run can reach here.
 */
export function subMandateBudget(manifest: Manifest, budget: MandateBudget, maxCost?: Micros): Micros {
  const wc = worstCase(manifest, budget, maxCost);
  if (!wc.ok) throw new Error(`no sub-mandate for a call that cannot be admitted: ${wc.message}`);
  return manifest.downstream?.mode === 'passthrough' ? wc.downstream : wc.own;
}

function checkUnits(units: number | bigint | undefined): bigint {
  if (units === undefined) return 0n;
  if (typeof units === 'number' && !Number.isSafeInteger(units)) {
    throw new RangeError(`units must be a non-negative integer, not ${units}`);
  }
  const n = BigInt(units);
  if (n < 0n) throw new RangeError(`units must be a non-negative integer, not ${units}`);
  return n;
}

/** The price of a billable outcome in the agent's currency (manifest.md §4), before conversion. */
function agentPrice(pricing: Pricing, units: number | bigint | undefined, quote: Micros | undefined): Micros {
  switch (pricing.model) {
    case 'free':
      return 0n;
    case 'per_run':
      return required(pricing.amount, 'per_run amount');
    case 'per_unit': {
      const n = checkUnits(units);
      return minAmount(required(pricing.amount, 'per_unit amount') * n, required(pricing.max, 'per_unit max'));
    }
    case 'quote': {
      if (quote !== undefined && quote < 0n) throw new RangeError('a quote must not be negative');
      return minAmount(quote ?? 0n, required(pricing.max, 'quote max'));
    }
  }
}

const notBilled = (reason: string): Charge => ({ billed: false, own: 0n, reason });

/**
 * What the caller is charged for the agent's own work, in the mandate's currency (gateway.md §2).
 * Invariant: `own ≤ worstCase(...).own ≤ maxCost`. Downstream calls are charged on their own receipts.
 */
export function charge(manifest: Manifest, outcome: Outcome, budget: MandateBudget, maxCost?: Micros): Charge {
  let units: number | bigint | undefined;
  let quote: Micros | undefined;
  let what: string;
  switch (outcome.kind) {
    case 'not_run':
      return notBilled(`nothing ran${outcome.why ? ` (${outcome.why})` : ''}: never billed`);
    case 'failure':
      return notBilled(`${outcome.code}: failures are never billed`);
    case 'declared_error': {
      const { code } = outcome;
      const declared = Object.hasOwn(manifest.interface.errors, code) ? manifest.interface.errors[code] : undefined;
      if (!declared || (RESERVED_ERROR_CODES as readonly string[]).includes(code)) {
        return notBilled(`error "${code}" is not declared by the agent: never billed`);
      }
      if (!declared.billed) return notBilled(`declared error "${code}" is not billed`);
      if (manifest.pricing.chargeOn !== 'attempt') {
        return notBilled(`declared error "${code}" is billed only under charge_on: attempt`);
      }
      ({ units, quote } = outcome);
      what = `declared error "${code}" (billed, charge_on: attempt)`;
      break;
    }
    case 'success':
      ({ units, quote } = outcome);
      what = 'success';
      break;
  }
  const price = agentPrice(manifest.pricing, units, quote);
  const wc = worstCase(manifest, budget, maxCost);
  if (!wc.ok) throw new Error(`cannot charge a call that could not be admitted: ${wc.message}`);
  const fx = fxRateFor(manifest.pricing.currency, budget);
  const converted = fx ? convert(price, fx) : price; // no rate: worstCase was ok, so the price is 0
  const own = minAmount(converted, wc.own);
  if (own === 0n) return notBilled(`${what}: the price is zero, nothing billed`);
  const capped = own < converted ? ' (capped at max_cost; the agent absorbs the rest)' : '';
  return { billed: true, own, reason: `${what}${capped}` };
}

/**
 * A streamed output (docs/lifecycle.md, "Calls that stream"): whether `units` delivered so far keep the agent's own
 * cost within what was reserved for it (`worstCase(...).own`: the price's worst case, after `maxCost`). Uncapped: the
 * chunk whose units would cost more than the reservation ends the run (`ended_by: budget`) instead of being delivered
 * unpaid. Models other than per_unit never bill by chunk, so no chunk can take them past their reservation.
 */
export function unitsWithinReservation(manifest: Manifest, units: bigint, budget: MandateBudget, maxCost?: Micros): boolean {
  const { pricing } = manifest;
  if (pricing.model !== 'per_unit') return true;
  const wc = worstCase(manifest, budget, maxCost);
  if (!wc.ok) return false;
  const listed = required(pricing.amount, 'per_unit amount') * checkUnits(units);
  if (listed > required(pricing.max, 'per_unit max')) return false;
  const fx = fxRateFor(pricing.currency, budget);
  const cost = fx ? convert(listed, fx) : listed;
  return cost <= wc.own;
}

/**
 * What a stream that ended before its final output is charged (the budget cap, the caller's cancel or disconnect):
 * per_unit bills the units delivered; every other model nothing — the promised output never arrived.
 */
export function chargeDelivered(manifest: Manifest, units: bigint, budget: MandateBudget, maxCost?: Micros): Charge {
  if (manifest.pricing.model !== 'per_unit') return notBilled(`the stream ended before its output: ${manifest.pricing.model} bills nothing`);
  const c = charge(manifest, { kind: 'success', units }, budget, maxCost);
  return c.billed ? { ...c, reason: `the units delivered before the stream ended (${units})` } : c;
}
