/**
 * Placing a hold by hand, for the ledger's own tests: production reserves through `reserveHold`
 * (shared/ledger/holds.ts), which also charges a mandate; these tests exercise holds on accounts alone.
 */
import type { Tx } from '../../shared/db/connect.js';
import { HolonError } from '../../shared/core/errors.js';
import { formatAmount } from '../../shared/core/money.js';
import { lockBalances } from '../../shared/ledger/entries.js';

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
  if (hold.amount < 0n) throw new HolonError('invalid_request', 'a hold cannot be negative');
  const rows = await lockBalances(trx, [{ account: hold.account, currency: hold.currency }]);
  const row = rows.values().next().value!;
  const available = row.balance - row.held;
  if (!row.overdraft && hold.amount > available) {
    throw new HolonError(
      'insufficient_funds',
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
