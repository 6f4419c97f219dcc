/**
 * The settlement's plan, pure (no I/O, no clock): from the calls' locked rows and what their transaction read and
 * ended for them — each call's hold, journal entry, the mandates above its parent hold, its children's costs — the
 * rows to write: receipts, call events, final statuses, webhook deliveries, and each call's moves on the hot rows
 * (its hold posted or voided, the mandates, the journal lines applied to the balances). The writer writes the plan
 * as it is (write.ts); nothing changes it.
 */
import type { ChainLink } from '../../core/splits.js';
import { journalLinesForSettlement, split } from '../../core/splits.js';
import { type EntryInput, type PostedEntry, SETTLEMENT_KIND } from '../../ledger/entries.js';
import { endedNow, type HoldEnd, type HoldResolution } from '../../ledger/holds.js';
import type { SettlementMoves } from '../../ledger/money-functions.js';
import { type ReceiptPayment, receiptRow, type ReceiptValues } from '../../receipts/store.js';
import { newDelivery, type NewDelivery } from '../../webhooks/deliveries.js';
import type { CallOutcome } from '../call-outcome.js';
import type { SettlingCall } from './rows.js';

/** A locked `settling` call with no open children: its outcome is written. */
export type CallToSettle = SettlingCall & { outcome: CallOutcome };

/** A call to settle, with what its transaction read and ended for it before the plan. */
export interface PlanInput {
  call: CallToSettle;
  chain: readonly ChainLink[];
  hold: HoldResolution;
  /** Its journal entry `settle:<id>`; null when nothing is charged. */
  entry: PostedEntry | null;
  /** The mandates above its parent hold, root first: empty without a parent hold ended now. */
  ancestors: readonly string[];
  /** What its children cost: a passthrough call's downstream cost; else 0. */
  downstream: bigint;
  /** A call paid from outside: how it was paid (its receipt records it). */
  payment?: ReceiptPayment;
}

/** A `call_events` row: what the Agent Record counts (shared/catalogue/agent-record.ts). */
interface CallEventRow {
  call_id: string;
  agent_id: string;
  agent_version: string;
  status: 'succeeded' | 'failed';
  error_code: string | null;
  latency_ms: number;
  cost: string;
  currency: string;
  delegated: boolean;
}

/** What follows a call's commit (after-commit.ts). */
interface AfterCommit {
  /** Whether the `calls-done` notice carries the receipt: not for a call run under a sub-mandate (it may have children). */
  showsReceipt: boolean;
  callbackUrl: string | null;
  parentId: string | null;
  /** What the metrics count (shared/platform/metrics.ts). */
  counted: { status: 'succeeded' | 'failed'; errorCode: string | undefined; agent: string; handedOffAt: Date | null };
}

export interface PlannedCall {
  readonly id: string;
  readonly moves: SettlementMoves;
  readonly after: AfterCommit;
}

export interface SettlementPlan {
  /** In the order of the input (the lock order). */
  readonly calls: readonly PlannedCall[];
  /** Unsigned: the writer signs them once the transaction's time is known. */
  readonly receipts: readonly Readonly<ReceiptValues>[];
  readonly events: readonly CallEventRow[];
  /** Each call's final status; with its outcome for a call closed in this same transaction (rows.ts `closedHere`). */
  readonly finals: ReadonlyArray<{ id: string; status: 'succeeded' | 'failed'; closed?: CallOutcome }>;
  /** The deliveries of the calls that name a `callback_url`, opened in the settlement's transaction (an outbox). */
  readonly deliveries: readonly NewDelivery[];
}

/** What the call is charged for its own work. */
const chargeOf = (call: CallToSettle): bigint => (call.outcome.billed ? BigInt(call.outcome.own) : 0n);

/** How the call's hold ends: posted when it is charged (possibly less than held), voided when not. */
export const holdEndOf = (call: CallToSettle): HoldEnd => (chargeOf(call) > 0n ? 'posted' : 'voided');

/** The call's journal entry, `settle:<id>`: the payer pays the royalty chain and the platform. Null when nothing is charged. */
export function journalEntryOf(call: CallToSettle, chain: readonly ChainLink[]): EntryInput | null {
  const own = chargeOf(call);
  if (own === 0n) return null;
  const lines = journalLinesForSettlement(call.payer, own, chain).map((l) => ({ ...l, currency: call.currency }));
  return { key: `settle:${call.id}`, kind: SETTLEMENT_KIND, lines };
}

const statusOf = (call: CallToSettle): 'succeeded' | 'failed' => (call.outcome.kind === 'success' ? 'succeeded' : 'failed');

/**
 * The call's moves on the hot rows: mandates root first (shallower before deeper, its own mandate last); the
 * ancestors release what was charged, its own mandate the whole hold; a parent hold gets back what was not used; the
 * hold leaves the account's `held`; the entry's lines reach the balances once (only when the entry is new). A hold
 * carved from a budget lease names it: what was not charged stays reserved under the lease while it is open.
 */
function movesOf(p: PlanInput): SettlementMoves {
  const { call, hold } = p;
  const own = chargeOf(call);
  const ended = endedNow(hold);
  const parentHold = ended ? hold.parentHoldId : null;
  const lines = p.entry?.created ? journalLinesForSettlement(call.payer, own, p.chain) : [];
  return {
    mandates: [...p.ancestors.map((id) => ({ id, release: own })), { id: call.mandateId, release: ended ? hold.amount : 0n }],
    spent: own,
    parentHold: parentHold ? { id: parentHold, back: hold.amount > own ? hold.amount - own : 0n } : null,
    hold: ended ? { account: hold.account, currency: hold.currency, amount: hold.amount } : null,
    ...(ended && hold.leaseId ? { lease: { id: hold.leaseId, charged: own } } : {}),
    lines: lines.map((l) => ({ account: l.account, currency: call.currency, amount: l.amount })),
  };
}

function receiptOf(p: PlanInput): ReceiptValues {
  const { call } = p;
  const own = chargeOf(call);
  return receiptRow({
    id: call.id,
    parentId: call.parentId,
    mandateId: call.mandateId,
    subMandateId: call.subMandateId,
    caller: call.caller,
    agent: `${call.agentId}@${call.agentVersion}`,
    status: statusOf(call),
    errorCode: call.outcome.code ?? null,
    reasons: [],
    worstCase: call.worstCase,
    currency: call.currency,
    payer: call.payer,
    billed: own > 0n,
    costOwn: own,
    costDownstream: p.downstream,
    splits: own > 0n ? split(own, p.chain) : [],
    approvalId: call.approvalId,
    durationMs: call.outcome.duration_ms,
    entryId: p.entry?.id ?? null,
    payment: p.payment ?? null,
    stream: call.outcome.stream ?? null,
  });
}

function eventOf(call: CallToSettle): CallEventRow {
  return {
    call_id: call.id,
    agent_id: call.agentId,
    agent_version: call.agentVersion,
    status: statusOf(call),
    error_code: call.outcome.code ?? null,
    latency_ms: Math.max(0, Math.round(call.outcome.duration_ms)),
    cost: chargeOf(call).toString(),
    currency: call.currency,
    delegated: call.delegated,
  };
}

function plannedCall(call: CallToSettle, moves: SettlementMoves): PlannedCall {
  return Object.freeze({
    id: call.id,
    moves,
    after: {
      showsReceipt: !call.subMandateId,
      callbackUrl: call.callbackUrl,
      parentId: call.parentId,
      counted: { status: statusOf(call), errorCode: call.outcome.code, agent: call.agentId, handedOffAt: call.settleEnqueuedAt },
    },
  });
}

/** The plan of these calls' settlement, in their order. */
export function planSettlement(inputs: readonly PlanInput[]): SettlementPlan {
  return Object.freeze({
    calls: Object.freeze(inputs.map((p) => plannedCall(p.call, movesOf(p)))),
    receipts: Object.freeze(inputs.map(receiptOf)),
    events: Object.freeze(inputs.map((p) => eventOf(p.call))),
    finals: Object.freeze(inputs.map((p) => ({ id: p.call.id, status: statusOf(p.call), ...(p.call.closedHere ? { closed: p.call.outcome } : {}) }))),
    deliveries: Object.freeze(inputs.filter((p) => p.call.callbackUrl).map((p) => newDelivery(p.call.id, p.call.payer))),
  });
}
