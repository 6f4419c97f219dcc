/**
 * The audit: the running state and the journal agree, and money is conserved.
 * Tests run it after every integration test; operators can run it on live data (read-only).
 *
 * 1. every currency sums to zero over all accounts;
 * 2. every entry sums to zero per currency and has at least two lines (a settlement that moved nothing has none);
 * 3. cached balances = sums of journal lines;
 * 4. cached holds = sums of live holds and of what open budget leases on the balance hold uncarved, and no balance
 *    (but an external one) is below its holds;
 * 5. each mandate's `reserved` = its live holds and those cut from them (delegation) and what its open budget leases
 *    hold uncarved, `spent` = the costs of its receipts, and spent + reserved ≤ total;
 * 5b. each budget lease's `carved` = its live holds, a closed lease holds nothing uncarved, and a revoked mandate has
 *    no open lease (docs/ledger.md, "Budget leases");
 * 6. a receipt is billed exactly when it has a journal entry;
 * 7. the receipt log rebuilt from the receipts is the log stored and checkpointed (shared/receipts/log-audit.ts).
 */
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { formatAmount } from '../core/money.js';
import { auditLog } from '../receipts/log-audit.js';

export interface AuditReport {
  ok: boolean;
  problems: string[];
}

/** The rows of one of the audit's queries, typed by the caller (sums are `DbBigInt`: shared/db/connect.ts). */
async function rows<Row>(db: Queryable, sql: string): Promise<Row[]> {
  const r = await db.raw<{ rows: Row[] }>(sql);
  return r.rows;
}

const amount = (v: DbBigInt): string => formatAmount(toBigInt(v));

export async function audit(db: Queryable): Promise<AuditReport> {
  const problems: string[] = [];

  for (const r of await rows<{ currency: string; total: DbBigInt }>(
    db,
    `SELECT currency, sum(amount) AS total FROM journal_lines GROUP BY currency HAVING sum(amount) <> 0`,
  )) {
    problems.push(`${r.currency}: all accounts together sum to ${amount(r.total)}, not zero`);
  }

  for (const r of await rows<{ key: string; currency: string | null; total: DbBigInt }>(
    db,
    `SELECT e.key, l.currency, coalesce(sum(l.amount), 0) AS total, count(l.id) AS n
       FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
      GROUP BY e.key, e.kind, l.currency
     HAVING coalesce(sum(l.amount), 0) <> 0 OR (count(l.id) < 1 AND e.kind <> 'settle')`,
  )) {
    problems.push(`entry ${r.key}: its ${r.currency ?? '(no)'} lines sum to ${amount(r.total)}`);
  }

  for (const r of await rows<{ account: string; currency: string; cached: DbBigInt; journal: DbBigInt }>(
    db,
    `SELECT coalesce(b.account, l.account) AS account, coalesce(b.currency, l.currency) AS currency,
            coalesce(b.balance, 0) AS cached, coalesce(l.total, 0) AS journal
       FROM account_balances b
       FULL JOIN (SELECT account, currency, sum(amount) AS total FROM journal_lines GROUP BY account, currency) l
         ON l.account = b.account AND l.currency = b.currency
      WHERE coalesce(b.balance, 0) <> coalesce(l.total, 0)`,
  )) {
    problems.push(`${r.account} ${r.currency}: cached balance ${amount(r.cached)} but journal lines sum to ${amount(r.journal)}`);
  }

  for (const r of await rows<{ account: string; currency: string; cached: DbBigInt; live: DbBigInt; leased: DbBigInt }>(
    db,
    `SELECT b.account, b.currency, b.held AS cached, coalesce(h.total, 0) AS live, coalesce(l.total, 0) AS leased
       FROM account_balances b
       LEFT JOIN (SELECT account, currency, sum(amount) AS total FROM holds WHERE status = 'held' GROUP BY account, currency) h
         ON h.account = b.account AND h.currency = b.currency
       LEFT JOIN (SELECT account, currency, sum(amount - carved) AS total FROM budget_leases WHERE closed_at IS NULL GROUP BY account, currency) l
         ON l.account = b.account AND l.currency = b.currency
      WHERE b.held <> coalesce(h.total, 0) + coalesce(l.total, 0)`,
  )) {
    problems.push(`${r.account} ${r.currency}: cached holds ${amount(r.cached)} but live holds sum to ${amount(r.live)}${leasedPart(r.leased)}`);
  }

  for (const r of await rows<{ account: string; currency: string; balance: DbBigInt; held: DbBigInt }>(
    db,
    `SELECT account, currency, balance, held FROM account_balances WHERE NOT overdraft AND balance < held`,
  )) {
    problems.push(`${r.account} ${r.currency}: balance ${amount(r.balance)} is below its holds ${amount(r.held)}`);
  }

  for (const r of await rows<{ id: string; total: DbBigInt; spent: DbBigInt; reserved: DbBigInt; live: DbBigInt; leased: DbBigInt; billed: DbBigInt }>(
    db,
    `SELECT m.id, m.total, m.spent, m.reserved, coalesce(h.total, 0) AS live, coalesce(l.total, 0) AS leased, coalesce(s.total, 0) AS billed
       FROM mandates m
       LEFT JOIN (
         -- a mandate reserves its own holds and every hold cut from them (delegated calls), at any depth
         WITH RECURSIVE tree AS (
           SELECT id, mandate_id AS budget, amount, status FROM holds WHERE mandate_id IS NOT NULL
           UNION ALL
           SELECT c.id, t.budget, c.amount, c.status FROM holds c JOIN tree t ON c.parent_hold_id = t.id
         )
         SELECT budget AS mandate_id, sum(amount) AS total FROM tree WHERE status = 'held' GROUP BY budget
       ) h ON h.mandate_id = m.id
       LEFT JOIN (SELECT mandate_id, sum(amount - carved) AS total FROM budget_leases WHERE closed_at IS NULL GROUP BY mandate_id) l
         ON l.mandate_id = m.id
       LEFT JOIN (SELECT mandate_id, sum(cost_total) AS total FROM receipts GROUP BY mandate_id) s ON s.mandate_id = m.id
      WHERE m.reserved <> coalesce(h.total, 0) + coalesce(l.total, 0) OR m.spent <> coalesce(s.total, 0) OR m.spent + m.reserved > m.total`,
  )) {
    const { id } = r;
    if (toBigInt(r.reserved) !== toBigInt(r.live) + toBigInt(r.leased))
      problems.push(`mandate ${id}: reserved ${amount(r.reserved)} but live holds sum to ${amount(r.live)}${leasedPart(r.leased)}`);
    if (toBigInt(r.spent) !== toBigInt(r.billed)) problems.push(`mandate ${id}: spent ${amount(r.spent)} but its receipts' costs sum to ${amount(r.billed)}`);
    if (toBigInt(r.spent) + toBigInt(r.reserved) > toBigInt(r.total)) problems.push(`mandate ${id}: spent + reserved exceeds its total ${amount(r.total)}`);
  }

  problems.push(...(await auditLeases(db)));

  for (const r of await rows<{ id: string; billed: boolean }>(db, `SELECT id, billed FROM receipts WHERE billed <> (entry_id IS NOT NULL)`)) {
    problems.push(`receipt ${r.id}: ${r.billed ? 'billed without a journal entry' : 'has a journal entry but is not billed'}`);
  }

  problems.push(...(await auditLog(db)));
  return { ok: problems.length === 0, problems };
}

/** What open budget leases hold uncarved, in words, when they hold anything. */
const leasedPart = (leased: DbBigInt): string => (toBigInt(leased) === 0n ? '' : ` and open budget leases hold ${amount(leased)} uncarved`);

/** Budget leases (docs/ledger.md, "Budget leases"): each one's `carved` is its live holds; closed, it holds only them; none open on a revoked mandate. */
async function auditLeases(db: Queryable): Promise<string[]> {
  const problems: string[] = [];
  for (const r of await rows<{ id: string; amount: DbBigInt; carved: DbBigInt; live: DbBigInt; closed: boolean; revoked: boolean }>(
    db,
    `SELECT l.id, l.amount, l.carved, coalesce(h.total, 0) AS live, l.closed_at IS NOT NULL AS closed, m.revoked_at IS NOT NULL AS revoked
       FROM budget_leases l
       JOIN mandates m ON m.id = l.mandate_id
       LEFT JOIN (SELECT lease_id, sum(amount) AS total FROM holds WHERE status = 'held' AND lease_id IS NOT NULL GROUP BY lease_id) h
         ON h.lease_id = l.id
      WHERE l.carved <> coalesce(h.total, 0) OR l.carved > l.amount OR (l.closed_at IS NOT NULL AND l.amount <> l.carved)
         OR (l.closed_at IS NULL AND m.revoked_at IS NOT NULL)`,
  )) {
    if (toBigInt(r.carved) !== toBigInt(r.live)) problems.push(`lease ${r.id}: carved ${amount(r.carved)} but its live holds sum to ${amount(r.live)}`);
    if (toBigInt(r.carved) > toBigInt(r.amount)) problems.push(`lease ${r.id}: carved ${amount(r.carved)} exceeds its amount ${amount(r.amount)}`);
    if (r.closed && toBigInt(r.amount) !== toBigInt(r.carved))
      problems.push(`lease ${r.id}: closed but holds ${amount(toBigInt(r.amount) - toBigInt(r.carved))} uncarved`);
    if (!r.closed && r.revoked) problems.push(`lease ${r.id}: open on a revoked mandate`);
  }
  return problems;
}
