/**
 * Holds: money set aside on an account for a call that has not settled yet — a pending transfer, in the words of
 * TigerBeetle's two-phase transfers. A hold is reserved once, then ended at most once:
 * - reserved: on the payer's balance (`reserveHold`; admission does the same in its own statement, `admitCall` in
 *   money-functions.ts), or cut from a parent call's hold (`reserveFromParentHold`, a passthrough child);
 * - posted: its call was charged, possibly less than was held (a partial post): the settlement moves what was
 *   charged and gives the rest back — to the payer's available balance, or into the parent hold;
 * - voided: nothing was charged; all of it goes back.
 * A hold has no timer of its own: its call has a deadline, and the sweeper closes a call long past it unbilled
 * (services/settler/sweeper.ts), so an expired hold is voided by that call's settlement.
 * Ending a hold again changes nothing and says how it ended (`already_resolved`): a retried settlement is a no-op.
 * The `holds` rows keep the schema's words: `held`, `settled` (posted), `released` (voided); only this file maps them.
 * Holds are not journaled; the account's cached `held` tracks them.
 */
import type { DbBigInt, Queryable, Tx } from '../db/connect.js';
import { namedStatement } from '../db/prepared.js';
import { toBigInt } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import type { Reservation } from './money-functions.js';

/** How a hold ended: its call charged (all or part of it), or nothing. */
export type HoldEnd = 'posted' | 'voided';

/** A hold's row. */
export interface Hold {
  id: string;
  account: string;
  currency: string;
  amount: bigint;
  mandateId: string | null;
  /** The hold this one was cut from (a passthrough child's), if any. */
  parentHoldId: string | null;
  /** The budget lease it was carved from (docs/ledger.md, "Budget leases"), if any. */
  leaseId: string | null;
}

/** What resolving a hold did: ended it now (`posted`, `voided`), or found it ended before, and how. */
export type HoldResolution = Hold & ({ kind: HoldEnd } | { kind: 'already_resolved'; as: HoldEnd });

/** The `holds.status` word of each end (the schema's words, kept). */
const STORED: Record<HoldEnd, 'settled' | 'released'> = { posted: 'settled', voided: 'released' };

function endOfStored(status: string, id: string): HoldEnd {
  if (status === STORED.posted) return 'posted';
  if (status === STORED.voided) return 'voided';
  throw new Error(`hold ${id} is still ${status} after its resolution`);
}

/** Whether this resolution ended the hold now (and so moves money), as opposed to finding it ended. */
export const endedNow = (r: HoldResolution): r is Hold & { kind: HoldEnd } => r.kind !== 'already_resolved';

/**
 * Reserve `amount` on the payer's balance inside the caller's transaction (`holon_reserve`,
 * shared/calls/sql/holon_reserve.sql): the mandate's budget, then the payer's balance, each taken and checked by one
 * conditional UPDATE, then the hold row. On `balance_short` the mandate was already charged: the caller must roll back.
 */
export async function reserveHold(
  trx: Tx,
  r: { mandateId: string; amount: bigint; account: string; currency: string; holdId: string; callId: string },
): Promise<Reservation> {
  const res = await trx.raw<{ rows: Array<{ outcome: Reservation }> }>(`SELECT holon_reserve(?, ?::bigint, ?, ?, ?, ?) AS outcome`, [
    r.mandateId,
    r.amount.toString(),
    r.account,
    r.currency,
    r.holdId,
    r.callId,
  ]);
  return res.rows[0]!.outcome;
}

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

/**
 * End one hold at most once: post or void it, and take it off the account's `held`.
 * A transaction that also posts an entry must first lock every balance row it will touch with
 * `lockBalances` (one sorted pass), so the implicit row lock taken here never breaks the lock order (docs/ledger.md, "Lock order").
 */
export async function resolveHold(trx: Tx, id: string, as: HoldEnd, options: { adjustBalance?: boolean } = {}): Promise<HoldResolution> {
  const hold = (await resolveHolds(trx, [{ id, as }])).get(id)!;
  // With adjustBalance: false the caller takes the amount off the account's `held` itself, later in its
  // transaction, together with its other balance changes (one locked pass over the hot rows).
  if (endedNow(hold) && options.adjustBalance !== false) {
    await trx.raw(`UPDATE account_balances SET held = held - ?, version = version + 1 WHERE account = ? AND currency = ?`, [
      hold.amount.toString(),
      hold.account,
      hold.currency,
    ]);
  }
  return hold;
}

/** The columns of a `holds` row a resolution is read from (shared/db/connect.ts: how the drivers return them). */
interface HoldRow {
  id: string;
  account: string;
  currency: string;
  amount: DbBigInt;
  mandate_id: string | null;
  parent_hold_id: string | null;
  lease_id: string | null;
}

const holdFromRow = (row: HoldRow): Hold => ({
  id: row.id,
  account: row.account,
  currency: row.currency,
  amount: toBigInt(row.amount),
  mandateId: row.mandate_id ?? null,
  parentHoldId: row.parent_hold_id ?? null,
  leaseId: row.lease_id ?? null,
});

/**
 * End many holds in one statement (a settlement batch), each at most once, without touching the accounts' `held`
 * (the caller does, with its other balance changes). A hold ended before is answered `already_resolved`, with how
 * it ended; an unknown one is an error.
 */
export async function resolveHolds(trx: Tx, holds: ReadonlyArray<{ id: string; as: HoldEnd }>): Promise<Map<string, HoldResolution>> {
  const out = new Map<string, HoldResolution>();
  if (holds.length === 0) return out;
  const r = await trx
    .raw<{ rows: Array<HoldRow & { status: string }> }>(
      `UPDATE holds h SET status = v.status, resolved_at = now()
       FROM unnest(?::text[], ?::text[]) AS v(id, status)
      WHERE h.id = v.id AND h.status = 'held'
     RETURNING h.id, h.account, h.currency, h.amount, h.mandate_id, h.parent_hold_id, h.lease_id, h.status`,
      [holds.map((h) => h.id), holds.map((h) => STORED[h.as])],
    )
    .options(namedStatement('holds_resolve'));
  for (const row of r.rows) out.set(row.id, { ...holdFromRow(row), kind: endOfStored(row.status, row.id) });
  const missing = holds.filter((h) => !out.has(h.id)).map((h) => h.id);
  if (missing.length) {
    const rows: Array<HoldRow & { status: string }> = await trx('holds')
      .whereIn('id', missing)
      .select('id', 'account', 'currency', 'amount', 'mandate_id', 'parent_hold_id', 'lease_id', 'status');
    for (const row of rows) out.set(row.id, { ...holdFromRow(row), kind: 'already_resolved', as: endOfStored(row.status, row.id) });
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
