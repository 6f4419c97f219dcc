/**
 * Demo credit (gateway.md §7: every balance is demo money): from `external:demo-credit` to a user account, as one
 * journal entry whose idempotency key makes a repeated grant land once.
 */
import type { Queryable } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { DEMO_CREDIT_ACCOUNT, ensureAccount } from './accounts.js';
import { postEntry } from './entries.js';

/** The kind of a sign-up credit entry: money anyone gets for opening an account, so it vouches for no one (shared/core/counted-payer.ts). */
export const SIGNUP_KIND = 'signup';

/** Demo credit for an issuer, once: journal entry `signup:<handle>` from `external:demo-credit`. */
/** Demo credit (sign-up, the operator's, the admin's) is in EUR, and money from outside never is (docs/payments.md). */
export const DEMO_CREDIT_CURRENCY = 'EUR';

export async function creditSignup(db: Queryable, handle: string, amount: bigint): Promise<boolean> {
  if (amount <= 0n) return false;
  const currency = DEMO_CREDIT_CURRENCY;
  await ensureAccount(db, DEMO_CREDIT_ACCOUNT);
  await ensureAccount(db, handle);
  const posted = await postEntry(db, {
    key: `signup:${handle}`,
    kind: SIGNUP_KIND,
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency, amount: -amount },
      { account: handle, currency, amount },
    ],
  });
  return posted.created;
}

/**
 * The admin's top-up: `admin-credit:<request key>` (a retried request lands once). The account must exist and be a
 * user account.
 */
export async function giveDemoCredit(
  db: Queryable,
  grant: { account: string; amount: bigint; currency: string; requestKey: string },
): Promise<{ created: boolean }> {
  const { account, amount, currency } = grant;
  if (account.startsWith('external:') || account === 'holon') throw new HolonError('invalid_request', `demo credit goes to user accounts, not ${account}`);
  const exists = await db('accounts').where({ handle: account }).first('handle');
  if (!exists) throw new HolonError('not_found', `there is no account ${account}`);
  await ensureAccount(db, DEMO_CREDIT_ACCOUNT);
  return postEntry(db, {
    key: `admin-credit:${grant.requestKey}`,
    kind: 'admin-credit',
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency, amount: -amount },
      { account, currency, amount },
    ],
  });
}
