/** What admission takes and answers: a call's submission, a delegated call's terms, refusals. */
import type { ErrorCode, Problem } from '../../core/errors.js';
import type { Mandate } from '../../core/mandate/types.js';
import type { Manifest } from '../../core/manifest/types.js';
import type { ReceiptStatus, ReceiptView } from '../../receipts/store.js';
import type { approvalView } from './approvals.js';

export interface CallSubmission {
  mandateId: string;
  /** `ns/name[@range]` — exactly one of agent / capability. */
  agent?: string;
  capability?: string;
  input: unknown;
  /** The caller's cap, in the mandate's currency. */
  maxCost?: bigint;
  callbackUrl?: string;
  /**
   * A synchronous answer waits for the outcome (POST /v0/calls without `Prefer: respond-async`): with a callbackUrl,
   * the output is kept for both (shared/calls/answer/outputs.ts).
   */
  syncAnswer?: boolean;
  /** A granted approval (`{"run": false}`) this call redeems: same mandate, version, input and max_cost. */
  approval?: NamedApproval;
  /** Internal: an approval already moved to `used` by `POST /v0/approvals/{id}` with `{}`. */
  preApproved?: string;
  /**
   * Internal: written once the call is admitted and before its run can start (A2A: the task's push config, so that a
   * question the agent asks at once is pushed); a failure releases the reservation as a queue that fails does.
   */
  beforeRun?: (callId: string) => Promise<void>;
  /** Internal: a call made by a running agent (ctx.call), under its sub-mandate. */
  delegation?: Delegation;
  /**
   * The account whose key sent the request (hosted), if any: the receipt of a request whose mandate does not exist
   * is this account's to read (shared/receipts/store.ts `ReceiptOwner`); none (the dev operator), the operator's alone.
   */
  requester?: string;
}

/**
 * An approval a caller names, with the caller's scope (services/api/principal.ts `Scope`): an approval of a mandate
 * outside it is, to this caller, no approval at all — refused in the words of an id that names nothing, before any
 * of its terms (state, mandate, agent, input, max_cost) is compared (DESIGN §3.7).
 */
interface NamedApproval {
  id: string;
  inScope(mandateId: string): boolean;
}

export interface Delegation {
  parentCallId: string;
  rootId: string;
  /** The orchestrator's agent id: the caller of the child call. */
  caller: string;
  /** passthrough: the original payer, out of the parent's hold; included: the orchestrator's author. */
  mode: 'passthrough' | 'included';
  payer: string;
  parentHoldId: string;
  /** The declared slot's max_cost, in the mandate's currency. */
  slotMaxCost: bigint;
}

/** What admission answers: queued to run, refused (with its receipt), or held for a human decision. */
export type Submitted = Queued | Refused | Held;

export interface Queued {
  kind: 'queued';
  callId: string;
  timeoutMs: number;
}

export interface Refused {
  kind: 'refused';
  code: RefusalCode;
  message: string;
  receipt: ReceiptView;
  problems?: Problem[];
}

/** Held: the approval a human decides, and the receipt of the held request (status `pending_approval`). */
export interface Held {
  kind: 'held';
  approval: ReturnType<typeof approvalView>;
  receipt: ReceiptView;
}

/** The codes a call's admission refuses with (each with its receipt). */
type RefusalCode = Extract<
  ErrorCode,
  | 'unknown_mandate'
  | 'invalid_ref'
  | 'unknown_agent'
  | 'no_matching_version'
  | 'unknown_capability'
  | 'denied'
  | 'approval_used'
  | 'rejected_input'
  | 'file_not_found'
>;

export interface Refusal {
  code: RefusalCode;
  status: Exclude<ReceiptStatus, 'succeeded' | 'pending_approval'>;
  /** The receipt's `error` (a refusal that reads as a failed call: `file_not_found`). */
  errorCode?: string;
  reasons: string[];
  problems?: Problem[];
}

/** A running call that may delegate: the parent of the child calls its agent makes. */
export interface RunningCall {
  id: string;
  rootId: string;
  payer: string;
  maxCost?: bigint;
}

/** A running orchestrator: its call, its manifest and the sub-mandate its children run under. */
export interface ParentRun {
  call: RunningCall;
  manifest: Manifest;
  sub: Mandate;
}

/** What a running orchestrator asks for: the agent or capability to call, its input, and options (a `max_cost`). */
export interface ChildRequest {
  target: string | { agent: string } | { capability: string };
  input: unknown;
  options?: { max_cost?: string };
}

export const label = (m: Manifest): string => `${m.id}@${m.version}`;
