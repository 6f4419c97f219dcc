/**
 * Outside funding: the money an account received from outside the platform other than sign-up credit, read from the
 * journal. An entry brings outside money when one of its lines debits an `external:*` account (money entering the
 * platform); sign-up credit (kind `signup`) is left out. Today that is the admin's credit (`admin-credit:<key>`);
 * any external funding later is counted the same way without a change here. An author's earnings are not outside
 * money (they come from other accounts), whatever paid for them.
 *
 * Received, not kept: the sum of the account's credit lines in those entries, per currency.
 */
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { SIGNUP_KIND } from './demo-credit.js';

/** Outside funding per account and currency, for the given accounts (those without any are absent). */
export async function outsideFunding(db: Queryable, accounts: readonly string[]): Promise<Map<string, Map<string, bigint>>> {
  const out = new Map<string, Map<string, bigint>>();
  if (accounts.length === 0) return out;
  const r = await db.raw<{ rows: Array<{ account: string; currency: string; amount: DbBigInt }> }>(
    `SELECT l.account, l.currency, sum(l.amount) AS amount
       FROM journal_lines l JOIN journal_entries j ON j.id = l.entry_id
      WHERE l.account = ANY(?::text[]) AND l.amount > 0 AND j.kind <> ?
        AND EXISTS (SELECT 1 FROM journal_lines x WHERE x.entry_id = l.entry_id AND x.account LIKE 'external:%' AND x.amount < 0)
      GROUP BY l.account, l.currency`,
    [[...accounts], SIGNUP_KIND],
  );
  for (const row of r.rows) {
    const own = out.get(row.account) ?? new Map<string, bigint>();
    out.set(row.account, own);
    own.set(row.currency, toBigInt(row.amount));
  }
  return out;
}
