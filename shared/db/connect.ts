/**
 * Opening the database: Postgres when a URL is given, else PGlite (an embedded Postgres compiled to WASM)
 * in a data directory (or in memory). Both behind knex, running the same migrations.
 */
import { mkdir } from 'node:fs/promises';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import ClientPGLite from 'knex-pglite';
import { migrateToLatest } from './migrate.js';
import { lockPglite } from './pglite-lock.js';
import { SETTINGS } from '../platform/settings/index.js';

export type Db = Knex;
export type Tx = Knex.Transaction;
/** Either a database handle or an open transaction: every query helper takes one. */
export type Queryable = Knex | Knex.Transaction;

// int8 (bigint) columns hold micro-units: read them as bigint, never as a lossy number or a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => BigInt(v));

export interface DatabaseOptions {
  /** A postgres:// URL. When absent, PGlite is used. */
  url?: string;
  /** PGlite data directory; absent = in memory. */
  dir?: string;
  /** Run migrations on open (default true). */
  migrate?: boolean;
  /** Largest pool for Postgres (default HOLON_DB_POOL's). PGlite always has exactly one connection. */
  poolMax?: number;
}

export interface Database {
  knex: Db;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export async function openDatabase(options: DatabaseOptions = {}): Promise<Database> {
  let knex: Db;
  let kind: Database['kind'];
  let unlock: (() => Promise<void>) | undefined;
  if (options.url) {
    kind = 'postgres';
    knex = knexFactory({
      client: 'pg',
      connection: options.url,
      pool: { min: 0, max: options.poolMax ?? SETTINGS.dbPool.default },
      // a transaction waiting on a row lock must not wait forever for a pooled connection
      acquireConnectionTimeout: 30_000,
    });
  } else {
    kind = 'pglite';
    // PGlite creates the data directory but not its parents (`.holon/db` on a fresh checkout).
    if (options.dir) await mkdir(options.dir, { recursive: true });
    // One process at a time (pglite-lock.ts): a directory another live process holds is refused, said plainly.
    unlock = options.dir ? await lockPglite(options.dir) : undefined;
    try {
      const pglite = new PGlite(options.dir);
      await pglite.waitReady;
      knex = knexFactory({ client: ClientPGLite, connection: { pglite } as never });
    } catch (e) {
      await unlock?.();
      throw e;
    }
  }
  const close = async () => {
    try {
      await knex.destroy();
    } finally {
      await unlock?.();
    }
  };
  if (options.migrate !== false) {
    try {
      await migrateToLatest(knex);
    } catch (e) {
      await close().catch(() => {});
      throw e;
    }
  }
  return { knex, kind, close };
}

/**
 * How the drivers return a column, for the row types of the stores (each store's `…FromRow` reads its row once):
 *   int8, count(*)   bigint from pg (the parser above), number from PGlite: `DbBigInt`, read with `toBigInt`
 *   numeric, sum()   string from both: `DbBigInt` too
 *   integer          number
 *   timestamptz      Date
 *   jsonb            the parsed value, or its text where a driver leaves it unparsed: read with `fromJsonb`
 */
export type DbBigInt = bigint | number | string;

/** A jsonb value: parsed by the drivers, or its text. */
export function fromJsonb(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** Read an int8/numeric value (bigint from drivers, string from sums) as bigint. */
export function toBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (value === null || value === undefined) return 0n;
  throw new TypeError(`not an integer amount: ${String(value)}`);
}
