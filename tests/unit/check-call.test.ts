import { describe, expect, it } from 'vitest';
import { checkCall } from '../../shared/core/mandate/index.js';
import type { CallRequest, Mandate } from '../../shared/core/mandate/types.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { buildMandate, buildManifest } from '../support/manifest-builder.js';

const NOW = Date.UTC(2026, 5, 1);
const AGENT = 'acme/pdf@1.0.0';

function request(overrides: Partial<CallRequest> = {}): CallRequest {
  return {
    worstCase: 50_000n,
    depth: 0,
    delegated: false,
    via: { kind: 'id' },
    usedBefore: true,
    now: NOW,
    facts: { origin: 'shipped', evaluation: 'passed', record: { runs: 100, successes: 99 } },
    ...overrides,
  };
}

const byCapability = (capability = 'extraction.table'): CallRequest['via'] => ({ kind: 'capability', capability });

function check(m: Partial<Parameters<typeof buildMandate>[0]> = {}, a: Partial<Parameters<typeof buildManifest>[0]> = {}, r: Partial<CallRequest> = {}) {
  return checkCall(buildMandate(m), buildManifest(a), request(r));
}

function denied(admission: ReturnType<typeof checkCall>, reason: string): void {
  expect(admission.decision).toBe('deny');
  expect(admission.reasons).toEqual([reason]);
}

describe('allow', () => {
  it('allows a call that breaks no rule, by id and by capability', () => {
    expect(check()).toEqual({ decision: 'allow', reasons: [] });
    expect(check({}, {}, { via: byCapability() })).toEqual({ decision: 'allow', reasons: [] });
  });
});

describe('deny rules, one at a time', () => {
  it('1. revoked', () => {
    denied(check({ revoked: true }), 'mandate alice/main has been revoked');
  });

  it('1. expired: at and after expires_at, not before', () => {
    denied(check({ expiresAt: NOW }), 'mandate alice/main expired at 2026-06-01T00:00:00.000Z');
    expect(check({ expiresAt: NOW + 1 }).decision).toBe('allow');
  });

  it('2. by id: no allow.agents pattern matches', () => {
    denied(check({ allow: { agents: ['acme/pdf@^2', 'lena/*'] } }), `agent ${AGENT} is not allowed: no allow.agents pattern matches it`);
    expect(check({ allow: { agents: ['acme/pdf@^1'] } }).decision).toBe('allow');
  });

  it('2. by id: allow.capabilities does not matter', () => {
    expect(check({ allow: { agents: ['acme/pdf'], capabilities: [] } }).decision).toBe('allow');
  });

  it('2. by capability: class not allowed', () => {
    denied(
      check({ allow: { capabilities: ['text.*'] } }, {}, { via: byCapability() }),
      'capability extraction.table is not allowed: no allow.capabilities pattern matches it',
    );
  });

  it('2. by capability: prefix.* does not match the prefix itself', () => {
    const a = check({ allow: { capabilities: ['extraction.*'] } }, { capabilities: ['extraction'] }, { via: byCapability('extraction') });
    denied(a, 'capability extraction is not allowed: no allow.capabilities pattern matches it');
  });

  it('2. by capability: the agent must implement the class', () => {
    denied(
      check({}, { capabilities: ['extraction.image'] }, { via: byCapability('extraction.table') }),
      `agent ${AGENT} does not implement capability extraction.table`,
    );
  });

  it('2. by capability: third-party published agents need allow.published', () => {
    const published = { facts: { origin: 'published' as const, evaluation: 'passed' as const } };
    denied(check({}, {}, { via: byCapability(), ...published }), `agent ${AGENT} is published by a third party and the mandate does not set allow.published`);
    expect(check({ allow: { published: true } }, {}, { via: byCapability(), ...published }).decision).toBe('allow');
    // by id, allow.agents alone decides
    expect(check({}, {}, published).decision).toBe('allow');
  });

  it('3. deny.agents beats allow', () => {
    denied(check({ deny: { agents: ['acme/pdf@<2'], capabilities: [] } }), `agent ${AGENT} is denied by deny.agents pattern acme/pdf@<2`);
  });

  it('3. deny.capabilities applies to the requested class and to every class the agent declares', () => {
    const deny = { agents: [], capabilities: ['extraction.table'] };
    const reason = `capability extraction.table of agent ${AGENT} is denied by deny.capabilities pattern extraction.table`;
    denied(check({ deny }, {}, { via: byCapability() }), reason);
    denied(check({ deny }), reason);
  });

  it('4. require.license open-source', () => {
    denied(check({ require: { license: 'open-source' } }, { license: 'proprietary' }), `agent ${AGENT} is proprietary and the mandate requires open source`);
    expect(check({ require: { license: 'open-source' } }, { license: 'GPL-3.0-only' }).decision).toBe('allow');
  });

  it('4. require.license list', () => {
    denied(
      check({ require: { license: ['Apache-2.0', 'BSD-3-Clause'] } }, { license: 'MIT' }),
      `agent ${AGENT} is licensed MIT, not one of Apache-2.0, BSD-3-Clause`,
    );
    expect(check({ require: { license: ['mit'] } }, { license: 'MIT' }).decision).toBe('allow');
  });

  it('4. require.data.retention', () => {
    const days = (n: number) => ({ data: { retention: { kind: 'days' as const, days: n } } });
    denied(
      check({ require: { data: { retention: { kind: 'none' } } } }, days(7)),
      `agent ${AGENT} declares retention 7 days; the mandate requires retention none`,
    );
    denied(
      check({ require: { data: { retention: { kind: 'days', days: 30 } } } }, days(60)),
      `agent ${AGENT} declares retention 60 days; the mandate requires retention 30 days`,
    );
    expect(check({ require: { data: { retention: { kind: 'days', days: 30 } } } }, days(30)).decision).toBe('allow');
    expect(check({ require: { data: { retention: { kind: 'days', days: 30 } } } }, { data: { retention: { kind: 'none' } } }).decision).toBe('allow');
  });

  it('4. require.data.region', () => {
    denied(
      check({ require: { data: { region: ['eu'] } } }, { data: { region: ['eu', 'us'] } }),
      `agent ${AGENT} declares regions eu, us; the mandate requires only eu`,
    );
    denied(check({ require: { data: { region: ['eu'] } } }, { data: { region: [] } }), `agent ${AGENT} declares regions none; the mandate requires only eu`);
    expect(check({ require: { data: { region: ['eu', 'de'] } } }, { data: { region: ['DE'] } }).decision).toBe('allow');
  });

  it('4. require.data.training', () => {
    denied(
      check({ require: { data: { training: false } } }, { data: { training: true } }),
      `agent ${AGENT} does not declare training: false; the mandate requires that inputs are not used for training`,
    );
  });

  it('4. an agent that declares no data policy matches no data constraint', () => {
    const a = check({ require: { data: { retention: { kind: 'days', days: 365 }, region: ['eu'], training: false } } }, { data: undefined });
    expect(a.decision).toBe('deny');
    expect(a.reasons).toEqual([
      `agent ${AGENT} declares no retention; the mandate requires retention 365 days`,
      `agent ${AGENT} declares regions none; the mandate requires only eu`,
      `agent ${AGENT} does not declare training: false; the mandate requires that inputs are not used for training`,
    ]);
    expect(check({ require: { data: {} } }, { data: undefined }).decision).toBe('allow');
  });

  it('4. require.evaluated', () => {
    for (const evaluation of ['failed', 'error', 'pending'] as const) {
      denied(
        check({ require: { evaluated: true } }, {}, { facts: { origin: 'shipped', evaluation } }),
        `agent ${AGENT} has not passed its evaluation (${evaluation}) and the mandate requires evaluated versions`,
      );
    }
    expect(check({ require: { evaluated: true } }, {}, { facts: { origin: 'shipped', evaluation: 'none' } }).decision).toBe('allow');
    expect(check({ require: { evaluated: false } }, {}, { facts: { origin: 'shipped', evaluation: 'failed' } }).decision).toBe('allow');
  });

  it('4. require.min_success_rate applies from 20 runs', () => {
    const m = { require: { minSuccessRate: { num: 9n, den: 10n } } };
    const facts = (runs: number, successes: number) => ({ facts: { origin: 'shipped' as const, evaluation: 'passed' as const, record: { runs, successes } } });
    expect(check(m, {}, facts(19, 0)).decision).toBe('allow');
    denied(check(m, {}, facts(20, 17)), `agent ${AGENT} succeeded in 17 of 20 runs, below the required success rate 90%`);
    expect(check(m, {}, facts(20, 18)).decision).toBe('allow');
    expect(check(m, {}, { facts: { origin: 'shipped', evaluation: 'passed' } }).decision).toBe('allow');
    denied(check(m, {}, facts(20.5, 20)), `agent ${AGENT} has an unusable measured record (20 of 20.5 runs)`);
  });

  it('5. a foreign price currency without an fx rate', () => {
    const usd = { pricing: { currency: 'USD' } };
    denied(check({ budget: { fx: {} } }, usd, { worstCase: null }), `agent ${AGENT} is priced in USD and the mandate has no fx rate from USD into EUR`);
    expect(check({}, usd, { worstCase: 46_000n }).decision).toBe('allow');
  });

  it('5. a free agent needs no fx rate', () => {
    const free = { pricing: { model: 'free' as const, currency: 'USD', amount: undefined } };
    expect(check({ budget: { fx: {} } }, free, { worstCase: null })).toEqual({ decision: 'allow', reasons: [] });
    // but a passthrough cap in a foreign currency is money
    const withCap = { ...free, downstream: { mode: 'passthrough' as const, cap: 100_000n } };
    expect(check({ budget: { fx: {} } }, withCap, { worstCase: null }).decision).toBe('deny');
  });

  it('6. a per_run price above max_cost, converted', () => {
    const usd = { pricing: { currency: 'USD', amount: 1_000_000n } };
    denied(
      check({}, usd, { maxCost: 500_000n, worstCase: null }),
      `agent ${AGENT} costs 0.92 EUR per run, above the max_cost 0.50 EUR; a per_run price is never lowered`,
    );
    expect(check({}, usd, { maxCost: 920_000n, worstCase: 920_000n }).decision).toBe('allow');
  });

  it('7. worst case above per_call', () => {
    denied(check({ budget: { perCall: 5_000_000n } }, {}, { worstCase: 5_000_001n }), 'the worst case 5.000001 EUR is above budget.per_call 5.00 EUR');
    expect(check({ budget: { perCall: 5_000_000n } }, {}, { worstCase: 5_000_000n }).decision).toBe('allow');
  });

  it('7. worst case above total', () => {
    denied(check({ budget: { total: 1_000_000n } }, {}, { worstCase: 3_100_000n }), 'the worst case 3.10 EUR is above budget.total 1.00 EUR');
  });

  it('7. an unknown worst case is denied when no other rule explains it', () => {
    denied(check({}, {}, { worstCase: null }), `the worst case of a call to ${AGENT} could not be determined in EUR`);
  });

  it('8. depth above what max_depth allows', () => {
    denied(
      check({ delegation: { maxDepth: 1 } }, {}, { depth: 2 }),
      'call depth 2 is deeper than the mandate allows (at most 1: depth 0, delegation.max_depth 1)',
    );
    expect(check({ delegation: { maxDepth: 1 } }, {}, { depth: 1 }).decision).toBe('allow');
    denied(check({ depth: 2, delegation: { maxDepth: 0 } }, {}, { depth: 1 }), "call depth 1 is shallower than this sub-mandate's own depth 2");
  });

  it('collects every reason of a call that breaks several rules, in rule order', () => {
    const mandate: Mandate = buildMandate({
      revoked: true,
      expiresAt: NOW - 1,
      allow: { capabilities: ['text.*'], published: false },
      deny: { agents: ['acme/*'], capabilities: ['extraction.*'] },
      require: { license: 'open-source', evaluated: true },
      budget: { total: 1_000_000n, perCall: 500_000n, fx: {} },
      delegation: { maxDepth: 0 },
    });
    const manifest: Manifest = buildManifest({ license: 'proprietary', pricing: { currency: 'GBP', amount: 2_000_000n } });
    const a = checkCall(
      mandate,
      manifest,
      request({
        via: byCapability(),
        depth: 1,
        worstCase: null,
        maxCost: 100_000n,
        facts: { origin: 'published', evaluation: 'failed' },
      }),
    );
    expect(a).toEqual({
      decision: 'deny',
      reasons: [
        'mandate alice/main has been revoked',
        'mandate alice/main expired at 2026-05-31T23:59:59.999Z',
        'capability extraction.table is not allowed: no allow.capabilities pattern matches it',
        `agent ${AGENT} is published by a third party and the mandate does not set allow.published`,
        `agent ${AGENT} is denied by deny.agents pattern acme/*`,
        `capability extraction.table of agent ${AGENT} is denied by deny.capabilities pattern extraction.*`,
        `agent ${AGENT} is proprietary and the mandate requires open source`,
        `agent ${AGENT} has not passed its evaluation (failed) and the mandate requires evaluated versions`,
        `agent ${AGENT} is priced in GBP and the mandate has no fx rate from GBP into EUR`,
        'call depth 1 is deeper than the mandate allows (at most 0: depth 0, delegation.max_depth 0)',
      ],
    });
  });

  it('reports both budget rules and the max_cost rule together', () => {
    const a = check({ budget: { total: 1_000_000n, perCall: 500_000n } }, { pricing: { amount: 3_000_000n } }, { worstCase: 3_000_000n, maxCost: 2_000_000n });
    expect(a.reasons).toEqual([
      `agent ${AGENT} costs 3.00 EUR per run, above the max_cost 2.00 EUR; a per_run price is never lowered`,
      'the worst case 3.00 EUR is above budget.per_call 0.50 EUR',
      'the worst case 3.00 EUR is above budget.total 1.00 EUR',
    ]);
  });
});

describe('approve', () => {
  it('when the worst case exceeds approval.above', () => {
    const a = check({ approval: { above: 1_000_000n } }, {}, { worstCase: 3_100_000n });
    expect(a).toEqual({ decision: 'approve', reasons: ['the worst case 3.10 EUR is above approval.above 1.00 EUR'] });
    expect(check({ approval: { above: 1_000_000n } }, {}, { worstCase: 1_000_000n }).decision).toBe('allow');
  });

  it('when an approval.agents pattern matches', () => {
    const a = check({ approval: { agents: ['acme/*'] } });
    expect(a).toEqual({ decision: 'approve', reasons: [`calls to agent ${AGENT} need approval (approval.agents pattern acme/*)`] });
    expect(check({ approval: { agents: ['lena/*'] } }).decision).toBe('allow');
  });

  it('on first use of an agent version', () => {
    const a = check({ approval: { firstUse: true } }, {}, { usedBefore: false });
    expect(a).toEqual({ decision: 'approve', reasons: [`first call of agent ${AGENT} under this mandate needs approval (approval.first_use)`] });
    expect(check({ approval: { firstUse: true } }, {}, { usedBefore: true }).decision).toBe('allow');
  });

  it('lists every approval reason', () => {
    const a = check({ approval: { above: 0n, agents: ['acme/pdf'], firstUse: true } }, {}, { usedBefore: false });
    expect(a.decision).toBe('approve');
    expect(a.reasons).toHaveLength(3);
  });

  it('becomes deny inside a delegated run', () => {
    const a = check({ approval: { agents: ['acme/*'] } }, {}, { delegated: true });
    expect(a).toEqual({
      decision: 'deny',
      reasons: [`calls to agent ${AGENT} need approval (approval.agents pattern acme/*)`, 'nobody can approve inside a delegated run, so the call is denied'],
    });
    expect(check({}, {}, { delegated: true }).decision).toBe('allow');
  });

  it('never adds approval reasons to a deny', () => {
    const a = check({ revoked: true, approval: { agents: ['acme/*'] } });
    expect(a).toEqual({ decision: 'deny', reasons: ['mandate alice/main has been revoked'] });
  });
});
