/**
 * Mandates in Postgres: the wire document plus the counters the gateway keeps (`spent`, `reserved`).
 */
import { ensureAccount } from '../ledger/accounts.js';
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { mandateToDoc, validateMandate } from '../core/mandate/validate.js';
import type { Mandate } from '../core/mandate/types.js';
import { formatAmount } from '../core/money.js';
import { canonicalJson } from '../core/canonical-json.js';
import type { SigningKey } from '../signing/keys.js';
import { signMandate, type MandateStatement } from './signing.js';

/** A mandate as admission knows it: its document only (`knownMandate`); the counters stay in the row, checked by SQL. */
export interface KnownMandate {
  mandate: Mandate;
}

export interface StoredMandate extends KnownMandate {
  spent: bigint;
  reserved: bigint;
  remaining: bigint;
  /** What the gateway signed when it stored the mandate (shared/mandates/signing.ts), and its JWS; null for one stored before mandates were signed. */
  statement: MandateStatement | null;
  signature: string | null;
}

/** Parsed mandate documents by their stored text: documents never change, so each is validated once. */
const parsed = new Map<string, Mandate>();
const PARSED_MAX = 2000;

function parseStored(id: string, doc: unknown): Mandate {
  const text = typeof doc === 'string' ? doc : JSON.stringify(doc);
  const hit = parsed.get(text);
  if (hit) return hit;
  const v = validateMandate(JSON.parse(text));
  if (!v.ok) throw new HolonError('gateway_error', `stored mandate ${id} no longer validates`);
  if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, v.mandate);
  return v.mandate;
}

/** The columns of a `mandates` row a stored mandate is read from (connect.ts: how the drivers return them). */
interface MandateRow {
  id: string;
  /** jsonb: the wire document, parsed or as text. */
  doc: unknown;
  revoked_at: Date | null;
  total: DbBigInt;
  spent: DbBigInt;
  reserved: DbBigInt;
  /** The signed statement, as its canonical JSON text. */
  statement: string | null;
  signature: string | null;
  /** What open budget leases hold of `reserved` uncarved (`withLeased`); absent: none read. */
  leased?: DbBigInt | null;
}

/** The mandate a row holds: its document, revoked when the row says so (revocation lives on the row, not in the document). */
function documentOf(row: Pick<MandateRow, 'id' | 'doc' | 'revoked_at'>): Mandate {
  const m = parseStored(String(row.id), row.doc);
  return row.revoked_at != null && !m.revoked ? { ...m, revoked: true } : m;
}

/** A stored mandate from its row, e.g. joined into another query. */
function mandateFromRow(row: MandateRow): StoredMandate {
  const mandate = documentOf(row);
  const total = toBigInt(row.total);
  const spent = toBigInt(row.spent);
  // Only calls' holds are reserved: what a lease holds uncarved is still there for any call (docs/ledger.md, "Budget leases").
  const reserved = toBigInt(row.reserved) - toBigInt(row.leased ?? 0);
  const statement = row.statement ? (JSON.parse(row.statement) as MandateStatement) : null;
  return { mandate, spent, reserved, remaining: total - spent - reserved, statement, signature: row.signature ?? null };
}

/** The columns of a mandate's row, and what its open budget leases hold uncarved. */
const withLeased = (db: Queryable) =>
  [
    'mandates.*',
    db.raw(`(SELECT coalesce(sum(l.amount - l.carved), 0) FROM budget_leases l WHERE l.mandate_id = mandates.id AND l.closed_at IS NULL) AS leased`),
  ] as const;

export async function loadMandate(db: Queryable, id: string): Promise<StoredMandate | null> {
  const row: MandateRow | undefined = await db('mandates')
    .where({ id })
    .first(...withLeased(db));
  return row ? mandateFromRow(row) : null;
}

/**
 * Mandate documents by id, per database handle, as admission and the runner read them (docs/PERFORMANCE.md): a
 * stored document never changes, so it is read once per process, not once per call. Only the document is kept —
 * never the counters (`spent`, `reserved`: the reservation's SQL reads and checks them under its row lock) — and
 * revocation, the one thing a row may change, is checked again by that SQL too (`holon_admit_one`, `holon_reserve`: shared/calls/sql/),
 * which answers `revoked`; the caller then forgets the entry (`forgetMandate`). Unknown ids are never kept: a
 * mandate stored by another process is found at its first use here.
 */
const known = new WeakMap<object, Map<string, Mandate>>();
const KNOWN_MAX = 10_000;

export async function knownMandate(db: Queryable, id: string): Promise<Mandate | null> {
  let byId = known.get(db);
  const hit = byId?.get(id);
  if (hit) return hit;
  const row: Pick<MandateRow, 'id' | 'doc' | 'revoked_at'> | undefined = await db('mandates').where({ id }).first('id', 'doc', 'revoked_at');
  if (!row) return null;
  const mandate = documentOf(row);
  if (!byId) {
    byId = new Map();
    known.set(db, byId);
  }
  if (byId.size >= KNOWN_MAX) byId.delete(byId.keys().next().value!);
  byId.set(id, mandate);
  return mandate;
}

/** Drop a mandate from `knownMandate`'s cache (its row said it is revoked). */
export function forgetMandate(db: Queryable, id: string): void {
  known.get(db)?.delete(id);
}

/** Root mandates, oldest first, in one query: every one, or those an issuer issued. */
export async function listRootMandates(db: Queryable, options: { issuer?: string; limit: number }): Promise<StoredMandate[]> {
  const q = db('mandates')
    .select(...withLeased(db))
    .where({ depth: 0 })
    .orderBy('created_at', 'asc')
    .limit(options.limit);
  if (options.issuer !== undefined) q.where({ issuer: options.issuer });
  const rows: MandateRow[] = await q;
  return rows.map(mandateFromRow);
}

/**
 * Store a mandate, signed (shared/mandates/signing.ts: its statement names its parent's). The same document stored
 * twice is fine (`created: false`, the first signature stays); another document under an existing id is a conflict.
 * The issuer's account is created if needed.
 */
export async function saveMandate(db: Queryable, mandate: Mandate, key: SigningKey): Promise<{ created: boolean }> {
  const doc = mandateToDoc(mandate);
  // A root mandate's issuer is the account that pays; a sub-mandate's issuer is an agent acting for it.
  if (mandate.depth === 0) await ensureAccount(db, mandate.issuer);
  const parentRow = mandate.parent
    ? ((await db('mandates').where({ id: mandate.parent }).first('statement')) as { statement: string | null } | undefined)
    : undefined;
  const parent = mandate.parent ? { id: mandate.parent, statement: parentRow?.statement ? (JSON.parse(parentRow.statement) as MandateStatement) : null } : null;
  const signed = await signMandate(key, { doc, issuer: mandate.issuer, at: new Date(), parent });
  const inserted = await db.raw<{ rows: unknown[] }>(
    `INSERT INTO mandates (id, issuer, grantee, parent_id, depth, doc, currency, total, expires_at, statement, signature)
     VALUES (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id`,
    [
      mandate.id,
      mandate.issuer,
      mandate.grantee,
      mandate.parent ?? null,
      mandate.depth,
      JSON.stringify(doc),
      mandate.budget.currency,
      mandate.budget.total.toString(),
      mandate.expiresAt === undefined ? null : new Date(mandate.expiresAt).toISOString(),
      canonicalJson(signed.statement),
      signed.signature,
    ],
  );
  if (inserted.rows.length) return { created: true };
  const existing = await db('mandates').where({ id: mandate.id }).first('doc');
  const stored = typeof existing.doc === 'string' ? JSON.parse(existing.doc) : existing.doc;
  if (JSON.stringify(sortKeys(stored)) !== JSON.stringify(sortKeys(doc))) {
    throw new HolonError('mandate_exists', `mandate ${mandate.id} already exists with other terms`);
  }
  return { created: false };
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, x]) => [k, sortKeys(x)]),
    );
  }
  return v;
}

export function describeBudget(m: StoredMandate): string {
  const c = m.mandate.budget.currency;
  return `mandate ${m.mandate.id} has ${formatAmount(m.remaining)} ${c} left of its ${formatAmount(m.mandate.budget.total)} ${c} (spent ${formatAmount(m.spent)}, reserved ${formatAmount(m.reserved)})`;
}

/** The wire view of a stored mandate: its document, its budget (spent, reserved, remaining), its signed statement and signature. */
export function mandateView(m: StoredMandate): {
  mandate: ReturnType<typeof mandateToDoc>;
  budget: Record<string, string>;
  statement: MandateStatement | null;
  signature: string | null;
} {
  return {
    mandate: mandateToDoc(m.mandate),
    budget: {
      currency: m.mandate.budget.currency,
      total: formatAmount(m.mandate.budget.total),
      spent: formatAmount(m.spent),
      reserved: formatAmount(m.reserved),
      remaining: formatAmount(m.remaining),
    },
    statement: m.statement,
    signature: m.signature,
  };
}

/**
 * A LIKE pattern for every mandate id in an issuer's tree: a root mandate's id starts with `<issuer>/` and a
 * sub-mandate's with its root's. Handles hold no LIKE wildcards; any that slipped in are dropped, never matched.
 */
export function issuerMandatesLike(issuer: string): string {
  return `${issuer.replace(/[\\%_]/g, '')}/%`;
}
