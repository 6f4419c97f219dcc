import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  checkAttenuation,
  deriveSubMandate,
  mandateToDoc,
  matchesAgent,
  matchesCapability,
  patternCovers,
  validateMandate,
} from '../../shared/core/mandate/index.js';
import type { Mandate } from '../../shared/core/mandate/types.js';
import {
  arbAgentId,
  arbAgentPattern,
  arbCapabilityPattern,
  arbMandate,
  arbManifest,
  buildMandate,
  buildManifest,
  CLASSES,
  VERSIONS,
} from '../support/manifest-builder.js';

const parent = (): Mandate =>
  buildMandate({
    id: 'alice/main',
    allow: { capabilities: ['extraction.*', 'ocr.page'], agents: ['acme/*', 'lena/tables-fr@^1'], published: false },
    deny: { capabilities: ['text.translate'], agents: ['sketchy/*'] },
    require: { license: 'open-source', evaluated: true, data: { retention: { kind: 'none' }, region: ['eu'] }, minSuccessRate: { num: 9n, den: 10n } },
    approval: { above: 1_000_000n, agents: ['acme/costly'], firstUse: true },
    budget: { total: 20_000_000n, perCall: 5_000_000n },
    delegation: { maxDepth: 2 },
    expiresAt: Date.UTC(2027, 0, 1),
  });

const pipeline = buildManifest({
  id: 'holon-labs/pipeline',
  calls: [
    { capability: 'extraction.table', maxCost: 100_000n },
    { capability: 'text.summarize', maxCost: 100_000n },
    { agent: 'lena/tables-fr@^1.2', maxCost: 100_000n },
    { agent: 'lena/ocr', maxCost: 100_000n },
    { agent: 'acme/pdf', maxCost: 100_000n },
  ],
});

function derive(p: Mandate = parent(), budgetTotal = 400_000n): Mandate {
  const d = deriveSubMandate(p, pipeline, { receiptId: 'r4', budgetTotal });
  if (!d.ok) throw new Error(d.reason);
  return d.mandate;
}

describe('patternCovers', () => {
  it.each([
    ['acme/*', 'acme/xy@^1', true],
    ['acme/*', 'acme/xy', true],
    ['acme/*', 'acme/*', true],
    ['acme/*', 'lena/x', false],
    ['acme/xy', 'acme/xy@<1.0.0 || >=3.0.0', true],
    ['acme/xy', 'acme/xy@not-a-range', false],
    ['acme/xy', 'acme/xy@1.x', true],
    ['acme/xy@^1', 'acme/xy@^1.2', true],
    ['acme/xy@^1', 'acme/xy@^2', false],
    ['acme/xy@^1', 'acme/xy', false],
    ['acme/xy@^1', 'acme/*', false],
    ['acme/xy@^1', 'acme/xy@>=1.0.0-beta <2', false],
    ['extraction.*', 'extraction.table', true],
    ['extraction.*', 'extraction.table.*', true],
    ['extraction.*', 'extraction.*', true],
    ['extraction.*', 'extraction', false],
    ['extraction.table', 'extraction.*', false],
    ['extraction.table', 'extraction.table', true],
    ['*', 'extraction.table', false],
    ['acme/*', 'extraction.table', false],
  ])('%s covers %s: %s', (p, c, expected) => {
    expect(patternCovers(p, c)).toBe(expected);
  });

  it('is sound: whatever the child matches, the parent matches', () => {
    fc.assert(
      fc.property(arbAgentPattern, arbAgentPattern, arbAgentId, fc.constantFrom(...VERSIONS), (p, c, id, v) => {
        if (patternCovers(p, c) && matchesAgent(c, id, v)) expect(matchesAgent(p, id, v)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    const deeper = fc.constantFrom(...CLASSES, 'extraction.table.fr.x', 'text.summarize.short');
    fc.assert(
      fc.property(arbCapabilityPattern, arbCapabilityPattern, deeper, (p, c, cls) => {
        if (patternCovers(p, c) && matchesCapability(c, cls)) expect(matchesCapability(p, cls)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('deriveSubMandate', () => {
  it('derives per spec §5', () => {
    const child = derive();
    const p = parent();
    expect(child).toEqual({
      ...p,
      id: 'alice/main.r4',
      issuer: 'alice/assistant',
      grantee: 'holon-labs/pipeline',
      allow: { capabilities: ['extraction.table'], agents: ['lena/tables-fr@^1.2', 'acme/pdf'], published: false },
      budget: { ...p.budget, total: 400_000n, perCall: 400_000n },
      delegation: { maxDepth: 1 },
      depth: 1,
      parent: 'alice/main',
    });
    expect(checkAttenuation(p, child)).toEqual([]);
  });

  it('clamps the budget to the parent total, and per_call to the budget', () => {
    const child = derive(parent(), 99_000_000n);
    expect(child.budget.total).toBe(20_000_000n);
    expect(child.budget.perCall).toBe(5_000_000n);
  });

  it('refuses an agent without calls, and a parent with max_depth 0', () => {
    expect(deriveSubMandate(parent(), buildManifest(), { receiptId: 'r1', budgetTotal: 0n })).toEqual({
      ok: false,
      reason: 'agent acme/pdf declares no calls: no sub-mandate',
    });
    const flat = buildMandate({ delegation: { maxDepth: 0 } });
    expect(deriveSubMandate(flat, pipeline, { receiptId: 'r1', budgetTotal: 0n })).toEqual({
      ok: false,
      reason: 'mandate alice/main has delegation.max_depth 0: its agents cannot delegate',
    });
    expect(deriveSubMandate(parent(), pipeline, { receiptId: 'r 1', budgetTotal: 0n }).ok).toBe(false);
    expect(deriveSubMandate(parent(), pipeline, { receiptId: 'r1', budgetTotal: -1n }).ok).toBe(false);
  });

  it('never aliases the parent: changing the child leaves the parent unchanged', () => {
    const p = parent();
    const before = mandateToDoc(p);
    const child = derive(p);
    child.deny.agents.push('x/y');
    child.approval.agents.push('x/y');
    child.require.data!.region!.push('us');
    child.budget.fx.GBP = { num: 1n, den: 1n };
    expect(mandateToDoc(p)).toEqual(before);
  });

  it('PROPERTY: a derived sub-mandate never widens its parent', () => {
    fc.assert(
      fc.property(
        arbMandate,
        arbManifest,
        fc.bigInt({ min: 0n, max: 10n ** 19n }),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,16}$/),
        (p, manifest, budgetTotal, receiptId) => {
          const d = deriveSubMandate(p, manifest, { receiptId, budgetTotal });
          if (manifest.calls.length === 0 || p.delegation.maxDepth === 0) {
            expect(d.ok).toBe(false);
            return;
          }
          expect(d.ok).toBe(true);
          if (!d.ok) return;
          const child = d.mandate;
          expect(checkAttenuation(p, child)).toEqual([]);
          expect(child.budget.total <= p.budget.total).toBe(true);
          expect(child.budget.total <= budgetTotal).toBe(true);
          if (child.budget.perCall !== undefined) expect(child.budget.perCall <= child.budget.total).toBe(true);
          // every kept entry is one the agent declared
          const declared = manifest.calls.flatMap((s) => [s.capability, s.agent]);
          for (const e of [...child.allow.capabilities, ...child.allow.agents]) expect(declared).toContain(e);
          // the derived mandate is a valid stored mandate
          expect(validateMandate(mandateToDoc(child)).problems).toEqual([]);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('checkAttenuation: every widening is detected', () => {
  const widen = (change: (c: Mandate) => void): string[] => {
    const child = derive();
    change(child);
    return checkAttenuation(parent(), child);
  };

  it.each<[string, (c: Mandate) => void, string]>([
    ['an uncovered capability', (c) => c.allow.capabilities.push('text.summarize'), 'allow.capabilities text.summarize is not covered'],
    ['a prefix wider than the parent', (c) => c.allow.capabilities.push('ocr.*'), 'allow.capabilities ocr.* is not covered'],
    ['an uncovered agent', (c) => c.allow.agents.push('lena/ocr'), 'allow.agents lena/ocr is not covered'],
    ['a wider range', (c) => c.allow.agents.push('lena/tables-fr@>=1'), 'allow.agents lena/tables-fr@>=1 is not covered'],
    ['a range dropped', (c) => c.allow.agents.push('lena/tables-fr'), 'allow.agents lena/tables-fr is not covered'],
    [
      'published turned on',
      (c) => {
        c.allow.published = true;
      },
      'allow.published is turned on',
    ],
    [
      'a deny capability dropped',
      (c) => {
        c.deny.capabilities = [];
      },
      'deny.capabilities text.translate of the parent is dropped',
    ],
    [
      'a deny agent dropped',
      (c) => {
        c.deny.agents = ['sketchy/x'];
      },
      'deny.agents sketchy/* of the parent is dropped',
    ],
    [
      'the license requirement changed',
      (c) => {
        c.require.license = 'any';
      },
      "require differs from the parent's",
    ],
    [
      'the retention requirement changed',
      (c) => {
        c.require.data = { ...c.require.data, retention: { kind: 'days', days: 30 } };
      },
      "require differs from the parent's",
    ],
    [
      'a region added',
      (c) => {
        c.require.data = { ...c.require.data, region: ['eu', 'us'] };
      },
      "require differs from the parent's",
    ],
    [
      'the data requirement removed',
      (c) => {
        delete c.require.data;
      },
      "require differs from the parent's",
    ],
    [
      'evaluated turned off',
      (c) => {
        c.require.evaluated = false;
      },
      "require differs from the parent's",
    ],
    [
      'the success rate lowered',
      (c) => {
        c.require.minSuccessRate = { num: 5n, den: 10n };
      },
      "require differs from the parent's",
    ],
    [
      'approval.above raised',
      (c) => {
        c.approval.above = 2_000_000n;
      },
      "approval differs from the parent's",
    ],
    [
      'approval.above removed',
      (c) => {
        delete c.approval.above;
      },
      "approval differs from the parent's",
    ],
    [
      'an approval agent dropped',
      (c) => {
        c.approval.agents = [];
      },
      "approval differs from the parent's",
    ],
    [
      'first_use turned off',
      (c) => {
        c.approval.firstUse = false;
      },
      "approval differs from the parent's",
    ],
    [
      'an fx rate changed',
      (c) => {
        c.budget.fx = { USD: { num: 1n, den: 1n } };
      },
      "budget.fx differs from the parent's",
    ],
    [
      'an fx rate added',
      (c) => {
        c.budget.fx = { ...c.budget.fx, GBP: { num: 1n, den: 1n } };
      },
      "budget.fx differs from the parent's",
    ],
    [
      'the currency changed',
      (c) => {
        c.budget.currency = 'USD';
      },
      "budget.currency USD is not the parent's EUR",
    ],
    [
      'a budget above the parent',
      (c) => {
        c.budget.total = 20_000_001n;
      },
      "budget.total 20.000001 EUR is above the parent's 20.00 EUR",
    ],
    [
      'per_call above the parent',
      (c) => {
        c.budget.perCall = 5_000_001n;
      },
      "budget.per_call 5.000001 is above the parent's 5.00 EUR",
    ],
    [
      'per_call removed',
      (c) => {
        delete c.budget.perCall;
      },
      "budget.per_call none is above the parent's 5.00 EUR",
    ],
    [
      'max_depth not below',
      (c) => {
        c.delegation.maxDepth = 2;
      },
      "delegation.max_depth 2 is not below the parent's 2",
    ],
    [
      'depth not one deeper',
      (c) => {
        c.depth = 0;
      },
      "depth 0 is not one below the parent's 0",
    ],
    [
      'a later expiry',
      (c) => {
        c.expiresAt = Date.UTC(2027, 0, 2);
      },
      "expires 2027-01-02T00:00:00.000Z, later than the parent's 2027-01-01T00:00:00.000Z",
    ],
    [
      'no expiry',
      (c) => {
        delete c.expiresAt;
      },
      "expires never, later than the parent's",
    ],
    [
      'another issuer',
      (c) => {
        c.issuer = 'bob/assistant';
      },
      "issuer bob/assistant is not the parent's grantee alice/assistant",
    ],
    [
      'another parent',
      (c) => {
        c.parent = 'alice/other';
      },
      'does not name alice/main as its parent',
    ],
  ])('%s', (_name, change, reason) => {
    const found = widen(change);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(reason);
  });

  it('accepts narrowing where the spec allows it', () => {
    expect(
      widen((c) => {
        c.allow.agents = [];
        c.allow.capabilities = [];
      }),
    ).toEqual([]);
    expect(
      widen((c) => {
        c.deny.agents.push('lena/*');
      }),
    ).toEqual([]);
    expect(
      widen((c) => {
        c.budget.total = 0n;
        c.budget.perCall = 0n;
      }),
    ).toEqual([]);
    expect(
      widen((c) => {
        c.expiresAt = Date.UTC(2026, 0, 1);
      }),
    ).toEqual([]);
    expect(
      widen((c) => {
        c.delegation.maxDepth = 0;
      }),
    ).toEqual([]);
    expect(
      widen((c) => {
        c.budget.fx = { USD: { num: 920n, den: 1000n } };
      }),
    ).toEqual([]);
  });

  it('lists every widening at once', () => {
    const found = widen((c) => {
      c.allow.published = true;
      c.budget.total = 30_000_000n;
      c.delegation.maxDepth = 5;
      c.deny.agents = [];
    });
    expect(found).toEqual([
      'allow.published is turned on while the parent has it off',
      'deny.agents sketchy/* of the parent is dropped',
      "budget.total 30.00 EUR is above the parent's 20.00 EUR",
      "delegation.max_depth 5 is not below the parent's 2",
    ]);
  });

  it('detects a revoked parent with a live child', () => {
    const p = { ...parent(), revoked: true };
    expect(checkAttenuation(p, derive())).toEqual(['the parent is revoked and the child is not']);
    expect(checkAttenuation(p, derive(p))).toEqual([]);
  });
});
