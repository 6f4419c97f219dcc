/**
 * The settlement's writer: a plan (plan.ts) in one statement — the receipts (signed: their time `at` is the
 * transaction's), the call events, the calls' final statuses (shared/calls/transitions.ts `finalStatusesUpdate`) and
 * their deliveries' first rows (the calls' own rows; a delivery is a new row, not a money row, referencing the call
 * already locked), then the hot rows (`money`, the money function of the plan's moves: last, in the lock order;
 * docs/ledger.md) — the parts touch disjoint tables. Then the receipts join the log (shared/receipts/log.ts), the
 * transaction's last lock. It answers what it wrote.
 */
import type { Tx } from '../../db/connect.js';
import type { MoneyCall } from '../../ledger/money-functions.js';
import { signAndLog } from '../../receipts/log.js';
import { insertedReceiptView, receiptsInsert, type ReceiptValues, type ReceiptView } from '../../receipts/store.js';
import type { SigningKey } from '../../signing/keys.js';
import { insertDeliveries } from '../../webhooks/deliveries.js';
import { finalStatusesUpdate } from '../transitions.js';
import type { SettlementPlan } from './plan.js';

export interface WrittenSettlement {
  /** The receipts as written (signed), by call id: what the `calls-done` notices carry. */
  receipts: ReadonlyMap<string, ReceiptView>;
}

/** The statement, its receipts signed. */
async function writeRows(trx: Tx, plan: SettlementPlan, receipts: ReceiptValues[], money: MoneyCall | null): Promise<void> {
  const own = trx
    .with('receipt', receiptsInsert(trx, receipts))
    .with('event', trx('call_events').insert([...plan.events]))
    .with('final', finalStatusesUpdate(trx, plan.finals));
  const q = plan.deliveries.length > 0 ? own.with('delivery', insertDeliveries(trx, plan.deliveries)) : own;
  await (money ? q.select(trx.raw(money.sql, [...money.bindings])) : q.select(trx.raw('1')));
}

export async function writeSettlement(
  trx: Tx,
  plan: SettlementPlan,
  options: { money: MoneyCall | null; at: Date; key: SigningKey },
): Promise<WrittenSettlement> {
  const { money, at, key } = options;
  if (plan.finals.length === 0) {
    if (money) await trx.raw(`SELECT ${money.sql}`, [...money.bindings]);
    return { receipts: new Map() };
  }
  const views = plan.receipts.map((values) => insertedReceiptView(values, at));
  const signed = await signAndLog(trx, key, views, (signatures) =>
    writeRows(
      trx,
      plan,
      plan.receipts.map((values, i) => ({ ...values, signature: signatures[i]! })),
      money,
    ),
  );
  return { receipts: new Map(signed.map((r) => [r.id, r])) };
}
