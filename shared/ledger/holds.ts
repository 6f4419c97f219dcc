/**
 * Holds: money set aside on an account for a call that has not settled yet (a pending transfer).
 * A hold is placed once and resolved exactly once: `settled` (its call was charged, possibly less than held)
 * or `released` (nothing charged). Holds are not journaled; the account's cached `held` tracks them.
 */
import type { DbBigInt, Queryable, Tx } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import type { Reservation } from './money-functions.js';

export interface ResolvedHold {
  id: string;
  account: string;
  currency: string;
  amount: bigint;
  mandateId: string | null;
  /** The hold this one was cut from (a passthrough child's), if any. */
  parentHoldId: string | null;
  /** false when the hold had already been resolved (a retried settlement): nothing changed. */
  changed: boolean;
}

/**
 * Resolve a live hold exactly once: mark it settled or released and take it off the account's `held`.
 * Resolving an already resolved hold changes nothing and says so.
 * A transaction that also posts an entry must first lock every balance row it will touch with
 * `lockBalances` (one sorted pass), so the implicit row lock taken here never breaks the lock order (docs/ledger.md, "Lock order").
 */
export async function resolveHold(trx: Tx, id: string, outcome: 'settled' | 'released', options: { adjustBalance?: boolean } = {}): Promise<ResolvedHold> {
  const hold = (await resolveHolds(trx, [{ id, outcome }])).get(id)!;
  // With adjustBalance: false the caller takes the amount off the account's `held` itself, later in its
  // transaction, together with its other balance changes (one locked pass over the hot rows).
  if (hold.changed && options.adjustBalance !== false) {
    await trx.raw(`UPDATE account_balances SET held = held - ?, version = version + 1 WHERE account = ? AND currency = ?`, [
      hold.amount.toString(),
      hold.account,
      hold.currency,
    ]);
  }
  return hold;
}

/** The columns of a `holds` row a resolved hold is read from (shared/db/connect.ts: how the drivers return them). */
interface HoldRow {
  id: string;
  account: string;
  currency: string;
  amount: DbBigInt;
  mandate_id: string | null;
  parent_hold_id: string | null;
}

const holdFromRow = (row: HoldRow, changed: boolean): ResolvedHold => ({
  id: row.id,
  account: row.account,
  currency: row.currency,
  amount: toBigInt(row.amount),
  mandateId: row.mandate_id ?? null,
  parentHoldId: row.parent_hold_id ?? null,
  changed,
});

/**
 * Resolve many live holds in one statement (a settlement batch), each exactly once, without touching the
 * accounts' `held` (the caller does, with its other balance changes). A hold resolved before is answered as it
 * is, `changed: false`; an unknown one is an error.
 */
export async function resolveHolds(trx: Tx, holds: ReadonlyArray<{ id: string; outcome: 'settled' | 'released' }>): Promise<Map<string, ResolvedHold>> {
  const out = new Map<string, ResolvedHold>();
  if (holds.length === 0) return out;
  const r = await trx.raw<{ rows: HoldRow[] }>(
    `UPDATE holds h SET status = v.outcome, resolved_at = now()
       FROM unnest(?::text[], ?::text[]) AS v(id, outcome)
      WHERE h.id = v.id AND h.status = 'held'
     RETURNING h.id, h.account, h.currency, h.amount, h.mandate_id, h.parent_hold_id`,
    [holds.map((h) => h.id), holds.map((h) => h.outcome)],
  );
  for (const row of r.rows) out.set(row.id, holdFromRow(row, true));
  const missing = holds.filter((h) => !out.has(h.id)).map((h) => h.id);
  if (missing.length) {
    const rows: HoldRow[] = await trx('holds').whereIn('id', missing).select('id', 'account', 'currency', 'amount', 'mandate_id', 'parent_hold_id');
    for (const row of rows) out.set(row.id, holdFromRow(row, false));
    const unknown = missing.find((id) => !out.has(id));
    if (unknown !== undefined) throw new HolonError('unknown_hold', `there is no hold ${unknown}`);
  }
  return out;
}

const knownBalanceRows = new WeakMap<object, Set<string>>();

/**
 * Make sure the balance row of (account, currency) exists, remembered per database handle (rows are never
 * deleted): a reservation then touches only existing rows, each with one conditional UPDATE.
 */
export async function ensureBalanceRow(db: Queryable, account: string, currency: string): Promise<void> {
  let set = knownBalanceRows.get(db);
  if (!set) {
    set = new Set();
    knownBalanceRows.set(db, set);
  }
  const key = `${account}\u0000${currency}`;
  if (set.has(key)) return;
  const r = await db.raw<{ rows: unknown[] }>(
    `INSERT INTO account_balances (account, currency, overdraft)
     SELECT handle, ?, kind = 'external' FROM accounts WHERE handle = ?
     ON CONFLICT (account, currency) DO NOTHING RETURNING account`,
    [currency, account],
  );
  if (r.rows.length === 0 && !(await db('account_balances').where({ account, currency }).first('account'))) {
    throw new HolonError('unknown_account', `there is no account ${account}`);
  }
  set.add(key);
}

export type { Reservation } from './money-functions.js';

/**
 * Reserve a passthrough child's worst case out of its parent's hold (gateway.md §3: the original payer pays
 * out of the hold already reserved for the orchestrator). The sub-mandate's budget first, then the parent
 * hold: both conditional UPDATEs. The account's `held` does not change: the money was already held.
 */
export async function reserveFromParentHold(
  trx: Tx,
  r: { holdId: string; callId: string; mandateId: string; parentHoldId: string; amount: bigint },
): Promise<Reservation | 'parent_short'> {
  const amount = r.amount.toString();
  const budget = await trx.raw<{ rows: unknown[] }>(`UPDATE mandates SET reserved = reserved + ? WHERE id = ? AND total - spent - reserved >= ? RETURNING id`, [
    amount,
    r.mandateId,
    amount,
  ]);
  if (budget.rows.length === 0) return 'budget_short';
  const cut = await trx.raw<{ rows: unknown[] }>(
    `WITH cut AS (
       UPDATE holds SET amount = amount - ? WHERE id = ? AND status = 'held' AND amount >= ? RETURNING account, currency)
     INSERT INTO holds (id, call_id, mandate_id, account, currency, amount, parent_hold_id)
     SELECT ?, ?, ?, account, currency, ?, ? FROM cut RETURNING id`,
    [amount, r.parentHoldId, amount, r.holdId, r.callId, r.mandateId, amount, r.parentHoldId],
  );
  return cut.rows.length === 0 ? 'parent_short' : 'reserved';
}
