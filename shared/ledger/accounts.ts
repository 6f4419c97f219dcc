/**
 * Accounts: who can hold money. `external:*` accounts are where money enters the platform
 * (today only `external:demo-credit`); they alone may go negative, so the sum over all accounts stays zero.
 */
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { PLATFORM_ACCOUNT } from '../core/splits.js';

export type AccountKind = 'user' | 'platform' | 'external';

export { PLATFORM_ACCOUNT };
export const DEMO_CREDIT_ACCOUNT = 'external:demo-credit';

function accountKindOf(handle: string): AccountKind {
  if (handle.startsWith('external:')) return 'external';
  if (handle === PLATFORM_ACCOUNT) return 'platform';
  return 'user';
}

/** Create the account if it does not exist yet (idempotent). */
export async function ensureAccount(db: Queryable, handle: string, kind: AccountKind = accountKindOf(handle)): Promise<void> {
  await db.raw(`INSERT INTO accounts (handle, kind) VALUES (?, ?) ON CONFLICT (handle) DO NOTHING`, [handle, kind]);
}

export interface Balance {
  account: string;
  currency: string;
  /** Sum of the account's journal lines (cached). */
  balance: bigint;
  /** Sum of its live holds (what budget leases hold uncarved is not: it is available to any call; docs/ledger.md). */
  held: bigint;
  /** balance − held: what a new reservation can still take. */
  available: bigint;
}

export async function readBalances(db: Queryable, account?: string): Promise<Balance[]> {
  const q = db('account_balances')
    .select(
      'account',
      'currency',
      'balance',
      db.raw(
        `held - (SELECT coalesce(sum(l.amount - l.carved), 0) FROM budget_leases l
                  WHERE l.account = account_balances.account AND l.currency = account_balances.currency AND l.closed_at IS NULL) AS held`,
      ),
    )
    .orderBy([{ column: 'account' }, { column: 'currency' }]);
  if (account !== undefined) q.where({ account });
  const rows = (await q) as Array<{ account: string; currency: string; balance: DbBigInt; held: DbBigInt }>;
  return rows.map((r) => {
    const balance = toBigInt(r.balance);
    const held = toBigInt(r.held);
    return { account: r.account, currency: r.currency, balance, held, available: balance - held };
  });
}

export async function readBalance(db: Queryable, account: string, currency: string): Promise<Balance> {
  const [row] = (await readBalances(db, account)).filter((b) => b.currency === currency);
  return row ?? { account, currency, balance: 0n, held: 0n, available: 0n };
}

/** A user account's own fields, or undefined. `githubLogin`: the GitHub account it is linked to (publishing needs one). */
export async function readAccount(
  db: Queryable,
  handle: string,
): Promise<{ handle: string; email: string | null; githubLogin: string | null; createdAt: Date } | undefined> {
  const row: { handle: string; email: string | null; github_login: string | null; created_at: Date } | undefined = await db('accounts')
    .where({ handle })
    .first('handle', 'email', 'github_login', 'created_at');
  return row ? { handle: row.handle, email: row.email ?? null, githubLogin: row.github_login ?? null, createdAt: new Date(row.created_at) } : undefined;
}

const known = new WeakMap<object, Set<string>>();

/**
 * `ensureAccount`, remembered per database handle: accounts are never deleted, so once seen an account need not
 * be written again by this process (saves a round trip per settlement).
 */
export async function ensureAccountCached(db: Queryable, handle: string): Promise<void> {
  let set = known.get(db);
  if (!set) {
    set = new Set();
    known.set(db, set);
  }
  if (set.has(handle)) return;
  await ensureAccount(db, handle);
  set.add(handle);
}
