// @ts-check
// Whose money the console shows: a human's own account; on a dev gateway, the issuers of the dev mandates.

import { get } from './api.js';

/**
 * @typedef {import('./api-types.js').Answer<'listBalances'>} Balances
 * @typedef {import('./api-types.js').Mandates} Mandates
 * @typedef {import('./session.js').Who} Who
 */

/**
 * The balances to show: [{account, currency, balance, held, available}].
 * @param {Who} who
 */
export async function balancesOf(who) {
  if (who.kind === 'human') {
    /** @type {Balances} */
    const mine = await get('/v0/accounts');
    return mine.accounts;
  }
  const [accounts, mandates] = await Promise.all([
    /** @type {Promise<Balances>} */ (get('/v0/accounts')),
    /** @type {Promise<Mandates>} */ (get('/v0/mandates')),
  ]);
  const issuers = new Set(mandates.mandates.map((m) => m.mandate.issuer));
  return accounts.accounts.filter((a) => issuers.has(a.account));
}

/**
 * The accounts whose statement a reconciliation reads.
 * @param {Who} who
 */
export async function statementAccounts(who) {
  if (who.kind === 'human') return [who.handle];
  /** @type {Mandates} */
  const mandates = await get('/v0/mandates');
  return [...new Set(mandates.mandates.map((m) => m.mandate.issuer))].sort();
}
