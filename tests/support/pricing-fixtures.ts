/** Hand-built normalized manifests and mandates for the pricing, splits and resolution tests. */
import type { Manifest, Pricing } from '../../shared/core/manifest/types.js';
import type { Mandate } from '../../shared/core/mandate/types.js';
import type { Rate } from '../../shared/core/money.js';

export const r = (s: string): Rate => {
  const [whole, frac = ''] = s.split('.');
  const den = 10n ** BigInt(frac.length);
  return { num: BigInt(whole!) * den + BigInt(frac || '0'), den };
};

export type ManifestOverrides = Partial<Omit<Manifest, 'pricing'>> & { pricing?: Partial<Pricing> };

export function manifest(overrides: ManifestOverrides = {}): Manifest {
  const { pricing, ...rest } = overrides;
  const id = rest.id ?? 'acme/agent';
  const [namespace, name] = id.split('/');
  return {
    id,
    namespace: namespace!,
    name: name!,
    version: '1.0.0',
    summary: 'A test agent',
    capabilities: ['extraction.table'],
    license: 'MIT',
    forks: { minRoyalty: { num: 0n, den: 1n }, allowed: true },
    interface: {
      input: { type: 'object' },
      output: { type: 'object' },
      errors: {
        over_budget: { description: 'Estimate exceeds max_cost', billed: false },
        partial: { description: 'Some pages unreadable', billed: true },
      },
      examples: [],
    },
    pricing: { model: 'per_run', currency: 'EUR', amount: 10_000n, chargeOn: 'success', ...pricing },
    calls: [],
    runtime: { kind: 'mcp', endpoint: 'https://agent.example.org/mcp', tool: 'run', timeoutS: 60 },
    doc: {},
    ...rest,
  };
}

export type MandateOverrides = Partial<Omit<Mandate, 'budget'>> & { budget?: Partial<Mandate['budget']> };

export function mandate(overrides: MandateOverrides = {}): Mandate {
  const { budget, ...rest } = overrides;
  return {
    id: 'alice/main',
    issuer: 'alice',
    grantee: 'alice/assistant',
    allow: { capabilities: ['extraction.*'], agents: [], published: true },
    deny: { capabilities: [], agents: [] },
    require: { license: 'any', evaluated: false },
    approval: { agents: [], firstUse: false },
    budget: { total: 20_000_000n, currency: 'EUR', fx: { USD: r('0.92') }, ...budget },
    delegation: { maxDepth: 1 },
    revoked: false,
    depth: 0,
    ...rest,
  };
}
