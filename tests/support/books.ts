/**
 * The books after a run, whatever happened during it (DESIGN.md §3): every call ended with one receipt, no hold
 * live, one settle entry per billed receipt, each mandate's spent its billed receipts, each issuer's balance its
 * credit less that, the ledger audit clean, and no agent run twice for a call. Answers the problems, [] when none.
 */
import type { Knex } from 'knex';
import { readBalance } from '../../shared/ledger/accounts.js';
import { audit } from '../../shared/ledger/audit.js';

export interface BooksExpectation {
  /** The mandates of the run and their issuers. */
  mandates: Readonly<Array<{ id: string; issuer: string }>>;
  /** Each issuer's sign-up credit, in micro-units. */
  credit: bigint;
  /** The calls each agent invocation was for (HOLON_TEST_INVOCATIONS, processes.ts `readInvocations`). */
  invocations?: Readonly<Array<{ call: string }>>;
}

export async function booksProblems(knex: Knex, expected: BooksExpectation): Promise<string[]> {
  const problems: string[] = [];
  const open = await knex('calls').whereNotIn('status', ['succeeded', 'failed']).pluck('id');
  if (open.length) problems.push(`calls not ended: ${open.join(', ')}`);
  const held = await knex('holds').where({ status: 'held' }).pluck('id');
  if (held.length) problems.push(`holds still held: ${held.join(', ')}`);
  const noReceipt = await knex('calls as c').leftJoin('receipts as r', 'r.id', 'c.id').whereNull('r.id').pluck('c.id');
  if (noReceipt.length) problems.push(`calls without a receipt: ${noReceipt.join(', ')}`);
  const twice = await knex('journal_entries').where('key', 'like', 'settle:%').groupBy('key').havingRaw('count(*) > 1').pluck('key');
  if (twice.length) problems.push(`settled twice: ${twice.join(', ')}`);
  const settleKeys = new Set<string>(await knex('journal_entries').where('key', 'like', 'settle:%').pluck('key'));
  const billed: Array<{ id: string; mandate_id: string; cost_total: string }> = await knex('receipts')
    .where({ billed: true })
    .select('id', 'mandate_id', 'cost_total');
  const unentered = billed.filter((r) => !settleKeys.has(`settle:${r.id}`)).map((r) => r.id);
  if (unentered.length || settleKeys.size !== billed.length)
    problems.push(`${billed.length} billed receipts, ${settleKeys.size} settle entries (${unentered.join(', ')})`);
  for (const m of expected.mandates) {
    const row = await knex('mandates').where({ id: m.id }).first('total', 'spent', 'reserved');
    const spent = billed.filter((r) => r.mandate_id === m.id).reduce((sum, r) => sum + BigInt(r.cost_total), 0n);
    if (BigInt(row.spent) !== spent || BigInt(row.reserved) !== 0n || BigInt(row.spent) > BigInt(row.total))
      problems.push(`${m.id}: spent ${row.spent} (billed ${spent}), reserved ${row.reserved}, total ${row.total}`);
    const balance = await readBalance(knex, m.issuer, 'EUR');
    if (balance.balance !== expected.credit - spent || balance.held !== 0n) problems.push(`${m.issuer}: balance ${balance.balance}, held ${balance.held}`);
  }
  const runs = new Map<string, number>();
  for (const { call } of expected.invocations ?? []) runs.set(call, (runs.get(call) ?? 0) + 1);
  const again = [...runs].filter(([, n]) => n > 1).map(([call, n]) => `${call} ×${n}`);
  if (again.length) problems.push(`agents run more than once: ${again.join(', ')}`);
  problems.push(...(await audit(knex)).problems.map((p) => `audit: ${p}`));
  return problems;
}
