/**
 * A validated, normalized manifest (spec/manifest.md). Amounts are micro-units, fractions are Rates.
 * `doc` keeps the document as written (JSON), for display and for hashing.
 */
import type { Micros, Rate } from '../money.js';
import type { JsonObject, JsonSchema } from '../json.js';

export type PricingModel = 'free' | 'per_run' | 'per_unit' | 'quote';
export type ChargeOn = 'success' | 'attempt';
export type RuntimeKind = 'mcp' | 'webhook' | 'a2a' | 'node';
export type DownstreamMode = 'passthrough' | 'included';

/** The gateway's own error codes: an agent can never declare these. */
export const RESERVED_ERROR_CODES = [
  'timeout',
  'invalid_output',
  'agent_error',
  'runtime_unavailable',
  'gateway_error',
  'gateway_restarted',
  'file_not_found',
  'rejected_input',
  'denied',
  'cancelled',
  'budget_reached',
  'no_answer',
  'payment_failed',
] as const;

export interface Pricing {
  model: PricingModel;
  currency: string;
  /** per_run: the price; per_unit: the price of one unit. */
  amount?: Micros;
  /** per_unit: the unit's name. */
  unit?: string;
  /** per_unit and quote: the most one run can cost. */
  max?: Micros;
  chargeOn: ChargeOn;
}

export interface DeclaredError {
  description: string;
  billed: boolean;
}

/** One declared downstream call slot: exactly one of capability / agent is set. */
export interface CallSlot {
  capability?: string;
  /** `ns/name` or `ns/name@<semver range>` */
  agent?: string;
  /** In the agent's pricing currency. */
  maxCost: Micros;
}

interface Downstream {
  mode: DownstreamMode;
  /** Required with passthrough when calls is not empty. In the agent's pricing currency. */
  cap?: Micros;
}

/** `none`, or a maximum number of days. */
export type Retention = { kind: 'none' } | { kind: 'days'; days: number };

export interface DataPolicy {
  retention?: Retention;
  region?: string[];
  training?: boolean;
  subprocessors?: string[];
}

export interface Manifest {
  id: string;
  namespace: string;
  name: string;
  version: string;
  summary: string;
  description?: string;
  capabilities: string[];
  /** SPDX id or `proprietary`. */
  license: string;
  source?: { repository: string };
  lineage?: { forkedFrom: { id: string; version: string }; royalty: Rate };
  forks: { minRoyalty: Rate; allowed: boolean };
  interface: {
    input: JsonSchema;
    output: JsonSchema;
    /** A streamed output's chunks (`interface.stream.chunk`): each chunk the agent emits is checked against it. */
    stream?: { chunk: JsonSchema };
    errors: Record<string, DeclaredError>;
    examples: Array<{ input: unknown; output?: unknown; error?: string }>;
  };
  pricing: Pricing;
  calls: CallSlot[];
  downstream?: Downstream;
  runtime: { kind: RuntimeKind; endpoint?: string; tool?: string; skill?: string; timeoutS: number };
  data?: DataPolicy;
  /** The document as written (parsed JSON). */
  doc: JsonObject;
}

export function isOpenSource(manifest: Pick<Manifest, 'license'>): boolean {
  return manifest.license !== 'proprietary';
}
