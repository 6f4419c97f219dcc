import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mandateToDoc, mandateWarnings, parseMandate, validateMandate, type MandateValidation } from '../../shared/core/mandate/index.js';
import { agentPatternProblem, capabilityPatternProblem, matchesAgent, matchesCapability } from '../../shared/core/mandate/patterns.js';
import { arbMandate } from '../support/manifest-builder.js';

const EXAMPLE = `
id: alice/bookkeeping-q4
issuer: alice                       # account handle: who pays
grantee: alice/assistant            # who acts under it
allow:
  capabilities: [extraction.*, text.summarize]
  agents: [holon-labs/*, acme/pdf-tables@^2]
  published: true
deny:
  agents: [sketchy/*]
require:
  license: open-source
  data: { retention: none, region: [eu], training: false }
  evaluated: true
approval:
  above: "1.00"
  agents: [acme/*]
  first_use: false
budget:
  total: "20.00"
  currency: EUR
  per_call: "5.00"
  fx: { USD: "0.92" }
delegation:
  max_depth: 2
expires_at: 2027-01-01T00:00:00Z
`;

const minimal = () => ({ id: 'alice/main', issuer: 'alice', grantee: 'alice/assistant', budget: { total: '10.00', currency: 'EUR' } });

function problems(result: MandateValidation): Array<{ path: string; message: string }> {
  return result.ok ? [] : result.problems;
}

function expectProblem(doc: unknown, path: string, message: string | RegExp): void {
  const found = problems(validateMandate(doc));
  expect(
    found.filter((p) => p.path === path).map((p) => p.message),
    JSON.stringify(found),
  ).toEqual(expect.arrayContaining([typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message)]));
}

describe('the spec example', () => {
  it('validates and normalizes', () => {
    const r = parseMandate(EXAMPLE);
    expect(r.problems).toEqual([]);
    if (!r.ok) return;
    expect(r.mandate).toStrictEqual({
      id: 'alice/bookkeeping-q4',
      issuer: 'alice',
      grantee: 'alice/assistant',
      allow: { capabilities: ['extraction.*', 'text.summarize'], agents: ['holon-labs/*', 'acme/pdf-tables@^2'], published: true },
      deny: { capabilities: [], agents: ['sketchy/*'] },
      require: {
        license: 'open-source',
        data: { retention: { kind: 'none' }, region: ['eu'], training: false },
        evaluated: true,
      },
      approval: { above: 1_000_000n, agents: ['acme/*'], firstUse: false },
      budget: { total: 20_000_000n, currency: 'EUR', perCall: 5_000_000n, fx: { USD: { num: 92n, den: 100n } } },
      delegation: { maxDepth: 2 },
      expiresAt: Date.UTC(2027, 0, 1),
      revoked: false,
      depth: 0,
    });
  });

  it('reads the same mandate from JSON and writes it back', () => {
    const r = parseMandate(EXAMPLE);
    if (!r.ok) throw new Error('example invalid');
    const json = parseMandate(JSON.stringify(mandateToDoc(r.mandate)), 'json');
    expect(json).toStrictEqual({ ok: true, mandate: r.mandate, problems: [] });
    expect(mandateToDoc(r.mandate).budget).toEqual({ total: '20.00', currency: 'EUR', per_call: '5.00', fx: { USD: '0.92' } });
  });

  it('applies defaults to a minimal mandate', () => {
    const r = validateMandate(minimal());
    expect(r.ok && r.mandate).toStrictEqual({
      id: 'alice/main',
      issuer: 'alice',
      grantee: 'alice/assistant',
      allow: { capabilities: [], agents: [], published: false },
      deny: { capabilities: [], agents: [] },
      require: { license: 'any', evaluated: false },
      approval: { agents: [], firstUse: false },
      budget: { total: 10_000_000n, currency: 'EUR', fx: {} },
      delegation: { maxDepth: 1 },
      revoked: false,
      depth: 0,
    });
  });

  it('normalizes rates to the smallest denominator', () => {
    const r = validateMandate({
      ...minimal(),
      budget: { total: '1', currency: 'EUR', fx: { USD: '0.90', GBP: '1.000' } },
      require: { min_success_rate: '0.9500' },
    });
    expect(r.ok && r.mandate.budget.fx).toEqual({ USD: { num: 9n, den: 10n }, GBP: { num: 1n, den: 1n } });
    expect(r.ok && r.mandate.require.minSuccessRate).toEqual({ num: 95n, den: 100n });
  });
});

describe('problems', () => {
  it('lists every problem of a document with many mistakes', () => {
    const r = validateMandate({
      id: 'Alice/Q4',
      issuer: 'alice',
      grantee: 'bob/assistant',
      allow: { capabilities: ['*', 'Extraction'], agents: ['acme/pdf@^^1', 'acme'], published: 'yes' },
      deny: { agents: [42] },
      require: { license: 'closed', data: { retention: 'forever', region: [], training: true, color: 'red' }, evaluated: 1, min_success_rate: '1.5' },
      approval: { above: 1, agents: ['*'], first_use: 'no' },
      budget: { total: 20, currency: 'EUR', per_call: '-1', fx: { EUR: '1', usd: '0.9', GBP: '0' } },
      delegation: { max_depth: 9 },
      expires_at: 'tomorrow',
      colour: 'blue',
    });
    expect(r.ok).toBe(false);
    const paths = problems(r).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '$.colour',
        '$.id',
        '$.grantee',
        '$.allow.capabilities[0]',
        '$.allow.capabilities[1]',
        '$.allow.agents[0]',
        '$.allow.agents[1]',
        '$.allow.published',
        '$.deny.agents[0]',
        '$.require.license',
        '$.require.data.retention',
        '$.require.data.region',
        '$.require.data.training',
        '$.require.data.color',
        '$.require.evaluated',
        '$.require.min_success_rate',
        '$.approval.above',
        '$.approval.agents[0]',
        '$.approval.first_use',
        '$.budget.total',
        '$.budget.per_call',
        '$.budget.fx.EUR',
        '$.budget.fx.usd',
        '$.budget.fx.GBP',
        '$.delegation.max_depth',
        '$.expires_at',
      ]),
    );
    expect(paths).toHaveLength(26);
  });

  it.each([
    ['a non-object document', 'x', '$', 'must be an object'],
    ['a missing id', { ...minimal(), id: undefined }, '$.id', 'is required'],
    ['a missing budget', { ...minimal(), budget: undefined }, '$.budget', 'is required'],
    ['a missing total', { ...minimal(), budget: { currency: 'EUR' } }, '$.budget.total', 'is required'],
    ['a lowercase currency', { ...minimal(), budget: { total: '1', currency: 'eur' } }, '$.budget.currency', 'three capital letters'],
    ['a missing currency', { ...minimal(), budget: { total: '1' } }, '$.budget.currency', 'is required'],
    ['an id outside the issuer', { ...minimal(), id: 'bob/main' }, '$.id', 'must start with the issuer'],
    ['an issuer that is not a handle', { ...minimal(), issuer: '-alice' }, '$.issuer', 'not an account handle'],
    ['a one-letter handle', { ...minimal(), issuer: 'a', id: 'a/main', grantee: 'a/x1' }, '$.issuer', 'not an account handle'],
    ['a grantee outside the namespace', { ...minimal(), grantee: 'bob/assistant' }, '$.grantee', "issuer's namespace"],
    ['a bad semver range', { ...minimal(), allow: { agents: ['acme/pdf@^^1'] } }, '$.allow.agents[0]', 'invalid semver range'],
    ['an empty range', { ...minimal(), allow: { agents: ['acme/pdf@'] } }, '$.allow.agents[0]', 'invalid semver range'],
    ['a range on ns/*', { ...minimal(), allow: { agents: ['acme/*@^1'] } }, '$.allow.agents[0]', 'needs one agent'],
    ['a lone *', { ...minimal(), allow: { capabilities: ['*'] } }, '$.allow.capabilities[0]', '"*" alone'],
    ['a bad capability', { ...minimal(), deny: { capabilities: ['text..x'] } }, '$.deny.capabilities[0]', 'not a capability pattern'],
    ['a JSON number total', { ...minimal(), budget: { total: 20, currency: 'EUR' } }, '$.budget.total', 'JSON number 20'],
    ['too many decimals', { ...minimal(), budget: { total: '0.0000001', currency: 'EUR' } }, '$.budget.total', 'decimals'],
    [
      'an fx rate for the budget currency',
      { ...minimal(), budget: { total: '1', currency: 'EUR', fx: { EUR: '1' } } },
      '$.budget.fx.EUR',
      'budget currency itself',
    ],
    ['a zero fx rate', { ...minimal(), budget: { total: '1', currency: 'EUR', fx: { USD: '0' } } }, '$.budget.fx.USD', 'more than zero'],
    ['an fx rate with 13 decimals', { ...minimal(), budget: { total: '1', currency: 'EUR', fx: { USD: '0.1234567890123' } } }, '$.budget.fx.USD', 'at most 12'],
    ['an fx rate as a number', { ...minimal(), budget: { total: '1', currency: 'EUR', fx: { USD: 0.92 } } }, '$.budget.fx.USD', 'JSON number'],
    ['a success rate above 1', { ...minimal(), require: { min_success_rate: '1.01' } }, '$.require.min_success_rate', 'at most 1'],
    ['a success rate with 5 decimals', { ...minimal(), require: { min_success_rate: '0.12345' } }, '$.require.min_success_rate', 'at most 4'],
    ['a single SPDX id', { ...minimal(), require: { license: 'MIT' } }, '$.require.license', 'write [MIT]'],
    ['an empty license list', { ...minimal(), require: { license: [] } }, '$.require.license', 'at least one'],
    ['a bad SPDX id', { ...minimal(), require: { license: ['MIT', 'not a license'] } }, '$.require.license[1]', 'not an SPDX'],
    ['retention 0d', { ...minimal(), require: { data: { retention: '0d' } } }, '$.require.data.retention', 'none or a number of days'],
    ['training true', { ...minimal(), require: { data: { training: true } } }, '$.require.data.training', 'only training: false'],
    ['max_depth as a string', { ...minimal(), delegation: { max_depth: '2' } }, '$.delegation.max_depth', 'whole number from 0 to 8'],
    ['max_depth 1.5', { ...minimal(), delegation: { max_depth: 1.5 } }, '$.delegation.max_depth', 'whole number'],
    ['expires_at as a number', { ...minimal(), expires_at: 1798761600000 }, '$.expires_at', 'must be a string'],
    ['expires_at without zone', { ...minimal(), expires_at: '2027-01-01T00:00:00' }, '$.expires_at', 'RFC 3339'],
    ['expires_at as a date only', { ...minimal(), expires_at: '2027-01-01' }, '$.expires_at', 'RFC 3339'],
    ['expires_at on Feb 30', { ...minimal(), expires_at: '2027-02-30T00:00:00Z' }, '$.expires_at', 'no such date'],
    ['expires_at at 24:00', { ...minimal(), expires_at: '2027-01-01T24:00:00Z' }, '$.expires_at', 'no such date'],
    ['an unknown nested field', { ...minimal(), budget: { total: '1', currency: 'EUR', limit: '2' } }, '$.budget.limit', 'not a known field'],
    ['allow as a list', { ...minimal(), allow: [] }, '$.allow', 'must be an object'],
    ['too many patterns', { ...minimal(), allow: { agents: Array(101).fill('acme/*') } }, '$.allow.agents', 'at most 100'],
  ])('reports %s', (_name, doc, path, message) => {
    expectProblem(doc, path, message);
  });

  it('reports NUL characters in any string', () => {
    const r = validateMandate({
      ...minimal(),
      grantee: 'alice/assi\u0000stant',
      allow: { agents: ['acme/\u0000*'] },
      budget: { total: '1\u0000', currency: 'EUR', fx: { 'US\u0000D': '1' } },
      expires_at: '2027-01-01T00:00:00Z\u0000',
    });
    const nul = problems(r).filter((p) => p.message.includes('NUL'));
    expect(nul.map((p) => p.path).sort()).toEqual(['$.allow.agents[0]', '$.budget.fx', '$.budget.total', '$.expires_at', '$.grantee'].sort());
    expect(parseMandate('id: "a\\0b"').ok).toBe(false);
  });

  it('accepts RFC 3339 offsets and fractions, as epoch milliseconds', () => {
    const r = validateMandate({ ...minimal(), expires_at: '2027-01-01T01:00:00.5+01:00' });
    expect(r.ok && r.mandate.expiresAt).toBe(Date.UTC(2027, 0, 1) + 500);
    const leap = validateMandate({ ...minimal(), expires_at: '2028-02-29T00:00:00Z' });
    expect(leap.ok).toBe(true);
  });

  it('reports YAML and JSON syntax errors', () => {
    expect(parseMandate('{ "id": ', 'json').ok).toBe(false);
    expect(parseMandate('id: [unclosed').ok).toBe(false);
  });
});

describe('sub-mandates and gateway-kept fields', () => {
  const sub = () => ({
    id: 'alice/main.r4',
    issuer: 'alice/assistant',
    grantee: 'acme/pipeline',
    parent: 'alice/main',
    depth: 1,
    budget: { total: '1.00', currency: 'EUR' },
    delegation: { max_depth: 0 },
  });

  it('reads a sub-mandate', () => {
    const r = validateMandate(sub());
    expect(r.problems).toEqual([]);
    expect(r.ok && [r.mandate.parent, r.mandate.depth]).toEqual(['alice/main', 1]);
  });

  it.each([
    ['an id not below the parent', { ...sub(), id: 'alice/other.r4' }, '$.id', '"alice/main.<receipt id>"'],
    ['a depth that does not match the parent', { ...sub(), depth: 2 }, '$.depth', "one more than the parent's depth (0)"],
    ['a parent without depth', { ...sub(), depth: undefined }, '$.depth', 'must be 1 or more'],
    ['a depth without parent', { ...sub(), parent: undefined }, '$.parent', 'is required'],
    ['an issuer that is a handle', { ...sub(), issuer: 'alice' }, '$.issuer', 'not an agent id'],
  ])('reports %s', (_name, doc, path, message) => {
    expectProblem(doc, path, message);
  });

  it('refuses gateway-kept fields from a caller', () => {
    const r = validateMandate({ ...minimal(), revoked: false, depth: 0 }, { caller: true });
    expect(
      problems(r)
        .map((p) => p.path)
        .sort(),
    ).toEqual(['$.depth', '$.revoked']);
    expect(validateMandate({ ...minimal(), revoked: true }).ok).toBe(true);
  });
});

describe('patterns', () => {
  it('matches capability patterns', () => {
    expect(matchesCapability('extraction.*', 'extraction.table')).toBe(true);
    expect(matchesCapability('extraction.*', 'extraction.table.fr')).toBe(true);
    expect(matchesCapability('extraction.*', 'extraction')).toBe(false);
    expect(matchesCapability('extraction.*', 'extractionx.table')).toBe(false);
    expect(matchesCapability('text.summarize', 'text.summarize')).toBe(true);
    expect(matchesCapability('text.summarize', 'text.summarize.short')).toBe(false);
    expect(capabilityPatternProblem('*')).toMatch(/alone/);
    expect(capabilityPatternProblem('extraction.*.fr')).toMatch(/not a capability pattern/);
  });

  it('matches agent patterns against id and version', () => {
    expect(matchesAgent('acme/*', 'acme/pdf', '0.0.1-rc.1')).toBe(true);
    expect(matchesAgent('acme/*', 'acmex/pdf', '1.0.0')).toBe(false);
    expect(matchesAgent('acme/pdf', 'acme/pdf', '9.9.9')).toBe(true);
    expect(matchesAgent('acme/pdf', 'acme/pdf-tables', '1.0.0')).toBe(false);
    expect(matchesAgent('acme/pdf@^2', 'acme/pdf', '2.4.0')).toBe(true);
    expect(matchesAgent('acme/pdf@^2', 'acme/pdf', '3.0.0')).toBe(false);
    expect(matchesAgent('acme/pdf@^2', 'acme/pdf', '2.5.0-beta.1')).toBe(false);
    expect(matchesAgent('acme/pdf@>=1.0.0 <2', 'acme/pdf', '1.9.0')).toBe(true);
    expect(agentPatternProblem('*')).toMatch(/name a namespace/);
    expect(agentPatternProblem('Acme/pdf')).toMatch(/not an agent pattern/);
  });
});

describe('round trip', () => {
  it('validateMandate(mandateToDoc(m)) gives m back', () => {
    fc.assert(
      fc.property(arbMandate, (m) => {
        const r = validateMandate(mandateToDoc(m));
        expect(r.problems).toEqual([]);
        expect(r.ok && r.mandate).toEqual(m);
        // and through JSON text, as stored
        const text = parseMandate(JSON.stringify(mandateToDoc(m)), 'json');
        expect(text.ok && text.mandate).toEqual(m);
      }),
      { numRuns: 500 },
    );
  });
});

describe('mandateWarnings', () => {
  const withBudget = (budget: string) => {
    const r = parseMandate(EXAMPLE.replace(/budget:\n( {2}.*\n)+/, `budget:\n${budget}`));
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.mandate;
  };

  it('flags a per_call above the total, and nothing for the example', () => {
    expect(mandateWarnings(withBudget('  total: "5.00"\n  currency: EUR\n  per_call: "50.00"\n'))).toEqual([
      {
        path: '$.budget.per_call',
        message: expect.stringMatching(/^is 50\.00 EUR, above the total of 5\.00 EUR, so it never limits a call/),
      },
    ]);
    expect(mandateWarnings(withBudget('  total: "5.00"\n  currency: EUR\n  per_call: "5.00"\n'))).toEqual([]);
    expect(mandateWarnings(withBudget('  total: "5.00"\n  currency: EUR\n'))).toEqual([]);
    const r = parseMandate(EXAMPLE);
    expect(r.ok && mandateWarnings(r.mandate)).toEqual([]);
  });
});
