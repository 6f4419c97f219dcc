/**
 * Approvals (mandate.md §4): a held call waiting for a human. Bound to the mandate, the exact agent version,
 * the SHA-256 of the canonical input, the max_cost and the worst case. `pending` → `used` (approved and run,
 * or a grant redeemed), `approved` (granted: the grantee re-submits), `rejected`, `expired` (after 7 days).
 * Every transition is one conditional UPDATE, so an approval is used once even when decided concurrently,
 * and the stored input is set to NULL in the same statement that ends `pending`.
 */
import { issuerMandatesLike } from '../../mandates/store.js';
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/connect.js';
import { toBigInt } from '../../db/connect.js';
import { inputHash } from '../../core/canonical-json.js';
import { formatAmount } from '../../core/money.js';

const APPROVAL_TTL_MS = 7 * 24 * 3600 * 1000;

type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'used';

export interface ApprovalRow {
  id: string;
  mandateId: string;
  agentId: string;
  agentVersion: string;
  inputSha256: string;
  maxCost: bigint | null;
  worstCase: bigint;
  currency: string;
  reasons: string[];
  receiptId: string;
  status: ApprovalStatus;
  callId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export function newApprovalId(): string {
  return `a_${randomBytes(9).toString('hex')}`;
}

/** An `approvals` row as the driver answers it (shared/db/migrations/004_approvals.ts): bigints and jsonb as it reads them. */
interface ApprovalRecord {
  id: string;
  mandate_id: string;
  agent_id: string;
  agent_version: string;
  input_sha256: string;
  input: unknown;
  max_cost: string | number | bigint | null;
  worst_case: string | number | bigint;
  currency: string;
  /** jsonb: parsed by the driver, or its text. */
  reasons: string | string[];
  receipt_id: string;
  status: ApprovalStatus;
  call_id: string | null;
  created_at: Date | string;
  expires_at: Date | string;
  decided_at: Date | string | null;
}

function fromRow(r: ApprovalRecord): ApprovalRow {
  return {
    id: String(r.id),
    mandateId: String(r.mandate_id),
    agentId: String(r.agent_id),
    agentVersion: String(r.agent_version),
    inputSha256: String(r.input_sha256),
    maxCost: r.max_cost === null || r.max_cost === undefined ? null : toBigInt(r.max_cost),
    worstCase: toBigInt(r.worst_case),
    currency: String(r.currency),
    reasons: typeof r.reasons === 'string' ? (JSON.parse(r.reasons) as string[]) : r.reasons,
    receiptId: String(r.receipt_id),
    status: r.status,
    callId: r.call_id ?? null,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
  };
}

export function approvalView(a: ApprovalRow, input?: unknown) {
  return {
    id: a.id,
    status: a.status,
    mandate: a.mandateId,
    agent: `${a.agentId}@${a.agentVersion}`,
    input_sha256: a.inputSha256,
    max_cost: a.maxCost === null ? null : formatAmount(a.maxCost),
    worst_case: formatAmount(a.worstCase),
    currency: a.currency,
    reasons: a.reasons,
    receipt: a.receiptId,
    call: a.callId,
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    // The input is shown only while the approval is pending: the human has to see what would be sent.
    ...(input !== undefined ? { input } : {}),
  };
}

export async function createApproval(
  db: Queryable,
  a: {
    id: string;
    mandateId: string;
    agentId: string;
    agentVersion: string;
    input: unknown;
    maxCost?: bigint;
    worstCase: bigint;
    currency: string;
    reasons: string[];
    receiptId: string;
    now: number;
  },
): Promise<void> {
  await db('approvals').insert({
    id: a.id,
    mandate_id: a.mandateId,
    agent_id: a.agentId,
    agent_version: a.agentVersion,
    input_sha256: inputHash(a.input),
    input: JSON.stringify(a.input),
    max_cost: a.maxCost === undefined ? null : a.maxCost.toString(),
    worst_case: a.worstCase.toString(),
    currency: a.currency,
    reasons: JSON.stringify(a.reasons),
    receipt_id: a.receiptId,
    expires_at: new Date(a.now + APPROVAL_TTL_MS),
  });
}

/** Expire pending approvals past their time (their input is deleted in the same statement). */
export async function expireApprovals(db: Queryable, now: number): Promise<number> {
  const r = await db.raw<{ rows: unknown[] }>(
    `UPDATE approvals SET status = 'expired', input = NULL, decided_at = ? WHERE status = 'pending' AND expires_at <= ? RETURNING id`,
    [new Date(now), new Date(now)],
  );
  return r.rows.length;
}

export async function loadApproval(db: Queryable, id: string, now: number): Promise<{ approval: ApprovalRow; input?: unknown } | null> {
  await db.raw(`UPDATE approvals SET status = 'expired', input = NULL, decided_at = ? WHERE id = ? AND status = 'pending' AND expires_at <= ?`, [
    new Date(now),
    id,
    new Date(now),
  ]);
  const row = await db('approvals').where({ id }).first();
  if (!row) return null;
  const input = row.input === null || row.input === undefined ? undefined : typeof row.input === 'string' ? JSON.parse(row.input) : row.input;
  return { approval: fromRow(row), ...(input !== undefined ? { input } : {}) };
}

/** Pending approvals, newest first: of one mandate, or of every mandate whose root `issuer` issued (hosted humans). */
export async function listPendingApprovals(
  db: Queryable,
  now: number,
  mandateId?: string,
  issuer?: string,
): Promise<Array<{ approval: ApprovalRow; input: unknown }>> {
  await expireApprovals(db, now);
  const q = db('approvals').where({ status: 'pending' }).orderBy('created_at', 'desc').limit(200);
  if (mandateId) q.where({ mandate_id: mandateId });
  if (issuer !== undefined) q.where('mandate_id', 'like', issuerMandatesLike(issuer));
  const rows = await q;
  return rows.map((row) => ({ approval: fromRow(row), input: typeof row.input === 'string' ? JSON.parse(row.input) : row.input }));
}

/**
 * Decide on a pending approval, once: `run` (approve and run now: returns the stored input), `grant`
 * (approve; the grantee re-submits), `reject`. Null when it is no longer pending (decided, used or expired).
 */
export async function decideApproval(
  db: Queryable,
  id: string,
  decision: 'run' | 'grant' | 'reject',
  now: number,
): Promise<{ approval: ApprovalRow; input?: unknown } | null> {
  const status = decision === 'run' ? 'used' : decision === 'grant' ? 'approved' : 'rejected';
  // The input is read and erased by the one statement that ends `pending` (the old value comes back via the CTE).
  const r = await db.raw<{ rows: Array<ApprovalRecord & { stored_input: unknown }> }>(
    `WITH before AS (SELECT id, input FROM approvals WHERE id = ? AND status = 'pending' AND expires_at > ? FOR UPDATE)
     UPDATE approvals a SET status = ?, input = NULL, decided_at = ?
       FROM before WHERE a.id = before.id
     RETURNING a.*, before.input AS stored_input`,
    [id, new Date(now), status, new Date(now)],
  );
  const row = r.rows[0];
  if (!row) return null;
  const input = typeof row.stored_input === 'string' ? JSON.parse(row.stored_input) : row.stored_input;
  return { approval: fromRow(row), ...(decision === 'run' ? { input } : {}) };
}

/**
 * Why a granted approval does not fit this call (empty when it does). Its reasons tell the approval's terms (state,
 * mandate, agent, input, max_cost): only for an approval the caller owns — submit.ts checks the caller's scope first,
 * and one outside it is refused as `there is no approval <id>`, like an id that names nothing.
 */
export function grantMismatch(
  a: ApprovalRow,
  call: { mandateId: string; agentId: string; agentVersion: string; input: unknown; maxCost?: bigint },
  now: number,
): string[] {
  const reasons: string[] = [];
  if (a.status === 'used') reasons.push(`approval ${a.id} was already used`);
  else if (a.status !== 'approved') reasons.push(`approval ${a.id} is ${a.status}, not approved`);
  if (a.expiresAt.getTime() <= now) reasons.push(`approval ${a.id} has expired`);
  if (a.mandateId !== call.mandateId) reasons.push(`approval ${a.id} is for mandate ${a.mandateId}`);
  if (a.agentId !== call.agentId || a.agentVersion !== call.agentVersion) reasons.push(`approval ${a.id} is for ${a.agentId}@${a.agentVersion}`);
  if (a.inputSha256 !== inputHash(call.input)) reasons.push(`approval ${a.id} was given for another input`);
  if ((a.maxCost ?? null) !== (call.maxCost ?? null))
    reasons.push(`approval ${a.id} was given for max_cost ${a.maxCost === null ? 'none' : formatAmount(a.maxCost)}`);
  return reasons;
}
