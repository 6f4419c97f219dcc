/**
 * Pricing rules of a manifest (shared/core/manifest/rules/pricing.ts, spec/manifest.md §4): models, currency, amounts,
 * units, maxima, charge_on.
 */
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../shared/core/manifest/index.js';
import { SPEC_YAML, check, expectProblem, expectValid } from '../support/manifest-checks.js';

describe('pricing', () => {
  it('refuses JSON numbers as amounts', () => {
    expectProblem(
      check((d) => (d.pricing.amount = 0.005)),
      '$.pricing.amount',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.pricing.max = 1)),
      '$.pricing.max',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.calls[0].max_cost = 0.02)),
      '$.calls[0].max_cost',
      'JSON number',
    );
    expectProblem(
      check((d) => (d.downstream.cap = 0.4)),
      '$.downstream.cap',
      'JSON number',
    );
  });

  it('refuses amounts with more than 6 decimals, exponents and signs', () => {
    expectProblem(
      check((d) => (d.pricing.amount = '0.0000001')),
      '$.pricing.amount',
      'decimals',
    );
    expectProblem(
      check((d) => (d.pricing.amount = '5e-3')),
      '$.pricing.amount',
      'not a plain decimal',
    );
    expectProblem(
      check((d) => (d.pricing.amount = '-0.005')),
      '$.pricing.amount',
      'negative',
    );
    expectProblem(
      check((d) => (d.pricing.max = '.5')),
      '$.pricing.max',
    );
    expectValid(check((d) => (d.pricing.amount = '0.000001')));
  });

  it('YAML numbers are refused where amounts are expected', () => {
    const r = parseManifest(SPEC_YAML.replace('amount: "0.005"', 'amount: 0.005'));
    expectProblem(r, '$.pricing.amount', 'JSON number');
  });

  it('requires the fields of each model', () => {
    expectProblem(
      check((d) => delete d.pricing.max),
      '$.pricing.max',
      'required with the per_unit',
    );
    expectProblem(
      check((d) => delete d.pricing.unit),
      '$.pricing.unit',
      'required',
    );
    expectProblem(
      check((d) => delete d.pricing.amount),
      '$.pricing.amount',
      'required',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR' })),
      '$.pricing.amount',
      'required with the per_run',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR' })),
      '$.pricing.max',
      'required with the quote',
    );
    expectValid(check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '1.00' })));
  });

  it('refuses fields that do not belong to the model', () => {
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.10', unit: 'page' })),
      '$.pricing.unit',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.10', max: '1.00' })),
      '$.pricing.max',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '1.00', amount: '0.10' })),
      '$.pricing.amount',
      'does not belong',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'free', amount: '0' })),
      '$.pricing.amount',
      'does not belong',
    );
  });

  it('requires max > 0 for per_unit and quote', () => {
    expectProblem(
      check((d) => (d.pricing.max = '0')),
      '$.pricing.max',
      'more than zero',
    );
    expectProblem(
      check((d) => (d.pricing = { model: 'quote', currency: 'EUR', max: '0.00' })),
      '$.pricing.max',
      'more than zero',
    );
  });

  it('checks the model, currency and charge_on', () => {
    expectProblem(
      check((d) => (d.pricing.model = 'subscription')),
      '$.pricing.model',
      'one of',
    );
    expectProblem(
      check((d) => delete d.pricing.model),
      '$.pricing.model',
      'required',
    );
    expectProblem(
      check((d) => delete d.pricing.currency),
      '$.pricing.currency',
      'required',
    );
    expectProblem(
      check((d) => (d.pricing.currency = 'eur')),
      '$.pricing.currency',
      'ISO 4217',
    );
    expectProblem(
      check((d) => (d.pricing.currency = 'EURO')),
      '$.pricing.currency',
      'ISO 4217',
    );
    expectProblem(
      check((d) => (d.pricing.charge_on = 'always')),
      '$.pricing.charge_on',
      'one of',
    );
    const r = check((d) => delete d.pricing.charge_on);
    expectValid(r);
    if (r.ok) expect(r.manifest.pricing.chargeOn).toBe('success');
  });

  it('requires a currency for a free agent that declares calls', () => {
    const r = check((d) => {
      d.pricing = { model: 'free' };
      d.calls[0].max_cost = '0.02';
    });
    expectProblem(r, '$.pricing.currency', 'calls');
  });
});
