/**
 * Receipts: one per request, never an input or an output (spec/receipts.md). Stored flat in Postgres,
 * served as trees (children inline) with decimal-string amounts.
 */
import { issuerMandatesLike } from '../mandates/store.js';
import type { Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { formatAmount } from '../core/money.js';

export type ReceiptStatus = 'succeeded' | 'failed' | 'denied' | 'rejected_input' | 'pending_approval';

export interface ReceiptRecord {
  id: string;
  parentId?: string | null;
  mandateId?: string | null;
  subMandateId?: string | null;
  caller?: string | null;
  /** `ns/name@version` once resolved; what was asked for otherwise. */
  agent?: string | null;
  status: ReceiptStatus;
  errorCode?: string | null;
  reasons?: string[];
  worstCase?: bigint | null;
  currency?: string | null;
  payer?: string | null;
  billed?: boolean;
  costOwn?: bigint;
  costDownstream?: bigint;
  splits?: Array<{ account: string; amount: bigint }>;
  approvalId?: string | null;
  durationMs?: number | null;
  entryId?: bigint | null;
}

export async function insertReceipt(db: Queryable, r: ReceiptRecord): Promise<void> {
  await db('receipts').insert(receiptRow(r));
}

/** The `receipts` row of a record (for statements that insert it together with other rows). */
export function receiptRow(r: ReceiptRecord): Record<string, unknown> {
  const own = r.costOwn ?? 0n;
  const downstream = r.costDownstream ?? 0n;
  return {
    id: r.id,
    parent_id: r.parentId ?? null,
    mandate_id: r.mandateId ?? null,
    sub_mandate_id: r.subMandateId ?? null,
    caller: r.caller ?? null,
    agent: r.agent ?? null,
    status: r.status,
    error_code: r.errorCode ?? null,
    reasons: JSON.stringify(r.reasons ?? []),
    worst_case: r.worstCase === undefined || r.worstCase === null ? null : r.worstCase.toString(),
    currency: r.currency ?? null,
    payer: r.payer ?? null,
    billed: r.billed ?? false,
    cost_own: own.toString(),
    cost_downstream: downstream.toString(),
    cost_total: (own + downstream).toString(),
    splits: JSON.stringify((r.splits ?? []).map((s) => ({ to: s.account, amount: formatAmount(s.amount) }))),
    approval_id: r.approvalId ?? null,
    duration_ms: r.durationMs ?? null,
    entry_id: r.entryId === undefined || r.entryId === null ? null : r.entryId.toString(),
  };
}

export interface ReceiptView {
  id: string;
  parent: string | null;
  mandate: string | null;
  caller: string | null;
  agent: string | null;
  status: ReceiptStatus;
  error?: string;
  reasons: string[];
  worst_case: string | null;
  currency: string | null;
  payer: string | null;
  sub_mandate: string | null;
  billed: boolean;
  cost: { own: string; downstream: string; total: string };
  splits: Array<{ to: string; amount: string }>;
  approval: string | null;
  children: ReceiptView[];
  duration_ms: number | null;
  created_at: string;
}

function view(row: Record<string, unknown>): ReceiptView {
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  return {
    id: String(row.id),
    parent: (row.parent_id as string | null) ?? null,
    mandate: (row.mandate_id as string | null) ?? null,
    caller: (row.caller as string | null) ?? null,
    agent: (row.agent as string | null) ?? null,
    status: row.status as ReceiptStatus,
    ...(row.error_code ? { error: String(row.error_code) } : {}),
    reasons: parse(row.reasons) as string[],
    worst_case: row.worst_case === null || row.worst_case === undefined ? null : formatAmount(toBigInt(row.worst_case)),
    currency: (row.currency as string | null) ?? null,
    payer: (row.payer as string | null) ?? null,
    sub_mandate: (row.sub_mandate_id as string | null) ?? null,
    billed: Boolean(row.billed),
    cost: {
      own: formatAmount(toBigInt(row.cost_own)),
      downstream: formatAmount(toBigInt(row.cost_downstream)),
      total: formatAmount(toBigInt(row.cost_total)),
    },
    splits: parse(row.splits) as Array<{ to: string; amount: string }>,
    approval: (row.approval_id as string | null) ?? null,
    children: [],
    duration_ms: row.duration_ms === null || row.duration_ms === undefined ? null : Number(row.duration_ms),
    created_at: new Date(row.created_at as string).toISOString(),
  };
}

/** What a failed call's answer says, in one wording for REST and MCP: the code, and whether it was charged. */
export function describeFailure(receipt: Pick<ReceiptView, 'error' | 'billed'>): { code: string; message: string } {
  const code = receipt.error ?? 'agent_error';
  return { code, message: `the agent failed: ${code}; ${receipt.billed ? 'billed, as its manifest declares for this error' : 'nothing was charged'}` };
}

/** A receipt with its whole tree of children, or null. */
export async function loadReceiptTree(db: Queryable, id: string): Promise<ReceiptView | null> {
  const root = await db('receipts').where({ id }).first();
  if (!root) return null;
  const top = view(root);
  // Only a call that ran under a sub-mandate can have children.
  let level = root.sub_mandate_id ? [top] : [];
  // Breadth-first, one query per level: trees are shallow (delegation depth ≤ 8).
  for (let depth = 0; depth < 10 && level.length; depth++) {
    const byId = new Map(level.map((r) => [r.id, r]));
    const rows = await db('receipts')
      .whereIn('parent_id', [...byId.keys()])
      .orderBy([{ column: 'created_at' }, { column: 'id' }]);
    const next: ReceiptView[] = [];
    for (const row of rows) {
      const child = view(row);
      byId.get(child.parent!)!.children.push(child);
      next.push(child);
    }
    level = next;
  }
  return top;
}

export interface ReceiptPage {
  receipts: ReceiptView[];
  /** Pass as `before` to get the next (older) page; absent on the last page. */
  next?: string;
}

/** Top-level receipts, newest first, paged by a cursor (the last id of the previous page). */
export async function listReceipts(db: Queryable, options: { mandate?: string; issuer?: string; limit: number; before?: string }): Promise<ReceiptPage> {
  const q = db('receipts')
    .whereNull('parent_id')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(options.limit + 1);
  if (options.mandate) q.where({ mandate_id: options.mandate });
  if (options.issuer !== undefined) q.where('mandate_id', 'like', issuerMandatesLike(options.issuer));
  if (options.before) {
    const cursor = await db('receipts').where({ id: options.before }).first('created_at', 'id');
    if (cursor) q.whereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
  }
  const rows = await q;
  const page = rows.slice(0, options.limit);
  const receipts: ReceiptView[] = [];
  for (const row of page) receipts.push((await loadReceiptTree(db, String(row.id)))!);
  return { receipts, ...(rows.length > options.limit ? { next: String(page[page.length - 1]!.id) } : {}) };
}
