/**
 * Which of a version's payers count (shared/core/counted-payer.ts is the rule): what vouches for each payer — its
 * account linked to GitHub (`accounts.github_id`), its outside funding (shared/ledger/outside-funding.ts) — read in
 * two queries for all the payers at once, and nothing read when every payer counts (a dev gateway).
 */
import type { Queryable } from '../db/connect.js';
import { payerCounts, UNVOUCHED, type PayerRule, type PayerStanding } from '../core/counted-payer.js';
import { outsideFunding } from '../ledger/outside-funding.js';

/** What one payer spent on one version (its counted runs, delegated ones by the payer of their tree's root), per currency. */
export interface PayerSpending {
  /** The version: `recordKey(id, version)`. */
  version: string;
  payer: string;
  currency: string;
  spent: bigint;
}

/** The key of a (version, payer) pair in `countedPayers`' answer. */
export const payerKey = (version: string, payer: string): string => `${version}\u0000${payer}`;

async function standings(db: Queryable, payers: readonly string[]): Promise<Map<string, PayerStanding>> {
  const linked = await db('accounts').whereIn('handle', payers).whereNotNull('github_id').pluck('handle');
  const linkedSet = new Set<string>(linked);
  const funding = await outsideFunding(
    db,
    payers.filter((p) => !linkedSet.has(p)),
  );
  return new Map(payers.map((p) => [p, { linkedToGitHub: linkedSet.has(p), outsideFunding: funding.get(p) ?? UNVOUCHED.outsideFunding }]));
}

/** The (version, payer) pairs that count (`payerKey`), from what each payer spent on each version. */
export async function countedPayers(db: Queryable, rule: PayerRule, spending: readonly PayerSpending[]): Promise<Set<string>> {
  const spent = new Map<string, { payer: string; byCurrency: Map<string, bigint> }>();
  for (const s of spending) {
    const key = payerKey(s.version, s.payer);
    const entry = spent.get(key) ?? { payer: s.payer, byCurrency: new Map<string, bigint>() };
    spent.set(key, entry);
    entry.byCurrency.set(s.currency, (entry.byCurrency.get(s.currency) ?? 0n) + s.spent);
  }
  if (rule === 'every_payer') return new Set(spent.keys());
  const known = await standings(db, [...new Set(spending.map((s) => s.payer))]);
  const counted = new Set<string>();
  for (const [key, { payer, byCurrency }] of spent) {
    if (payerCounts(rule, known.get(payer) ?? UNVOUCHED, byCurrency)) counted.add(key);
  }
  return counted;
}
