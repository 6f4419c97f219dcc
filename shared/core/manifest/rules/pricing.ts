/**
 * Pricing rules (spec/manifest.md §4).
 *
 * Currency: required for every priced model (per_run, per_unit, quote). A `free` agent may omit it,
 * unless it declares `calls` or a `downstream.cap`, which are amounts in the pricing currency;
 * a free agent without a currency is normalized to "EUR" (every amount it hasField is 0).
 */
import type { Micros } from '../../money.js';
import type { PricingModel } from '../types.js';
import { amountField, section, type Report } from './util.js';
import { hasField, type JsonObject } from '../../json.js';

const PRICING_MODELS: readonly PricingModel[] = ['free', 'per_run', 'per_unit', 'quote'];

/** The fields each model needs; the others among amount/unit/max do not belong to it. */
const NEEDS: Record<PricingModel, ReadonlyArray<'amount' | 'unit' | 'max'>> = {
  free: [],
  per_run: ['amount'],
  per_unit: ['amount', 'unit', 'max'],
  quote: ['max'],
};

export function pricingModel(doc: JsonObject): PricingModel | undefined {
  const model = section(doc, 'pricing')?.model;
  return PRICING_MODELS.find((m) => m === model);
}

export function checkPricing(doc: JsonObject, report: Report): void {
  const pricing = section(doc, 'pricing');
  const model = pricingModel(doc);
  if (!pricing || !model) return; // missing or unknown model: reported by the schema stage

  if (!hasField(pricing, 'currency')) {
    if (model !== 'free') report('$.pricing.currency', `is required with the ${model} pricing model`);
    else if (declaresAmounts(doc)) report('$.pricing.currency', 'is required when calls or downstream.cap are declared: their amounts are in this currency');
  }

  const needs = NEEDS[model];
  for (const field of ['amount', 'unit', 'max'] as const) {
    const path = `$.pricing.${field}`;
    if (needs.includes(field) && !hasField(pricing, field)) report(path, `is required with the ${model} pricing model`);
    if (!needs.includes(field) && hasField(pricing, field)) {
      report(path, `does not belong to the ${model} pricing model${needs.length ? ` (it takes ${needs.join(', ')})` : ''}`);
    }
  }
  if (needs.includes('amount')) amountField(pricing, { key: 'amount', path: '$.pricing.amount' }, report);
  if (needs.includes('max')) amountField(pricing, { key: 'max', path: '$.pricing.max', allowZero: false }, report);
}

/**
 * The agent's own worst case (spec §4): 0 for free, `amount` for per_run, `max` for per_unit and quote.
 * Undefined when the pricing is not valid enough to say.
 */
export function ownWorstCase(doc: JsonObject): Micros | undefined {
  const pricing = section(doc, 'pricing');
  const model = pricingModel(doc);
  if (!pricing || !model) return undefined;
  if (model === 'free') return 0n;
  const ignore: Report = () => {};
  return amountField(pricing, { key: model === 'per_run' ? 'amount' : 'max', path: '', allowZero: model === 'per_run' }, ignore);
}

function declaresAmounts(doc: JsonObject): boolean {
  const calls = doc.calls;
  return (Array.isArray(calls) && calls.length > 0) || hasField(section(doc, 'downstream') ?? {}, 'cap');
}
