/**
 * The settlement's writer: a plan (plan.ts) in one statement — the receipts (signed: their time `at` is the
 * transaction's), the call events, the calls' final statuses (shared/calls/transitions.ts `finalStatusesUpdate`) and
 * their deliveries' first rows (the calls' own rows; a delivery is a new row, not a money row, referencing the call
 * already locked), then the hot rows (`money`, the money function of the plan's moves: last, in the lock order;
 * docs/ledger.md) — the parts touch disjoint tables. Then the receipts join the log (shared/receipts/log.ts), the
 * transaction's last lock. It answers what it wrote.
 */
import { createHash } from 'node:crypto';
import type { Tx } from '../../db/connect.js';
import { namedStatement, type SqlFragment, unnestInsert } from '../../db/prepared.js';
import type { MoneyCall } from '../../ledger/money-functions.js';
import { signAndLog } from '../../receipts/log.js';
import { insertedReceiptView, receiptsInsert, type ReceiptValues, type ReceiptView } from '../../receipts/store.js';
import type { SigningKey } from '../../signing/keys.js';
import { deliveriesInsert } from '../../webhooks/deliveries.js';
import { finalStatusesUpdate } from '../transitions.js';
import type { SettlementPlan } from './plan.js';

export interface WrittenSettlement {
  /** The receipts as written (signed), by call id: what the `calls-done` notices carry. */
  receipts: ReadonlyMap<string, ReceiptView>;
}

/** The settlement's call events (what the Agent Record counts), as one INSERT of fixed text (a column an array). */
const eventsInsert = unnestInsert<SettlementPlan['events'][number]>('call_events', [
  ['call_id', 'text'],
  ['agent_id', 'text'],
  ['agent_version', 'text'],
  ['status', 'text'],
  ['error_code', 'text'],
  ['latency_ms', 'int'],
  ['cost', 'bigint'],
  ['currency', 'text'],
  ['delegated', 'boolean'],
]);

/**
 * The statement, its receipts signed. Its text is fixed (each part's is, whatever the batch's size; a batch with a
 * `callback_url` adds its deliveries' part): sent as a named prepared statement, its name the text's hash.
 */
async function writeRows(trx: Tx, plan: SettlementPlan, receipts: ReceiptValues[], money: MoneyCall | null): Promise<void> {
  const parts: Array<[string, SqlFragment]> = [
    ['receipt', receiptsInsert(receipts)],
    ['event', eventsInsert(plan.events)],
    ['final', finalStatusesUpdate(plan.finals)],
    ...(plan.deliveries.length > 0 ? [['delivery', deliveriesInsert(plan.deliveries)] as [string, SqlFragment]] : []),
  ];
  const last: SqlFragment = money ?? { sql: '1', bindings: [] };
  const sql = `WITH ${parts.map(([name, part]) => `${name} AS (${part.sql})`).join(', ')} SELECT ${last.sql}`;
  await trx.raw(sql, [...parts.flatMap(([, part]) => part.bindings), ...last.bindings]).options(namedStatement(statementName(sql)));
}

/** The statement's name by its text, hashed once per text: there are a handful (the money variants, with or without deliveries). */
const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `settle_write_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    names.set(sql, name);
  }
  return name;
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
