/**
 * Holds: money set aside on an account for a call that has not settled yet (a pending transfer).
 * A hold is placed once and resolved exactly once: `settled` (its call was charged, possibly less than held)
 * or `released` (nothing charged). Holds are not journaled; the account's cached `held` tracks them.
 */
import type { Queryable, Tx } from '../db/connect.js';
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
  const r = await trx.raw<{ rows: Array<Record<string, unknown>> }>(
    `UPDATE holds SET status = ?, resolved_at = now() WHERE id = ? AND status = 'held'
     RETURNING account, currency, amount, mandate_id, parent_hold_id`,
    [outcome, id],
  );
  const row = r.rows[0];
  if (!row) {
    const existing = await trx('holds').where({ id }).first('account', 'currency', 'amount', 'mandate_id', 'parent_hold_id');
    if (!existing) throw new HolonError('unknown_hold', 404, `there is no hold ${id}`);
    return {
      id,
      account: existing.account,
      currency: existing.currency,
      amount: toBigInt(existing.amount),
      mandateId: existing.mandate_id,
      parentHoldId: existing.parent_hold_id ?? null,
      changed: false,
    };
  }
  const hold = {
    id,
    account: String(row.account),
    currency: String(row.currency),
    amount: toBigInt(row.amount),
    mandateId: (row.mandate_id as string | null) ?? null,
    parentHoldId: (row.parent_hold_id as string | null) ?? null,
    changed: true,
  };
  // With adjustBalance: false the caller takes the amount off the account's `held` itself, later in its
  // transaction, together with its other balance changes (one locked pass over the hot rows).
  if (options.adjustBalance !== false) {
    await trx.raw(`UPDATE account_balances SET held = held - ?, version = version + 1 WHERE account = ? AND currency = ?`, [
      hold.amount.toString(),
      hold.account,
      hold.currency,
    ]);
  }
  return hold;
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
    throw new HolonError('unknown_account', 404, `there is no account ${account}`);
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
