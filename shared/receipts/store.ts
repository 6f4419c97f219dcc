/**
 * Receipts: one per request, never an input or an output (spec/receipts.md). Stored flat in Postgres,
 * served as trees (children inline) with decimal-string amounts.
 */
import { issuerMandatesLike } from '../mandates/store.js';
import type { DbBigInt, Queryable } from '../db/connect.js';
import { unnestInsert } from '../db/prepared.js';
import { fromJsonb, toBigInt } from '../db/connect.js';
import { formatAmount } from '../core/money.js';
import { HolonError } from '../core/errors.js';
import type { StreamRecord } from '../calls/events/types.js';

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
  /**
   * A receipt with no mandate (the request named one that does not exist): the account whose key sent the request,
   * who reads it (`ReceiptOwner`). Never set beside a mandate; not part of the receipt as shown or signed.
   */
  requester?: string | null;
  /** A call paid from outside (docs/payments.md): how it was paid, signed with the receipt. */
  payment?: ReceiptPayment | null;
  /** A call that streamed or asked (docs/lifecycle.md): what it delivered and how it ended, signed with the receipt. */
  stream?: StreamRecord | null;
}

/** How a paid call was paid: the scheme, the chain, the payer's wallet, what was collected and the transaction. */
export interface ReceiptPayment {
  scheme: string;
  network: string;
  payer: string;
  /** What was collected, in the asset's currency (`currency`), as a decimal string; "0.000000" when nothing was. */
  amount: string;
  currency: string;
  /** The transaction that collected it; null when nothing was collected. */
  transaction: string | null;
  /** The platform's rate from the agent's currency into the payment's, when they differ (`1 EUR = rate USD`). */
  rate?: { from: string; to: string; rate: string };
}

/** What `receiptRow` writes: amounts as decimal text, jsonb columns as JSON text. */
export interface ReceiptValues {
  id: string;
  parent_id: string | null;
  mandate_id: string | null;
  sub_mandate_id: string | null;
  caller: string | null;
  agent: string | null;
  status: ReceiptStatus;
  error_code: string | null;
  reasons: string;
  worst_case: string | null;
  currency: string | null;
  payer: string | null;
  billed: boolean;
  cost_own: string;
  cost_downstream: string;
  cost_total: string;
  splits: string;
  approval_id: string | null;
  duration_ms: number | null;
  entry_id: string | null;
  requester: string | null;
  /** jsonb: ReceiptPayment, for a call paid from outside. */
  payment: string | null;
  /** jsonb: StreamRecord, for a call that streamed or asked. */
  stream: string | null;
  /** The receipt's JWS (shared/receipts/signing.ts), set once the receipt's view is known: before the row is written. */
  signature: string | null;
}

/** Each column of `ReceiptValues` with its Postgres type: the order of `receiptsInsert`'s arrays. */
const RECEIPT_COLUMNS = [
  ['id', 'text'],
  ['parent_id', 'text'],
  ['mandate_id', 'text'],
  ['sub_mandate_id', 'text'],
  ['caller', 'text'],
  ['agent', 'text'],
  ['status', 'text'],
  ['error_code', 'text'],
  ['reasons', 'jsonb'],
  ['worst_case', 'bigint'],
  ['currency', 'text'],
  ['payer', 'text'],
  ['billed', 'boolean'],
  ['cost_own', 'bigint'],
  ['cost_downstream', 'bigint'],
  ['cost_total', 'bigint'],
  ['splits', 'jsonb'],
  ['approval_id', 'text'],
  ['duration_ms', 'int'],
  ['entry_id', 'bigint'],
  ['requester', 'text'],
  ['payment', 'jsonb'],
  ['stream', 'jsonb'],
  ['signature', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof ReceiptValues, string]>;

/**
 * Receipts as one INSERT of fixed text, whatever their number (a column an array): for a statement that writes them
 * with other rows (a settlement's).
 */
export const receiptsInsert = unnestInsert<ReceiptValues>('receipts', RECEIPT_COLUMNS);

/** The `receipts` row of a record (for statements that insert it together with other rows). */
export function receiptRow(r: ReceiptRecord): ReceiptValues {
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
    requester: r.requester ?? null,
    payment: r.payment ? JSON.stringify(r.payment) : null,
    stream: r.stream ? JSON.stringify(r.stream) : null,
    signature: null,
  };
}

/** A `receipts` row as the drivers return it (shared/db/connect.ts). */
interface ReceiptRow {
  id: string;
  parent_id: string | null;
  mandate_id: string | null;
  sub_mandate_id: string | null;
  caller: string | null;
  agent: string | null;
  status: ReceiptStatus;
  error_code: string | null;
  /** jsonb: string[] */
  reasons: unknown;
  worst_case: DbBigInt | null;
  currency: string | null;
  payer: string | null;
  billed: boolean;
  cost_own: DbBigInt;
  cost_downstream: DbBigInt;
  cost_total: DbBigInt;
  /** jsonb: Array<{ to, amount }>, amounts as decimal strings */
  splits: unknown;
  approval_id: string | null;
  duration_ms: number | null;
  requester: string | null;
  /** jsonb: ReceiptPayment; null unless the call was paid from outside. */
  payment: unknown;
  /** jsonb: StreamRecord; null unless the call streamed or asked. */
  stream?: unknown;
  signature: string | null;
  created_at: Date;
}

/** A stored receipt, read from its row once: amounts as bigint, its time as a Date. */
interface StoredReceipt {
  id: string;
  parentId: string | null;
  mandateId: string | null;
  subMandateId: string | null;
  caller: string | null;
  agent: string | null;
  status: ReceiptStatus;
  errorCode: string | null;
  reasons: string[];
  worstCase: bigint | null;
  currency: string | null;
  payer: string | null;
  billed: boolean;
  costOwn: bigint;
  costDownstream: bigint;
  costTotal: bigint;
  splits: Array<{ to: string; amount: string }>;
  approvalId: string | null;
  durationMs: number | null;
  requester: string | null;
  payment: ReceiptPayment | null;
  stream: StreamRecord | null;
  signature: string | null;
  createdAt: Date;
}

function receiptFromRow(row: ReceiptRow): StoredReceipt {
  return {
    id: String(row.id),
    parentId: row.parent_id ?? null,
    mandateId: row.mandate_id ?? null,
    subMandateId: row.sub_mandate_id ?? null,
    caller: row.caller ?? null,
    agent: row.agent ?? null,
    status: row.status,
    errorCode: row.error_code ?? null,
    reasons: fromJsonb(row.reasons) as string[],
    worstCase: row.worst_case === null || row.worst_case === undefined ? null : toBigInt(row.worst_case),
    currency: row.currency ?? null,
    payer: row.payer ?? null,
    billed: Boolean(row.billed),
    costOwn: toBigInt(row.cost_own),
    costDownstream: toBigInt(row.cost_downstream),
    costTotal: toBigInt(row.cost_total),
    splits: fromJsonb(row.splits) as Array<{ to: string; amount: string }>,
    approvalId: row.approval_id ?? null,
    durationMs: row.duration_ms === null || row.duration_ms === undefined ? null : Number(row.duration_ms),
    requester: row.requester ?? null,
    payment: row.payment === null || row.payment === undefined ? null : (fromJsonb(row.payment) as ReceiptPayment),
    stream: row.stream === null || row.stream === undefined ? null : (fromJsonb(row.stream) as StreamRecord),
    signature: row.signature ?? null,
    createdAt: new Date(row.created_at),
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
  /** How a call paid from outside was paid (docs/payments.md); absent otherwise. */
  payment?: ReceiptPayment;
  /** A call that streamed or asked (docs/lifecycle.md): the chunks and units it delivered; absent otherwise. */
  delivered?: StreamRecord['delivered'];
  /** How a call that streamed or asked ended: completed, budget, cancelled, disconnected, no_answer, error, timeout. */
  ended_by?: StreamRecord['ended_by'];
  /**
   * The detached JWS over the receipt's signed form (shared/receipts/signing.ts: every field but this one and
   * `children`); null for a receipt written before receipts were signed.
   */
  signature: string | null;
}

function view(r: StoredReceipt): ReceiptView {
  return {
    id: r.id,
    parent: r.parentId,
    mandate: r.mandateId,
    caller: r.caller,
    agent: r.agent,
    status: r.status,
    ...(r.errorCode ? { error: r.errorCode } : {}),
    reasons: r.reasons,
    worst_case: r.worstCase === null ? null : formatAmount(r.worstCase),
    currency: r.currency,
    payer: r.payer,
    sub_mandate: r.subMandateId,
    billed: r.billed,
    cost: { own: formatAmount(r.costOwn), downstream: formatAmount(r.costDownstream), total: formatAmount(r.costTotal) },
    splits: r.splits,
    approval: r.approvalId,
    children: [],
    duration_ms: r.durationMs,
    created_at: r.createdAt.toISOString(),
    ...(r.payment ? { payment: r.payment } : {}),
    ...(r.stream ? { delivered: r.stream.delivered, ended_by: r.stream.ended_by } : {}),
    signature: r.signature,
  };
}

/**
 * The receipt, without children, that these values make once inserted at `createdAt` (the inserting transaction's
 * `now()`, the column's default): exactly what `loadReceiptTree` would read back, without reading it — the settler
 * carries it in its `calls-done` notice (shared/calls/wire.ts).
 */
export function insertedReceiptView(values: ReceiptValues, createdAt: Date): ReceiptView {
  const { entry_id: _entry, ...columns } = values;
  return view(receiptFromRow({ ...columns, created_at: createdAt }));
}

/**
 * What a failed call's answer says, in one wording for REST and MCP: the code, the gateway's own detail when it has
 * one (runtime_unavailable: which endpoint and how, failureDetail), and whether it was charged.
 */
export function describeFailure(receipt: Pick<ReceiptView, 'error' | 'billed'>, detail?: string): { code: string; message: string } {
  const code = receipt.error ?? 'agent_error';
  const money = receipt.billed ? 'billed, as its manifest declares for this error' : 'nothing was charged';
  return { code, message: `the agent failed: ${code}${detail ? ` — ${detail}` : ''}; ${money}` };
}

/** A runtime_unavailable call's detail (calls.outcome.detail, written by the runner): which endpoint failed, and how. */
export async function failureDetail(db: Queryable, receipt: Pick<ReceiptView, 'id' | 'error'>): Promise<string | undefined> {
  if (receipt.error !== 'runtime_unavailable') return undefined;
  const row = (await db('calls').where({ id: receipt.id }).first(db.raw(`outcome->>'detail' AS detail`))) as { detail?: unknown } | undefined;
  return typeof row?.detail === 'string' ? row.detail : undefined;
}

/**
 * Whose a receipt is, for who may read it (services/api/principal.ts `receiptScopeOf`): its mandate's; a receipt with
 * no mandate, its requester's (the account whose key sent the request), or — with neither — the operator's alone.
 */
export interface ReceiptOwner {
  mandate: string | null;
  requester: string | null;
}

/** A receipt with its whole tree of children, or null. */
export async function loadReceiptTree(db: Queryable, id: string): Promise<ReceiptView | null> {
  return (await loadOwnedReceiptTree(db, id))?.receipt ?? null;
}

/** A receipt's tree and whose it is (`ReceiptOwner`), from one read of its row; null when there is none. */
export async function loadOwnedReceiptTree(db: Queryable, id: string): Promise<{ receipt: ReceiptView; owner: ReceiptOwner } | null> {
  const row: ReceiptRow | undefined = await db('receipts').where({ id }).first();
  if (!row) return null;
  const root = receiptFromRow(row);
  const top = view(root);
  // Only a call that ran under a sub-mandate can have children.
  let level = root.subMandateId ? [top] : [];
  // Breadth-first, one query per level: trees are shallow (delegation depth ≤ 8).
  for (let depth = 0; depth < 10 && level.length; depth++) {
    const byId = new Map(level.map((r) => [r.id, r]));
    const rows: ReceiptRow[] = await db('receipts')
      .whereIn('parent_id', [...byId.keys()])
      .orderBy([{ column: 'created_at' }, { column: 'id' }]);
    const next: ReceiptView[] = [];
    for (const row of rows) {
      const child = view(receiptFromRow(row));
      byId.get(child.parent!)!.children.push(child);
      next.push(child);
    }
    level = next;
  }
  return { receipt: top, owner: { mandate: root.mandateId, requester: root.requester } };
}

/**
 * Whose receipts a principal lists (services/api/principal.ts `receiptScopeOf`, which reads one by id by the same
 * rule): a human's, an agent key's mandate's; no field, every receipt (the operator).
 */
export interface ReceiptScope {
  /**
   * A human's: those of the mandates whose root this account issued (ids `<issuer>/…`), and those with no mandate
   * whose request this account sent (`requester`).
   */
  issuer?: string;
  /** One mandate's. */
  mandate?: string;
}

/** What a caller asks for, within its scope; every field narrows. */
export interface ReceiptFilter {
  mandate?: string;
  /** `created_at >= since`: a timestamp as Postgres reads it (shared/core/timestamps.ts `Instant.iso`). */
  since?: string;
  /** `created_at < until`. */
  until?: string;
  status?: ReceiptStatus;
  /** `ns/name`: every version (and what was asked for under that id); with `version`, exactly `ns/name@version`. */
  agent?: { id: string; version?: string };
}

export const RECEIPT_STATUSES: readonly ReceiptStatus[] = ['succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval'];

type Query = ReturnType<Queryable>;

// Columns are written `receipts.x`: the export's query also reads the table again (a receipt's children).
function inScope(q: Query, scope: ReceiptScope): Query {
  if (scope.mandate !== undefined) q.where('receipts.mandate_id', scope.mandate);
  const issuer = scope.issuer;
  if (issuer !== undefined) {
    q.where((own) =>
      own
        .where('receipts.mandate_id', 'like', issuerMandatesLike(issuer))
        .orWhere((asked) => asked.whereNull('receipts.mandate_id').where('receipts.requester', issuer)),
    );
  }
  return q;
}

function matching(q: Query, filter: ReceiptFilter): Query {
  const c = (column: string) => `receipts.${column}`;
  if (filter.mandate !== undefined) q.where(c('mandate_id'), filter.mandate);
  if (filter.since !== undefined) q.where(c('created_at'), '>=', filter.since);
  if (filter.until !== undefined) q.where(c('created_at'), '<', filter.until);
  if (filter.status !== undefined) q.where(c('status'), filter.status);
  const agent = filter.agent;
  if (agent?.version !== undefined) q.where(c('agent'), `${agent.id}@${agent.version}`);
  // Agent ids hold no LIKE wildcards (shared/core/identifiers.ts): `a-z 0-9 -` and one '/'.
  else if (agent) q.where((w) => w.where(c('agent'), agent.id).orWhere(c('agent'), 'like', `${agent.id}@%`));
  return q;
}

/**
 * Newest first, after the cursor receipt: compared in SQL at full precision (microseconds), since a settle batch
 * writes many receipts at one `now()` and a JavaScript Date keeps only milliseconds.
 */
function after(q: Query, cursorId: string | undefined): Query {
  if (cursorId !== undefined) {
    q.whereRaw('(receipts.created_at, receipts.id) < (SELECT c.created_at, c.id FROM receipts c WHERE c.id = ?)', [cursorId]);
  }
  return q.orderBy([
    { column: 'receipts.created_at', order: 'desc' },
    { column: 'receipts.id', order: 'desc' },
  ]);
}

/** Is `id` a top-level receipt in the scope (a page's `next`)? */
async function isCursor(db: Queryable, scope: ReceiptScope, id: string): Promise<boolean> {
  return (await inScope(db('receipts').whereNull('receipts.parent_id').where('receipts.id', id), scope).first('id')) !== undefined;
}

function refuseCursor(): never {
  throw new HolonError('invalid_request', 'before must be the `next` of a previous page', [
    { path: 'query.before', message: 'is not the `next` of a page of your receipts' },
  ]);
}

export interface ReceiptPage {
  receipts: ReceiptView[];
  /** Pass as `before` to get the next (older) page; absent on the last page. */
  next?: string;
}

/**
 * Top-level receipts as trees, newest first, paged by a cursor (the last id of the previous page, `next`). A cursor
 * that is not a top-level receipt in the scope is refused (400), so it tells nothing of anyone else's receipts.
 */
export async function listReceipts(
  db: Queryable,
  options: { scope: ReceiptScope; filter?: ReceiptFilter; limit: number; before?: string },
): Promise<ReceiptPage> {
  if (options.before !== undefined && !(await isCursor(db, options.scope, options.before))) refuseCursor();
  const q = matching(inScope(db('receipts').whereNull('receipts.parent_id'), options.scope), options.filter ?? {});
  const rows = await after(q, options.before)
    .limit(options.limit + 1)
    .select('id');
  const page = rows.slice(0, options.limit);
  const receipts: ReceiptView[] = [];
  for (const row of page) receipts.push((await loadReceiptTree(db, String(row.id)))!);
  return { receipts, ...(rows.length > options.limit ? { next: String(page[page.length - 1]!.id) } : {}) };
}

/** One top-level receipt, flat, with the number of its direct children: a row of the CSV export. */
export interface ReceiptLine {
  id: string;
  createdAt: string;
  mandate: string | null;
  agent: string | null;
  status: ReceiptStatus;
  error: string | null;
  billed: boolean;
  costOwn: bigint;
  costDownstream: bigint;
  costTotal: bigint;
  currency: string | null;
  worstCase: bigint | null;
  durationMs: number | null;
  approval: string | null;
  children: number;
}

/**
 * Every matching top-level receipt, newest first, read `pageSize` at a time (keyset paging: a big month is never
 * loaded at once). Each page is one query, after the last row of the previous one; the pages are not one snapshot,
 * but receipts are never changed or deleted, so no receipt is lost or listed twice: one committed while the export
 * runs is listed if the reading has not passed its place yet (its `created_at` is its transaction's start).
 */
export async function* eachReceiptLine(
  db: Queryable,
  options: { scope: ReceiptScope; filter?: ReceiptFilter; pageSize?: number },
): AsyncGenerator<ReceiptLine[]> {
  const pageSize = options.pageSize ?? 500;
  let cursor: string | undefined;
  for (;;) {
    const q = matching(inScope(db('receipts').whereNull('receipts.parent_id'), options.scope), options.filter ?? {});
    const rows: Array<ReceiptRow & { children: DbBigInt }> = await after(q, cursor)
      .limit(pageSize)
      .select('receipts.*', db.raw('(SELECT count(*) FROM receipts AS child WHERE child.parent_id = receipts.id) AS children'));
    if (rows.length === 0) return;
    yield rows.map((row) => {
      const r = receiptFromRow(row);
      return {
        id: r.id,
        createdAt: r.createdAt.toISOString(),
        mandate: r.mandateId,
        agent: r.agent,
        status: r.status,
        error: r.errorCode,
        billed: r.billed,
        costOwn: r.costOwn,
        costDownstream: r.costDownstream,
        costTotal: r.costTotal,
        currency: r.currency,
        worstCase: r.worstCase,
        durationMs: r.durationMs,
        approval: r.approvalId,
        children: Number(row.children),
      };
    });
    if (rows.length < pageSize) return;
    cursor = String(rows[rows.length - 1]!.id);
  }
}

/**
 * The logged receipts in leaf order, each as the API shows it (without children), `pageSize` at a time: what the
 * log audit (shared/receipts/log-audit.ts) rebuilds the tree from.
 */
export async function* eachLoggedReceipt(db: Queryable, pageSize = 1000): AsyncGenerator<Array<{ index: number; receipt: ReceiptView }>> {
  let from = 0;
  for (;;) {
    const rows = (await db('receipt_log_leaves as l')
      .join('receipts', 'receipts.id', 'l.receipt_id')
      .where('l.idx', '>=', from)
      .orderBy('l.idx')
      .limit(pageSize)
      .select('receipts.*', 'l.idx')) as Array<ReceiptRow & { idx: string | number }>;
    if (rows.length === 0) return;
    yield rows.map((row) => ({ index: Number(row.idx), receipt: view(receiptFromRow(row)) }));
    if (rows.length < pageSize) return;
    from = Number(rows[rows.length - 1]!.idx) + 1;
  }
}
