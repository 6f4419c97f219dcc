/**
 * Holds not yet resolved, counted and summed per currency: the `holon_holds_outstanding` gauges
 * (shared/platform/metrics.ts), read when scraped. One statement on the partial index of live holds; cancelled by
 * Postgres if it outlasts `timeoutMs`.
 */
import type { Db, DbBigInt } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import type { HoldsOutstanding } from '../platform/metrics.js';

export async function holdsOutstanding(db: Db, timeoutMs: number): Promise<HoldsOutstanding[]> {
  const rows = (await db('holds')
    .where({ status: 'held' })
    .groupBy('currency')
    .select('currency')
    .count({ n: '*' })
    .sum({ micros: 'amount' })
    .timeout(timeoutMs, { cancel: true })) as Array<{ currency: string; n: DbBigInt; micros: DbBigInt | null }>;
  return rows.map((r) => ({ currency: r.currency, count: Number(r.n), micros: toBigInt(r.micros) }));
}
