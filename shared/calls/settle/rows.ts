/**
 * The calls' rows as the settlement reads them: before its transaction (`PRE_COLUMNS`, unlocked), and inside it,
 * locked (`lockCalls`), with the reads that follow: open children, the mandates above a parent hold, the children's
 * costs.
 */
import { type DbBigInt, fromJsonb, toBigInt, type Queryable, type Tx } from '../../db/connect.js';
import { namedStatement } from '../../db/prepared.js';
import type { CallOutcome } from '../call-outcome.js';

/** The columns read before the transaction: whether to settle, and how (alone or in a batch). */
export const PRE_COLUMNS = ['id', 'status', 'agent_id', 'agent_version', 'payer', 'currency', 'sub_mandate_id', 'parent_id'] as const;

/** A call's row as settlement reads it, locked (`LOCK_ONE`, `LOCK_BATCH`; connect.ts: how the drivers return each column). */
interface SettlingCallRow {
  id: string;
  status: string;
  mandate_id: string;
  sub_mandate_id: string | null;
  parent_id: string | null;
  caller: string;
  agent_id: string;
  agent_version: string;
  payer: string;
  currency: string;
  worst_case: DbBigInt;
  approval_id: string | null;
  delegated: boolean;
  callback_url: string | null;
  settle_enqueued_at: Date | null;
  outcome: unknown;
}

export interface SettlingCall {
  id: string;
  status: string;
  mandateId: string;
  subMandateId: string | null;
  parentId: string | null;
  caller: string;
  agentId: string;
  agentVersion: string;
  payer: string;
  currency: string;
  worstCase: bigint;
  approvalId: string | null;
  delegated: boolean;
  callbackUrl: string | null;
  settleEnqueuedAt: Date | null;
  /** Written by `closeCall`: null only while the call is not yet `settling`. */
  outcome: CallOutcome | null;
  /** Closed in the settlement's own transaction (settle.ts `Closing`): its outcome is written with its final status. */
  closedHere?: true;
}

function settlingCallFromRow(row: SettlingCallRow): SettlingCall {
  return {
    id: String(row.id),
    status: row.status,
    mandateId: String(row.mandate_id),
    subMandateId: row.sub_mandate_id ?? null,
    parentId: row.parent_id ?? null,
    caller: String(row.caller),
    agentId: String(row.agent_id),
    agentVersion: String(row.agent_version),
    payer: String(row.payer),
    currency: String(row.currency),
    worstCase: toBigInt(row.worst_case),
    approvalId: row.approval_id ?? null,
    delegated: Boolean(row.delegated),
    callbackUrl: row.callback_url ?? null,
    settleEnqueuedAt: row.settle_enqueued_at ?? null,
    outcome: (fromJsonb(row.outcome) as CallOutcome | null) ?? null,
  };
}

/** The columns of a locked call that settlement reads (`SettlingCallRow`), and the transaction's time. */
const LOCKED_COLUMNS =
  'id, status, mandate_id, sub_mandate_id, parent_id, caller, agent_id, agent_version, payer, currency, worst_case, approval_id, delegated, callback_url, settle_enqueued_at, outcome, now() AS tx_now';

/** A lock statement: its text (fixed, so Postgres plans it once per connection) and its name. */
export interface LockStatement {
  sql: string;
  name: string;
}

/** One call, locked. */
export const LOCK_ONE: LockStatement = { sql: `SELECT ${LOCKED_COLUMNS} FROM calls WHERE id = ? FOR UPDATE`, name: 'settle_lock_one' };
/** A batch's calls, locked in the order of their ids (no other transaction locks two calls' rows). */
export const LOCK_BATCH: LockStatement = {
  sql: `SELECT ${LOCKED_COLUMNS} FROM calls WHERE id = ANY(?) ORDER BY id COLLATE "C" FOR UPDATE`,
  name: 'settle_lock_batch',
};

/**
 * The locked rows of these calls, in the order of the query (`LOCK_ONE`, `LOCK_BATCH`), and the transaction's time:
 * every receipt it writes has it as its `created_at` (the column's default, `now()`), so the receipts are signed
 * before they are written.
 */
export async function lockCalls(trx: Tx, lock: LockStatement, bindings: Array<string | string[]>): Promise<{ calls: SettlingCall[]; at: Date }> {
  const r = await trx.raw<{ rows: Array<SettlingCallRow & { tx_now: Date | string }> }>(lock.sql, bindings).options(namedStatement(lock.name));
  const at = r.rows[0] ? new Date(r.rows[0].tx_now) : new Date();
  return { calls: r.rows.map(settlingCallFromRow), at };
}

/** Children of a call that have not settled yet: a run is not settled until all its children have. */
export async function openChildren(db: Queryable, callId: string): Promise<number> {
  const r = await db('calls').where({ parent_id: callId }).whereNotIn('status', ['succeeded', 'failed']).count({ n: '*' }).first();
  return Number(r?.n ?? 0);
}

/** The mandates of a hold and of every hold above it, root first. */
export async function ancestorMandates(trx: Tx, holdId: string): Promise<string[]> {
  const r = await trx.raw<{ rows: Array<{ mandate_id: string; level: number }> }>(
    `WITH RECURSIVE up AS (
       SELECT id, parent_hold_id, mandate_id, 0 AS level FROM holds WHERE id = ?
       UNION ALL
       SELECT h.id, h.parent_hold_id, h.mandate_id, up.level + 1 FROM holds h JOIN up ON h.id = up.parent_hold_id
     ) SELECT mandate_id, level FROM up WHERE mandate_id IS NOT NULL ORDER BY level DESC`,
    [holdId],
  );
  return r.rows.map((row) => row.mandate_id);
}

/** What a call's children cost in all (their receipts' totals): a passthrough call's downstream cost. */
export async function childrenCost(trx: Tx, callId: string): Promise<bigint> {
  return BigInt(String((await trx('receipts').where({ parent_id: callId }).sum({ s: 'cost_total' }).first())?.s ?? 0));
}
