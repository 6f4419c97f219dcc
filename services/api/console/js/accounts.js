// Whose money the console shows: a human's own account; on a dev gateway, the issuers of the dev mandates.

import { get } from './api.js';

/** The balances to show: [{account, currency, balance, held, available}]. */
export async function balancesOf(who) {
  if (who.kind === 'human') return (await get('/v0/accounts')).accounts;
  const [accounts, mandates] = await Promise.all([get('/v0/accounts'), get('/v0/mandates')]);
  const issuers = new Set(mandates.mandates.map((m) => m.mandate.issuer));
  return accounts.accounts.filter((a) => issuers.has(a.account));
}

/** The accounts whose statement a reconciliation reads. */
export async function statementAccounts(who) {
  if (who.kind === 'human') return [who.handle];
  const mandates = await get('/v0/mandates');
  return [...new Set(mandates.mandates.map((m) => m.mandate.issuer))].sort();
}
