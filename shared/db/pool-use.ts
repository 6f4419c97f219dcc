/**
 * How busy this process's Postgres pool is (knex's tarn pool): the `holon_db_pool_*` gauges
 * (shared/platform/metrics.ts). Read from memory, no query; undefined before the pool exists (PGlite has none).
 */
import type { Db } from './connect.js';
import type { PoolUse } from '../platform/metrics.js';

interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

export function poolUse(db: Db): PoolUse | undefined {
  const pool = (db.client as { pool?: Partial<TarnPool> }).pool;
  if (!pool || typeof pool.numUsed !== 'function' || typeof pool.numFree !== 'function' || typeof pool.numPendingAcquires !== 'function') return undefined;
  return { used: pool.numUsed(), free: pool.numFree(), pendingAcquires: pool.numPendingAcquires(), max: Number(pool.max ?? 0) };
}
