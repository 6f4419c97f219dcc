/**
 * An account's statement for a period (GET /v0/statement; docs/hosted.md "Reconciling a month through the API"):
 * what the journal says the account held at both ends, and what the receipts say happened in between, each read
 * from its own table, so that the reader can check one against the other:
 *
 *   closing = opening + credited − billed + earned        (per currency)
 *   billed_to_date (no `until`) = spent                    (per root mandate)
 *
 * The period is [since, until) on `created_at`; no `since`: from the beginning, no `until`: everything committed.
 *   opening   Σ the account's journal lines in entries created before `since` (0 without `since`)
 *   closing   Σ the account's journal lines in entries created before `until`
 *   credited  Σ the account's lines, in the period, in entries of every kind but `settle` (sign-up and admin credit:
 *             money from an external account)
 *   billed    Σ `cost_own` of the billed receipts the account paid (`payer`), in the period: top-level and delegated
 *             alike, each in the period its own receipt was written
 *   earned    Σ the `splits` paid to the account in billed receipts, in the period (an author's share, a fork's
 *             royalty; the platform's fee for the platform account). Gross: in a call an author paid for themself,
 *             the charge is in `billed` and their share in `earned` (GET /v0/me/agents counts only the net line)
 *   mandates  the account's root mandates with their budget; `billed_in_range` and `billed_to_date` are
 *             Σ `cost_total` of the mandate's top-level receipts in the period / created before `until`. A delegation
 *             tree counts whole in the period its top-level receipt was written (its children may have settled in
 *             the period before). Every top-level receipt is summed: one that was not billed costs 0, unless it is
 *             an orchestrator that failed after children it paid for, whose `cost_total` is what they cost — as
 *             `spent` counts it.
 *
 * Why the identities hold: a settlement's journal entry (`settle:<call id>`: the payer −cost_own, each split +) and
 * its receipt are written in one transaction, so they share `created_at` (the transaction's `now()`) and fall in
 * the same period; every other entry is credit. All figures are read in one REPEATABLE READ snapshot. Money is
 * bigint micro-units throughout; the splits' decimal strings are converted in SQL with exact `numeric` arithmetic.
 */
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { inTransaction } from '../db/transaction.js';
import type { Micros } from '../core/money.js';
import { SETTLEMENT_KIND } from './entries.js';

export interface StatementPeriod {
  /** Inclusive; a timestamp Postgres reads (shared/core/timestamps.ts `Instant.iso`). */
  since?: string;
  /** Exclusive. */
  until?: string;
}

interface CurrencyStatement {
  currency: string;
  opening: Micros;
  credited: Micros;
  billed: Micros;
  earned: Micros;
  closing: Micros;
}

interface MandateStatement {
  id: string;
  currency: string;
  total: Micros;
  spent: Micros;
  reserved: Micros;
  billedInRange: Micros;
  billedToDate: Micros;
}

export interface Statement {
  account: string;
  currencies: CurrencyStatement[];
  mandates: MandateStatement[];
}

/** `column` within the period, as SQL and its bindings. */
function within(column: string, period: StatementPeriod): { sql: string; bindings: string[] } {
  const parts: string[] = [];
  const bindings: string[] = [];
  if (period.since !== undefined) {
    parts.push(`${column} >= ?::timestamptz`);
    bindings.push(period.since);
  }
  if (period.until !== undefined) {
    parts.push(`${column} < ?::timestamptz`);
    bindings.push(period.until);
  }
  return { sql: parts.length ? parts.join(' AND ') : 'true', bindings };
}

/** `column` before `until` (everything without one). */
function beforeUntil(column: string, period: StatementPeriod): { sql: string; bindings: string[] } {
  return period.until === undefined ? { sql: 'true', bindings: [] } : { sql: `${column} < ?::timestamptz`, bindings: [period.until] };
}

/** The rows of one of the statement's queries, typed by the caller (sums are `DbBigInt`: shared/db/connect.ts). */
async function rows<Row>(db: Queryable, sql: string, bindings: readonly string[]): Promise<Row[]> {
  return (await db.raw<{ rows: Row[] }>(sql, [...bindings])).rows;
}

/** Does the account exist (any kind: a user, the platform, an external account)? */
export async function accountExists(db: Queryable, account: string): Promise<boolean> {
  return (await db('accounts').where({ handle: account }).first('handle')) !== undefined;
}

/** The journal side: opening, closing and credited, per currency. */
async function journalSide(
  db: Queryable,
  account: string,
  period: StatementPeriod,
): Promise<Array<{ currency: string; opening: DbBigInt; closing: DbBigInt; credited: DbBigInt }>> {
  const range = within('e.created_at', period);
  const closing = beforeUntil('e.created_at', period);
  const opening = period.since === undefined ? { sql: 'false', bindings: [] } : { sql: 'e.created_at < ?::timestamptz', bindings: [period.since] };
  return rows(
    db,
    `SELECT l.currency,
            coalesce(sum(l.amount) FILTER (WHERE ${opening.sql}), 0)::bigint AS opening,
            coalesce(sum(l.amount) FILTER (WHERE ${closing.sql}), 0)::bigint AS closing,
            coalesce(sum(l.amount) FILTER (WHERE e.kind <> ? AND ${range.sql}), 0)::bigint AS credited
       FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
      WHERE l.account = ?
      GROUP BY l.currency`,
    [...opening.bindings, ...closing.bindings, SETTLEMENT_KIND, ...range.bindings, account],
  );
}

/** What the account paid: Σ cost_own of its billed receipts in the period (migration 018's index). */
async function billedSide(db: Queryable, account: string, period: StatementPeriod): Promise<Array<{ currency: string | null; billed: DbBigInt }>> {
  const range = within('created_at', period);
  return rows(db, `SELECT currency, sum(cost_own)::bigint AS billed FROM receipts WHERE payer = ? AND billed AND ${range.sql} GROUP BY currency`, [
    account,
    ...range.bindings,
  ]);
}

/**
 * What the account was paid: the splits to it in billed receipts of the period. The receipts that can pay it are
 * those of the settle entries with a line for it (found through the journal's index, the receipt by its id, the
 * entry's key being `settle:<receipt id>`), and those it paid itself (a call it paid whose lines merged to nothing
 * for it, e.g. its own agent at a fee that rounds to 0).
 */
async function earnedSide(db: Queryable, account: string, period: StatementPeriod): Promise<Array<{ currency: string | null; earned: DbBigInt }>> {
  const entries = within('e.created_at', period);
  const paid = within('created_at', period);
  const receipts = within('r.created_at', period);
  return rows(
    db,
    `WITH candidates AS (
       SELECT substr(e.key, length(?) + 2) AS id
         FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
        WHERE l.account = ? AND e.kind = ? AND ${entries.sql}
       UNION
       SELECT id FROM receipts WHERE payer = ? AND billed AND ${paid.sql}
     )
     SELECT r.currency, sum(round((s.value->>'amount')::numeric * 1000000))::bigint AS earned
       FROM candidates c
       JOIN receipts r ON r.id = c.id
       CROSS JOIN LATERAL jsonb_array_elements(r.splits) AS s(value)
      WHERE r.billed AND s.value->>'to' = ? AND ${receipts.sql}
      GROUP BY r.currency`,
    [SETTLEMENT_KIND, account, SETTLEMENT_KIND, ...entries.bindings, account, ...paid.bindings, account, ...receipts.bindings],
  );
}

/** The account's root mandates, their budget, and the costs of their top-level receipts. */
/** A row of `mandateSide` (shared/db/connect.ts: how the drivers return it). */
interface MandateSideRow {
  id: string;
  currency: string;
  total: DbBigInt;
  spent: DbBigInt;
  reserved: DbBigInt;
  billed_in_range: DbBigInt;
  billed_to_date: DbBigInt;
}

const mandateStatementFromRow = (r: MandateSideRow): MandateStatement => ({
  id: r.id,
  currency: r.currency,
  total: toBigInt(r.total),
  spent: toBigInt(r.spent),
  reserved: toBigInt(r.reserved),
  billedInRange: toBigInt(r.billed_in_range),
  billedToDate: toBigInt(r.billed_to_date),
});

async function mandateSide(db: Queryable, account: string, period: StatementPeriod): Promise<MandateSideRow[]> {
  const range = within('r.created_at', period);
  const toDate = beforeUntil('r.created_at', period);
  return rows(
    db,
    // `reserved`: calls' holds only; what budget leases hold uncarved is still the mandate's to spend (docs/ledger.md).
    `SELECT m.id, m.currency, m.total, m.spent,
            m.reserved - (SELECT coalesce(sum(l.amount - l.carved), 0) FROM budget_leases l
                           WHERE l.mandate_id = m.id AND l.closed_at IS NULL)::bigint AS reserved,
            coalesce(sum(r.cost_total) FILTER (WHERE ${range.sql}), 0)::bigint AS billed_in_range,
            coalesce(sum(r.cost_total) FILTER (WHERE ${toDate.sql}), 0)::bigint AS billed_to_date
       FROM mandates m
       LEFT JOIN receipts r ON r.mandate_id = m.id AND r.parent_id IS NULL
      WHERE m.issuer = ? AND m.parent_id IS NULL
      GROUP BY m.id, m.currency, m.total, m.spent, m.reserved, m.created_at
      ORDER BY m.created_at, m.id`,
    [...range.bindings, ...toDate.bindings, account],
  );
}

/** The account's currencies: every one it holds a balance row in, has lines in, paid or was paid in. */
async function balanceCurrencies(db: Queryable, account: string): Promise<string[]> {
  return (await db('account_balances').where({ account }).pluck('currency')).map(String);
}

/** The statement, all of it from one snapshot. The account is not checked here (`accountExists`). */
export async function readStatement(db: Queryable, account: string, period: StatementPeriod): Promise<Statement> {
  return inTransaction(db, async (trx) => {
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const journal = await journalSide(trx, account, period);
    const billed = await billedSide(trx, account, period);
    const earned = await earnedSide(trx, account, period);
    const mandates = await mandateSide(trx, account, period);
    const held = await balanceCurrencies(trx, account);

    const byCurrency = new Map<string, CurrencyStatement>();
    const of = (currency: string): CurrencyStatement => {
      let c = byCurrency.get(currency);
      if (!c) {
        c = { currency, opening: 0n, credited: 0n, billed: 0n, earned: 0n, closing: 0n };
        byCurrency.set(currency, c);
      }
      return c;
    };
    for (const currency of held) of(currency);
    for (const r of journal) {
      const c = of(r.currency);
      c.opening = toBigInt(r.opening);
      c.closing = toBigInt(r.closing);
      c.credited = toBigInt(r.credited);
    }
    // receipts.currency is nullable (a refusal's); a billed receipt always has one.
    for (const r of billed) of(String(r.currency)).billed = toBigInt(r.billed);
    for (const r of earned) of(String(r.currency)).earned = toBigInt(r.earned);

    return {
      account,
      currencies: [...byCurrency.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0)),
      mandates: mandates.map(mandateStatementFromRow),
    };
  });
}
