import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  costPerSuccess,
  parseAgentRef,
  rankCapability,
  rankingRecord,
  resolveVersion,
  type Candidate,
  type RankRequest,
} from '../../shared/core/resolution.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import type { AgentFacts } from '../../shared/core/mandate/types.js';
import { mandate, manifest } from '../support/pricing-fixtures.js';

describe('parseAgentRef', () => {
  it('parses ns/name and ns/name@range', () => {
    expect(parseAgentRef('acme/pdf-tables')).toEqual({ id: 'acme/pdf-tables', namespace: 'acme', name: 'pdf-tables' });
    expect(parseAgentRef('acme/pdf-tables@^2')).toEqual({ id: 'acme/pdf-tables', namespace: 'acme', name: 'pdf-tables', range: '^2' });
    expect(parseAgentRef('acme/pdf-tables@2.0.1')?.range).toBe('2.0.1');
    expect(parseAgentRef('acme/pdf@>=1.2.0 <2')?.range).toBe('>=1.2.0 <2');
  });

  it.each([
    'acme',
    'acme/',
    '/pdf',
    'Acme/pdf',
    'a/pdf',
    '-ac/pdf',
    'acme/pdf-',
    'acme/pdf@',
    'acme/pdf@ ^2',
    'acme/pdf@not a range',
    'acme/pdf/x',
    'acme/*',
    '',
  ])('refuses %j', (ref) => expect(parseAgentRef(ref)).toBeNull());
});

describe('resolveVersion', () => {
  const versions = ['1.0.0', '1.2.0', '1.10.1', '2.0.0', '2.1.0-beta.1', '3.0.0-rc.1', 'not-a-version', 'v9.9.9'];

  it('picks the highest release without a range, never a pre-release or junk', () => {
    expect(resolveVersion(versions)).toBe('2.0.0');
  });

  it.each([
    ['^1', '1.10.1'],
    ['~1.2', '1.2.0'],
    ['1.0.0', '1.0.0'],
    ['>=1.2.0 <2', '1.10.1'],
    ['^2', '2.0.0'],
    ['^2.1.0-beta.0', '2.1.0-beta.1'],
    ['>=3.0.0-rc.0', '3.0.0-rc.1'],
    ['^4', null],
    ['9.9.9', null],
    ['nonsense range', null],
  ])('range %j → %j', (range, expected) => {
    expect(resolveVersion(versions, range)).toBe(expected);
  });

  it('gives null when only pre-releases are listed and no range names one', () => {
    expect(resolveVersion(['1.0.0-alpha', '1.0.0-beta'])).toBeNull();
    expect(resolveVersion(['1.0.0-alpha', '1.0.0-beta'], '^1.0.0-alpha')).toBe('1.0.0-beta');
    expect(resolveVersion([])).toBeNull();
  });
});

describe('costPerSuccess', () => {
  it('uses the Laplace prior: no runs counts as 50% at the own worst case', () => {
    expect(costPerSuccess({ runs: 0, successes: 0, billed: 0n }, 10_000n)).toBe(20_000n);
  });

  it('divides the average billed per run by the smoothed success rate, rounding up', () => {
    // avg 0.01 per run, (50+1)/(100+2) = 50% → 0.02
    expect(costPerSuccess({ runs: 100, successes: 50, billed: 1_000_000n }, 10_000n)).toBe(20_000n);
    // avg 0.015, 101/102 → 15148.51… → 15149
    expect(costPerSuccess({ runs: 100, successes: 100, billed: 1_500_000n }, 15_000n)).toBe(15_149n);
  });

  it('caps the measured average at the own worst case', () => {
    // avg 500 capped at 100, then 100 × 4/3 = 133.3… → 134
    expect(costPerSuccess({ runs: 2, successes: 2, billed: 1_000n }, 100n)).toBe(134n);
  });

  it('refuses impossible records', () => {
    expect(() => costPerSuccess({ runs: 1, successes: 2, billed: 0n }, 1n)).toThrow(RangeError);
    expect(() => costPerSuccess({ runs: -1, successes: 0, billed: 0n }, 1n)).toThrow(RangeError);
    expect(() => costPerSuccess({ runs: 1, successes: 0, billed: -1n }, 1n)).toThrow(RangeError);
  });

  it('is exact: never below the true ratio, less than one micro above it', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000 }), fc.nat({ max: 10_000 }), fc.bigInt({ min: 0n, max: 10n ** 9n }), (a, b, own) => {
        const runs = Math.max(a, b);
        const successes = Math.min(a, b);
        const billed = (own * BigInt(runs) * BigInt(a % 7)) / 7n; // at most own per run
        const cps = costPerSuccess({ runs, successes, billed }, own);
        const avgNum = runs > 0 ? billed : own;
        const avgDen = runs > 0 ? BigInt(runs) : 1n;
        const num = avgNum * BigInt(runs + 2);
        const den = BigInt(successes + 1) * avgDen;
        expect(cps * den >= num).toBe(true);
        expect((cps - 1n) * den < num).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('rankingRecord', () => {
  const record = fc
    .tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 50 }))
    .map(([a, b, billed, payers]) => ({ runs: Math.max(a, b), successes: Math.min(a, b), billed, payers }));

  it('below the distinct payers needed, any record ranks exactly as no record (the prior); from there on, as measured', () => {
    fc.assert(
      fc.property(record, fc.integer({ min: 1, max: 50 }), fc.bigInt({ min: 1n, max: 10n ** 9n }), (r, minPayers, worst) => {
        const ranked = rankingRecord(r, minPayers);
        if (r.payers < minPayers) {
          expect(ranked).toEqual({ runs: 0, successes: 0, billed: 0n });
          expect(costPerSuccess(ranked, worst)).toBe(2n * worst);
        } else {
          expect(ranked).toEqual({ runs: r.runs, successes: r.successes, billed: r.billed });
        }
      }),
    );
  });

  it('one payer, however many perfect runs, never moves a ranking at the default of three', () => {
    expect(rankingRecord({ runs: 1_000_000, successes: 1_000_000, billed: 1n, payers: 1 }, 3)).toEqual({ runs: 0, successes: 0, billed: 0n });
    expect(rankingRecord({ runs: 3, successes: 3, billed: 3n, payers: 3 }, 3)).toEqual({ runs: 3, successes: 3, billed: 3n });
  });
});

describe('rankCapability', () => {
  const facts: AgentFacts = { origin: 'published', evaluation: 'passed' };
  const request: RankRequest = { depth: 0, delegated: false, usedBefore: true, now: Date.parse('2026-01-01T00:00:00Z') };
  const m = mandate({ budget: { perCall: 1_000_000n } });
  const agent = (id: string, amount: bigint, extra: Partial<Manifest> = {}): Manifest =>
    manifest({ id, pricing: { model: 'per_run', amount, chargeOn: 'attempt' }, ...extra });
  const cand = (man: Manifest, runs = 0, successes = 0, billed = 0n): Candidate => ({
    manifest: man,
    facts: { ...facts, record: { runs, successes } },
    record: { runs, successes, billed },
  });

  it('picks the cheaper-per-success agent once records exist', () => {
    const cheap = agent('cheap/flaky', 10_000n);
    const solid = agent('solid/agent', 15_000n);
    const before = rankCapability('extraction.table', [cand(cheap), cand(solid)], m, request);
    expect(before.ranked.map((x) => x.manifest.id)).toEqual(['cheap/flaky', 'solid/agent']);
    // 0.01 billed on every attempt, 50% success vs 0.015 with 100% success.
    const after = rankCapability('extraction.table', [cand(cheap, 100, 50, 1_000_000n), cand(solid, 100, 100, 1_500_000n)], m, request);
    expect(after.ranked.map((x) => [x.manifest.id, x.costPerSuccess])).toEqual([
      ['solid/agent', 15_149n],
      ['cheap/flaky', 20_000n],
    ]);
    expect(after.ranked[0]!.admission.decision).toBe('allow');
    expect(after.ranked[0]!.worstCase).toBe(15_000n);
  });

  it('skips agents that do not implement the capability', () => {
    const other = agent('acme/ocr', 1n, { capabilities: ['ocr.page'] });
    expect(rankCapability('extraction.table', [cand(other)], m, request)).toEqual({ ranked: [], denied: [] });
  });

  it('lists denied candidates with their reasons', () => {
    const sketchy = agent('sketchy/agent', 1n);
    const noFx = manifest({ id: 'brit/agent', pricing: { currency: 'GBP' } });
    const pricey = agent('gold/agent', 2_000_000n); // above per_call
    const ok = agent('acme/agent', 10_000n);
    const res = rankCapability(
      'extraction.table',
      [cand(sketchy), cand(noFx), cand(pricey), cand(ok)],
      mandate({
        deny: { capabilities: [], agents: ['sketchy/*'] },
        budget: { perCall: 1_000_000n },
      }),
      request,
    );
    expect(res.ranked.map((x) => x.manifest.id)).toEqual(['acme/agent']);
    expect(res.denied.map((d) => d.manifest.id)).toEqual(['sketchy/agent', 'brit/agent', 'gold/agent']);
    for (const d of res.denied) expect(d.reasons.length).toBeGreaterThan(0);
    expect(res.denied[1]!.reasons.join(' ')).toMatch(/GBP/);
  });

  it("denies a per_run agent priced above the caller's max_cost", () => {
    const res = rankCapability('extraction.table', [cand(agent('acme/agent', 10_000n))], m, { ...request, maxCost: 5_000n });
    expect(res.ranked).toEqual([]);
    expect(res.denied[0]!.reasons.length).toBeGreaterThan(0);
  });

  it('filters by the slot max_cost, after the caller max_cost', () => {
    const small = agent('acme/small', 10_000n);
    const big = manifest({ id: 'acme/big', pricing: { model: 'per_unit', amount: 1_000n, unit: 'page', max: 500_000n } });
    const res = rankCapability('extraction.table', [cand(small), cand(big)], m, { ...request, slotMaxCost: 20_000n });
    expect(res.ranked.map((x) => x.manifest.id)).toEqual(['acme/small']);
    expect(res.denied).toEqual([{ manifest: big, reasons: [expect.stringContaining("slot's max_cost")] }]);
    // With a caller max_cost inside the slot, the per-unit agent's worst case fits.
    const capped = rankCapability('extraction.table', [cand(small), cand(big)], m, { ...request, slotMaxCost: 20_000n, maxCost: 20_000n });
    expect(capped.ranked.map((x) => [x.manifest.id, x.worstCase])).toEqual([
      ['acme/small', 10_000n],
      ['acme/big', 20_000n],
    ]);
  });

  it('keeps approve decisions in the ranking', () => {
    const res = rankCapability(
      'extraction.table',
      [cand(agent('acme/agent', 10_000n))],
      mandate({
        approval: { agents: ['acme/*'], firstUse: false },
      }),
      request,
    );
    expect(res.ranked[0]!.admission.decision).toBe('approve');
  });

  it('breaks ties by worst case, then id, then version descending', () => {
    const a1 = agent('bb/agent', 10_000n);
    const a2 = { ...agent('bb/agent', 10_000n), version: '1.10.0' };
    const a3 = agent('aa/agent', 10_000n);
    const a4 = manifest({ id: 'zz/agent', pricing: { model: 'quote', max: 20_000n } }); // same record, higher worst case
    const recA = (x: Manifest) => cand(x, 1, 1, 10_000n); // 0.01 × 3/2 = 15_000
    const res = rankCapability('extraction.table', [recA(a1), cand(a4, 1, 1, 10_000n), recA(a2), recA(a3)], m, request);
    expect(res.ranked.map((x) => `${x.manifest.id}@${x.manifest.version}`)).toEqual(['aa/agent@1.0.0', 'bb/agent@1.10.0', 'bb/agent@1.0.0', 'zz/agent@1.0.0']);
  });
});
