/**
 * Holds: money set aside on an account for a call that has not settled yet (a pending transfer).
 * A hold is placed once and resolved exactly once: `settled` (its call was charged, possibly less than held)
 * or `released` (nothing charged). Holds are not journaled; the account's cached `held` tracks them.
 */
import type { Tx } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { HolonError } from '../errors.js';
import { formatAmount } from '../money.js';
import { lockBalances } from './entries.js';

export interface HoldInput {
  id: string;
  account: string;
  currency: string;
  amount: bigint;
  mandateId?: string;
  callId?: string;
}

/**
 * Place a hold inside the caller's transaction. The balance row is locked; the hold must fit
 * in `balance − held` (Postgres enforces the same with CHECK balance_covers_holds).
 */
export async function placeHold(trx: Tx, hold: HoldInput): Promise<void> {
  if (hold.amount < 0n) throw new HolonError('invalid_hold', 400, 'a hold cannot be negative');
  const rows = await lockBalances(trx, [{ account: hold.account, currency: hold.currency }]);
  const row = rows.values().next().value!;
  const available = row.balance - row.held;
  if (!row.overdraft && hold.amount > available) {
    throw new HolonError(
      'insufficient_funds',
      402,
      `account ${hold.account} has ${formatAmount(available)} ${hold.currency} available; the call's worst case is ${formatAmount(hold.amount)} ${hold.currency}`,
    );
  }
  await trx('holds').insert({
    id: hold.id,
    account: hold.account,
    currency: hold.currency,
    amount: hold.amount.toString(),
    mandate_id: hold.mandateId ?? null,
    call_id: hold.callId ?? null,
  });
  await trx.raw(`UPDATE account_balances SET held = held + ?, version = version + 1 WHERE account = ? AND currency = ?`, [
    hold.amount.toString(),
    hold.account,
    hold.currency,
  ]);
}

export interface ResolvedHold {
  id: string;
  account: string;
  currency: string;
  amount: bigint;
  mandateId: string | null;
  /** false when the hold had already been resolved (a retried settlement): nothing changed. */
  changed: boolean;
}

/**
 * Resolve a live hold exactly once: mark it settled or released and take it off the account's `held`.
 * Resolving an already resolved hold changes nothing and says so.
 * A transaction that also posts an entry must first lock every balance row it will touch with
 * `lockBalances` (one sorted pass), so the implicit row lock taken here never breaks the global lock order.
 */
export async function resolveHold(trx: Tx, id: string, outcome: 'settled' | 'released'): Promise<ResolvedHold> {
  const r = await trx.raw<{ rows: Array<Record<string, unknown>> }>(
    `UPDATE holds SET status = ?, resolved_at = now() WHERE id = ? AND status = 'held'
     RETURNING account, currency, amount, mandate_id`,
    [outcome, id],
  );
  const row = r.rows[0];
  if (!row) {
    const existing = await trx('holds').where({ id }).first('account', 'currency', 'amount', 'mandate_id');
    if (!existing) throw new HolonError('unknown_hold', 404, `there is no hold ${id}`);
    return {
      id,
      account: existing.account,
      currency: existing.currency,
      amount: toBigInt(existing.amount),
      mandateId: existing.mandate_id,
      changed: false,
    };
  }
  const hold = {
    id,
    account: String(row.account),
    currency: String(row.currency),
    amount: toBigInt(row.amount),
    mandateId: (row.mandate_id as string | null) ?? null,
    changed: true,
  };
  await trx.raw(`UPDATE account_balances SET held = held - ?, version = version + 1 WHERE account = ? AND currency = ?`, [
    hold.amount.toString(),
    hold.account,
    hold.currency,
  ]);
  return hold;
}
