/**
 * Hand-built normalized manifests (and mandates) for the mandate tests, with sensible defaults:
 *   buildManifest({ id: 'acme/pdf', pricing: { model: 'per_run', amount: 50_000n, currency: 'EUR', chargeOn: 'success' } })
 */
import fc from 'fast-check';
import type { CallSlot, Manifest, Pricing, Retention } from '../../shared/core/manifest/types.js';
import type { DataRequirement, LicenseRequirement, Mandate } from '../../shared/core/mandate/types.js';
import { normalizeRate } from '../../shared/core/mandate/validate.js';
import { MAX_AMOUNT, type Rate } from '../../shared/core/money.js';

export type ManifestInit = Partial<Omit<Manifest, 'pricing'>> & { pricing?: Partial<Pricing> };

export function buildManifest(init: ManifestInit = {}): Manifest {
  const { pricing, ...rest } = init;
  const id = rest.id ?? 'acme/pdf';
  const [namespace = '', name = ''] = id.split('/');
  return {
    id,
    namespace,
    name,
    version: '1.0.0',
    summary: 'A test agent',
    capabilities: ['extraction.table'],
    license: 'MIT',
    forks: { minRoyalty: { num: 0n, den: 1n }, allowed: true },
    interface: { input: { type: 'object' }, output: { type: 'object' }, errors: {}, examples: [] },
    pricing: { model: 'per_run', currency: 'EUR', amount: 50_000n, chargeOn: 'success', ...pricing },
    calls: [],
    runtime: { kind: 'mcp', endpoint: 'https://agent.example.org/mcp', tool: 'run', timeoutS: 60 },
    data: { retention: { kind: 'none' }, region: ['eu'], training: false },
    doc: {},
    ...rest,
  };
}

export type MandateInit = Partial<Omit<Mandate, 'budget' | 'allow' | 'require' | 'approval'>> & {
  budget?: Partial<Mandate['budget']>;
  allow?: Partial<Mandate['allow']>;
  require?: Partial<Mandate['require']>;
  approval?: Partial<Mandate['approval']>;
};

/** A root mandate that allows acme/* and extraction.*, 20.00 EUR, USD at 0.92, max_depth 1. */
export function buildMandate(init: MandateInit = {}): Mandate {
  const { budget, allow, require, approval, ...rest } = init;
  return {
    id: 'alice/main',
    issuer: 'alice',
    grantee: 'alice/assistant',
    allow: { capabilities: ['extraction.*'], agents: ['acme/*'], published: false, ...allow },
    deny: { capabilities: [], agents: [] },
    require: { license: 'any', evaluated: false, ...require },
    approval: { agents: [], firstUse: false, ...approval },
    budget: { total: 20_000_000n, currency: 'EUR', fx: { USD: { num: 92n, den: 100n } }, ...budget },
    delegation: { maxDepth: 1 },
    revoked: false,
    depth: 0,
    ...rest,
  };
}

// ---------------------------------------------------------------- arbitraries (fast-check)
// Small pools, so random parents and manifests overlap often enough to exercise coverage.

const NAMESPACES = ['acme', 'holon-labs', 'lena', 'sketchy'] as const;
const NAMES = ['pdf', 'tables-fr', 'ocr', 'summarize'] as const;
export const CLASSES = ['extraction', 'extraction.table', 'extraction.table.fr', 'ocr.page', 'text', 'text.summarize', 'text.translate.fr'] as const;
const RANGES = [
  '^1',
  '^1.2',
  '~1.2.3',
  '>=1.0.0 <2.0.0',
  '1.x',
  '^2',
  '>=2.5.0',
  '*',
  '1.2.3',
  '>=1.0.0-beta <2',
  '^0.1',
  '1.0.0 - 1.5.0',
  '<1.0.0 || >=3.0.0',
] as const;
export const VERSIONS = ['0.1.3', '1.0.0', '1.0.0-beta.1', '1.2.3', '1.2.9', '1.5.0', '2.0.0', '2.6.1', '3.1.0'] as const;
const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'JPY'] as const;

export const arbAgentId = fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES)).map(([ns, n]) => `${ns}/${n}`);
export const arbCapabilityPattern = fc.oneof(
  fc.constantFrom(...CLASSES),
  fc.constantFrom(...CLASSES).map((c) => `${c}.*`),
);
export const arbAgentPattern = fc.oneof(
  arbAgentId,
  fc.constantFrom(...NAMESPACES).map((ns) => `${ns}/*`),
  fc.tuple(arbAgentId, fc.constantFrom(...RANGES)).map(([id, r]) => `${id}@${r}`),
);
const arbAmount = fc.bigInt({ min: 0n, max: MAX_AMOUNT });
/** A normalized positive rate with up to `maxDecimals` decimals (and at most `max` when given). */
const arbRate = (maxDecimals: number, atMostOne = false): fc.Arbitrary<Rate> =>
  fc.integer({ min: 0, max: maxDecimals }).chain((k) => {
    const den = 10n ** BigInt(k);
    return fc.bigInt({ min: atMostOne ? 0n : 1n, max: atMostOne ? den : 10n ** 15n - 1n }).map((num) => normalizeRate({ num, den }));
  });

const arbRetention: fc.Arbitrary<Retention> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.integer({ min: 1, max: 3650 }).map((days) => ({ kind: 'days' as const, days })),
);

const arbData: fc.Arbitrary<DataRequirement> = fc.record(
  {
    retention: arbRetention,
    region: fc.uniqueArray(fc.constantFrom('eu', 'us', 'de'), { minLength: 1, maxLength: 3 }),
    training: fc.constant(false as const),
  },
  { requiredKeys: [] },
);

const arbRequire: fc.Arbitrary<Mandate['require']> = fc.record(
  {
    license: fc.oneof(
      fc.constantFrom<LicenseRequirement>('any', 'open-source'),
      fc.uniqueArray(fc.constantFrom('MIT', 'Apache-2.0', 'proprietary'), { minLength: 1, maxLength: 3 }),
    ),
    data: arbData,
    evaluated: fc.boolean(),
    minSuccessRate: arbRate(4, true),
  },
  { requiredKeys: ['license', 'evaluated'] },
);

const arbApproval: fc.Arbitrary<Mandate['approval']> = fc.record(
  { above: arbAmount, agents: fc.array(arbAgentPattern, { maxLength: 3 }), firstUse: fc.boolean() },
  { requiredKeys: ['agents', 'firstUse'] },
);

const arbBudget: fc.Arbitrary<Mandate['budget']> = fc.constantFrom(...CURRENCIES).chain((currency) =>
  fc.record(
    {
      total: arbAmount,
      currency: fc.constant(currency),
      perCall: arbAmount,
      fx: fc.dictionary(fc.constantFrom(...CURRENCIES.filter((c) => c !== currency)), arbRate(12), { maxKeys: 4 }),
    },
    { requiredKeys: ['total', 'currency', 'fx'] },
  ),
);

/** Identity of a mandate at `depth`: a root `alice/<name>` or a chain of receipt ids below it. */
const arbIdentity = fc.integer({ min: 0, max: 4 }).chain((depth) =>
  fc
    .record({
      name: fc.constantFrom('bookkeeping-q4', 'main', 'ops'),
      receipts: fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), { minLength: depth, maxLength: depth }),
      issuerAgent: arbAgentId,
      granteeAgent: arbAgentId,
    })
    .map(({ name, receipts, issuerAgent, granteeAgent }) => {
      const root = `alice/${name}`;
      const ids = [root, ...receipts.map((_, i) => `${root}.${receipts.slice(0, i + 1).join('.')}`)];
      return depth === 0
        ? { id: root, issuer: 'alice', grantee: 'alice/assistant', depth }
        : { id: ids[depth]!, issuer: issuerAgent, grantee: granteeAgent, depth, parent: ids[depth - 1]! };
    }),
);

/** Any valid normalized mandate (depth + delegation.max_depth ≤ 8, as derivation keeps it). */
export const arbMandate: fc.Arbitrary<Mandate> = arbIdentity.chain((identity) =>
  fc
    .record(
      {
        allow: fc.record({
          capabilities: fc.array(arbCapabilityPattern, { maxLength: 4 }),
          agents: fc.array(arbAgentPattern, { maxLength: 4 }),
          published: fc.boolean(),
        }),
        deny: fc.record({ capabilities: fc.array(arbCapabilityPattern, { maxLength: 2 }), agents: fc.array(arbAgentPattern, { maxLength: 2 }) }),
        require: arbRequire,
        approval: arbApproval,
        budget: arbBudget,
        delegation: fc.record({ maxDepth: fc.integer({ min: 0, max: 8 - identity.depth }) }),
        expiresAt: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
        revoked: fc.boolean(),
      },
      { requiredKeys: ['allow', 'deny', 'require', 'approval', 'budget', 'delegation', 'revoked'] },
    )
    .map((rest) => ({ ...identity, ...rest })),
);

const arbSlot: fc.Arbitrary<CallSlot> = fc
  .record({
    target: fc.oneof(
      fc.constantFrom(...CLASSES).map((capability) => ({ capability })),
      fc
        .oneof(
          arbAgentId,
          fc.tuple(arbAgentId, fc.constantFrom(...RANGES)).map(([id, r]) => `${id}@${r}`),
        )
        .map((agent) => ({ agent })),
    ),
    maxCost: arbAmount,
  })
  .map(({ target, maxCost }) => ({ ...target, maxCost }));

/** A manifest with random identity, pricing and `calls`. */
export const arbManifest: fc.Arbitrary<Manifest> = fc
  .record({
    id: arbAgentId,
    version: fc.constantFrom(...VERSIONS),
    capabilities: fc.uniqueArray(fc.constantFrom(...CLASSES), { minLength: 1, maxLength: 3 }),
    amount: arbAmount,
    currency: fc.constantFrom(...CURRENCIES),
    calls: fc.array(arbSlot, { maxLength: 5 }),
    cap: arbAmount,
  })
  .map(({ id, version, capabilities, amount, currency, calls, cap }) =>
    buildManifest({
      id,
      version,
      capabilities,
      calls,
      pricing: { model: 'per_run', amount, currency, chargeOn: 'success' },
      downstream: { mode: 'passthrough', cap },
    }),
  );
