/**
 * The SQL functions of budget leases (shared/calls/sql/holon_lease_*.sql, holon_admit_leased.sql,
 * holon_admit_tail.sql; docs/ledger.md, "Budget leases"), each in one round trip, named fields here and positional
 * arguments only at the SQL boundary. Only the lease manager (manager.ts) and the sweeper call them.
 */
import type { Db, DbBigInt, Queryable } from '../../db/connect.js';
import { toBigInt } from '../../db/connect.js';
import type { AdmittedCall, Reservation } from '../money-functions.js';

/** A lease as its row says after a take: what it reserved, and what its calls' live holds carved of it. */
export interface LeaseFigures {
  amount: bigint;
  carved: bigint;
}

/** What `holon_lease_take` is asked: the lease (new or to top up), and how much it may take. */
export interface LeaseTake {
  id: string;
  mandateId: string;
  account: string;
  currency: string;
  owner: string;
  /** The uncarved part the lease is brought up to, at most. */
  slice: bigint;
  /** At most 1/divisor of what the mandate and the balance have left. */
  divisor: number;
  /** Less than this is not taken. */
  min: bigint;
  expiresAt: Date;
}

/** Take (or top up) a lease: the lease as it is now, or null when it is closed or cannot be taken (nothing taken). */
export async function takeLease(db: Queryable, t: LeaseTake): Promise<LeaseFigures | null> {
  const res = await db.raw<{ rows: Array<{ lease_amount: DbBigInt; lease_carved: DbBigInt }> }>(
    `SELECT lease_amount, lease_carved FROM holon_lease_take(?, ?, ?, ?, ?, ?::bigint, ?::integer, ?::bigint, ?::timestamptz)`,
    [t.id, t.mandateId, t.account, t.currency, t.owner, t.slice.toString(), t.divisor, t.min.toString(), t.expiresAt.toISOString()],
  );
  const row = res.rows[0];
  return row ? { amount: toBigInt(row.lease_amount), carved: toBigInt(row.lease_carved) } : null;
}

/** A call admitted from a lease: the row `holon_admit_one` takes, and the lease it is carved from. */
export type LeasedCall = AdmittedCall & { lease_id: string };

/** What carving a call found: reserved, or its lease could not carve it (nothing written). */
export type Carve = 'reserved' | 'lease_short';

/** Carve calls out of their leases, in one statement, in arrival order (`holon_admit_leased`). */
export async function admitLeased(db: Queryable, calls: readonly LeasedCall[]): Promise<Carve[]> {
  const res = await db.raw<{ rows: Array<{ outcome: Carve }> }>(
    `SELECT t.outcome FROM unnest(holon_admit_leased(?::jsonb)) WITH ORDINALITY AS t(outcome, n) ORDER BY t.n`,
    [JSON.stringify(calls)],
  );
  return res.rows.map((r) => r.outcome);
}

/** The per-call path that first takes back what leases hold uncarved (`holon_admit_tail`); `retry`: send it again. */
export async function admitTail(db: Queryable, call: AdmittedCall): Promise<Reservation | 'retry'> {
  const res = await db.raw<{ rows: Array<{ outcome: Reservation | 'retry' }> }>(`SELECT holon_admit_tail(?::jsonb) AS outcome`, [JSON.stringify(call)]);
  return res.rows[0]!.outcome;
}

/** Return leases (`holon_lease_return`): their uncarved parts go back, they close. Answers what went back. */
export async function returnLeases(db: Queryable, ids: readonly string[]): Promise<bigint> {
  if (ids.length === 0) return 0n;
  const res = await db.raw<{ rows: Array<{ back: DbBigInt }> }>(`SELECT holon_lease_return(?::text[], NULL) AS back`, [[...ids]]);
  return toBigInt(res.rows[0]!.back);
}

/** Return every open lease whose expiry passed before `before` (the sweeper: their owners stopped renewing them). */
export async function expireLeases(db: Db, before: Date): Promise<bigint> {
  const res = await db.raw<{ rows: Array<{ back: DbBigInt }> }>(`SELECT holon_lease_return(NULL, ?::timestamptz) AS back`, [before.toISOString()]);
  return toBigInt(res.rows[0]!.back);
}

/** Push the expiry of open leases to `until` (their owner is alive), locking them in byte order of their ids. */
export async function renewLeases(db: Queryable, ids: readonly string[], until: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const res = await db.raw<{ rows: Array<{ id: string }> }>(
    `UPDATE budget_leases l SET expires_at = ? FROM (
       SELECT id FROM budget_leases WHERE id = ANY(?::text[]) AND closed_at IS NULL ORDER BY id COLLATE "C" FOR UPDATE) o
      WHERE l.id = o.id RETURNING l.id`,
    [until.toISOString(), [...ids]],
  );
  return res.rows.map((r) => r.id);
}

/** A lease's row as it is: null when it is closed (or unknown). */
export async function readOpenLease(db: Queryable, id: string): Promise<LeaseFigures | null> {
  const row = (await db('budget_leases').where({ id }).whereNull('closed_at').first('amount', 'carved')) as { amount: DbBigInt; carved: DbBigInt } | undefined;
  return row ? { amount: toBigInt(row.amount), carved: toBigInt(row.carved) } : null;
}
