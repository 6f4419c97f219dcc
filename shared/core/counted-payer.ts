/**
 * Which payers an agent version's ranking facts count (docs/publishing.md, "What the Agent Record counts"). Pure.
 *
 * On a gateway where anyone may open an account (hosted: email sign-up is free, unverified and comes with sign-up
 * credit), a payer counts toward a version's ranking facts and `require.min_success_rate` only when something
 * outside the platform vouches for it:
 *   - its account is linked to GitHub, or
 *   - it received money from outside the platform that is not sign-up credit (today the admin's credit; any external
 *     funding later), at least once, and in each currency at least as much as it spent on that version.
 * Money an account earned from other accounts (an author's share of a call) is not outside money: it is whatever
 * paid for those calls, sign-up credit included, so moving sign-up credit between accounts vouches for no one.
 * On a dev gateway every account is the operator's (mandate files, the operator's mandates): every payer counts.
 */

/** Who counts: every payer (a dev gateway), or vouched payers only (a hosted gateway: anyone may sign up). */
export type PayerRule = 'every_payer' | 'vouched_payers';

/** What vouches for an account. */
export interface PayerStanding {
  linkedToGitHub: boolean;
  /** Outside money other than sign-up credit the account received, per currency (micro-units, ≥ 0). */
  outsideFunding: ReadonlyMap<string, bigint>;
}

export const UNVOUCHED: PayerStanding = { linkedToGitHub: false, outsideFunding: new Map() };

/** Whether a payer counts for a version, given what it spent on that version per currency (micro-units). */
export function payerCounts(rule: PayerRule, standing: PayerStanding, spentOnVersion: ReadonlyMap<string, bigint>): boolean {
  if (rule === 'every_payer' || standing.linkedToGitHub) return true;
  if (![...standing.outsideFunding.values()].some((amount) => amount > 0n)) return false;
  for (const [currency, spent] of spentOnVersion) {
    if ((standing.outsideFunding.get(currency) ?? 0n) < spent) return false;
  }
  return true;
}
