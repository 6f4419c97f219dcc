/**
 * A validated, normalized mandate (spec/mandate.md). Amounts are micro-units in `budget.currency`.
 */
import type { Micros, Rate } from '../money.js';
import type { Retention } from '../manifest/types.js';

export type LicenseRequirement = 'any' | 'open-source' | string[];

export interface DataRequirement {
  retention?: Retention;
  region?: string[];
  training?: false;
}

export interface Mandate {
  id: string;
  issuer: string;
  grantee: string;
  allow: { capabilities: string[]; agents: string[]; published: boolean };
  deny: { capabilities: string[]; agents: string[] };
  require: {
    license: LicenseRequirement;
    data?: DataRequirement;
    evaluated: boolean;
    minSuccessRate?: Rate;
  };
  approval: { above?: Micros; agents: string[]; firstUse: boolean };
  budget: { total: Micros; currency: string; perCall?: Micros; fx: Record<string, Rate> };
  delegation: { maxDepth: number };
  /** Epoch milliseconds. */
  expiresAt?: number;
  revoked: boolean;
  /** 0 for a root mandate; a derived sub-mandate is one deeper than the mandate it came from. */
  depth: number;
  /** For a sub-mandate: the parent mandate's id. */
  parent?: string;
}

/** What the gateway knows about an agent version beyond its manifest (facts, not declarations). */
export interface AgentFacts {
  /** Shipped with the gateway (always eligible) or published by a third party. */
  origin: 'shipped' | 'published';
  /** Evaluation result for this version; `none` when no suite exists for its capabilities. */
  evaluation: 'passed' | 'failed' | 'error' | 'pending' | 'none';
  /** Measured record, all time. */
  record?: { runs: number; successes: number };
}

/** The request side of admission (mandate.md §3). */
export interface CallRequest {
  /** The worst case in the mandate's currency, after max_cost; null when it cannot be converted. */
  worstCase: Micros | null;
  /** The caller's cap, in the mandate's currency. */
  maxCost?: Micros;
  /** 0 for a root call; a call under a sub-mandate is one deeper than the call that derived it. */
  depth: number;
  /** The caller is an agent inside a delegated run. */
  delegated: boolean;
  /** How the agent was named. */
  via: { kind: 'id' } | { kind: 'capability'; capability: string };
  /** This exact agent version was called under this mandate before. */
  usedBefore: boolean;
  /** Epoch milliseconds. */
  now: number;
  facts: AgentFacts;
  /** Inside a delegated run: the declared call slot's max_cost, in the mandate's currency (manifest.md §5). */
  slotMaxCost?: Micros;
}

type Decision = 'allow' | 'approve' | 'deny';

export interface Admission {
  decision: Decision;
  reasons: string[];
}
