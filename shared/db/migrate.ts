/**
 * Forward-only knex migrations, listed here in order (no directory scanning), then the SQL functions kept as files
 * (`SQL_FUNCTIONS`, shared/db/sql-functions.ts): each applied when the database does not hold its text.
 */
import type { Knex } from 'knex';
import { CALL_SQL_FUNCTIONS } from '../calls/sql/index.js';
import { LEDGER_SQL_FUNCTIONS } from '../ledger/sql/index.js';
import { applySqlFunctions, type SqlFunctionFile } from './sql-functions.js';
import * as m001 from './migrations/001_ledger.js';
import * as m002 from './migrations/002_calls.js';
import * as m003 from './migrations/003_call_lifecycle.js';
import * as m004 from './migrations/004_approvals.js';
import * as m005 from './migrations/005_delegation.js';
import * as m006 from './migrations/006_hosted.js';
import * as m007 from './migrations/007_money_functions.js';
import * as m008 from './migrations/008_settlements_that_move_nothing.js';
import * as m009 from './migrations/009_github_sign_in.js';
import * as m010 from './migrations/010_published_versions.js';
import * as m011 from './migrations/011_agent_credentials.js';
import * as m012 from './migrations/012_files.js';
import * as m013 from './migrations/013_evaluations.js';
import * as m014 from './migrations/014_settle_batch.js';
import * as m015 from './migrations/015_webhooks.js';
import * as m016 from './migrations/016_mcp_tasks.js';
import * as m017 from './migrations/017_admit.js';
import * as m018 from './migrations/018_receipts_by_payer.js';
import * as m019 from './migrations/019_log_retention.js';
import * as m020 from './migrations/020_admit_batch.js';
import * as m021 from './migrations/021_receipt_log.js';
import * as m022 from './migrations/022_search_documents.js';
import * as m023 from './migrations/023_sign_in_nonce.js';
import * as m026 from './migrations/026_receipt_requester.js';
import * as m027 from './migrations/027_admit_by_call_id.js';
import * as m028 from './migrations/028_drop_holon_admit.js';
import * as m029 from './migrations/029_payments_from_outside.js';
import * as m030 from './migrations/030_call_streams.js';
import * as m031 from './migrations/031_mcp_sign_in.js';
import * as m032 from './migrations/032_a2a_cards.js';
import * as m033 from './migrations/033_a2a_tasks.js';
import * as m034 from './migrations/034_a2a_push.js';
import * as m035 from './migrations/035_budget_leases.js';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Each migration file is a name and its statements, run in order, one per query (PGlite takes one at a time). */
function forwardOnly(m: { name: string; statements: readonly string[] }): Migration {
  return {
    name: m.name,
    up: async (knex) => {
      for (const sql of m.statements) await knex.raw(sql);
    },
    down: async () => {
      throw new Error('migrations are forward-only');
    },
  };
}

export const MIGRATIONS: readonly Migration[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m009,
  m010,
  m011,
  m012,
  m013,
  m014,
  m015,
  m016,
  m017,
  m018,
  m019,
  m020,
  m021,
  m022,
  m023,
  m026,
  m027,
  m028,
  m029,
  m030,
  m031,
  m032,
  m033,
  m034,
  m035,
].map(forwardOnly);

/** The SQL functions kept as files, applied after the migrations: the current text of each. */
export const SQL_FUNCTIONS: readonly SqlFunctionFile[] = [...LEDGER_SQL_FUNCTIONS, ...CALL_SQL_FUNCTIONS];

const source: Knex.MigrationSource<Migration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

/**
 * The key of the Postgres advisory lock every migration run takes first (`pg_advisory_lock`, session level): one
 * fixed number for every Holon process on a database, whatever its role or release. Knex's own lock
 * (`knex_migrations_lock`) cannot be the only one: the tables it lives in are created, on a brand-new database,
 * before it is taken, so processes started together on one race there and the losers fail ("relation
 * knex_migrations already exists", or "Migration table is already locked" once two of them inserted a lock row).
 */
const MIGRATION_LOCK_KEY = '7310582064377125229';

/** What `migrateToLatest` answers: the migrations it applied (oldest first) and every migration now applied. */
export interface Migrated {
  applied: string[];
  /** The SQL functions whose file's text the database did not hold, created or replaced by this run. */
  functions: string[];
  /** The name of the newest migration applied to the database (its schema version), after this run. */
  schema: string;
  /** How many migrations the database has now. */
  total: number;
}

/** Only one process migrates a Postgres database at a time; the others wait for it, then find nothing to do. */
export async function migrateToLatest(knex: Knex): Promise<string[]> {
  return (await migrate(knex)).applied;
}

/** `migrateToLatest`, answering what was applied and what the schema is now (`holon migrate`). */
export async function migrate(knex: Knex): Promise<Migrated> {
  const { applied, functions } = await underMigrationLock(knex, async () => {
    const [, names] = (await knex.migrate.latest({ migrationSource: source })) as [number, string[]];
    return { applied: names, functions: await applySqlFunctions(knex, SQL_FUNCTIONS) };
  });
  return { applied, functions, schema: MIGRATIONS.at(-1)!.name, total: MIGRATIONS.length };
}

interface RawConnection {
  query(sql: string, values?: unknown[]): Promise<unknown>;
}

/**
 * Runs `work` holding the migration lock. On Postgres the lock lives on a connection of its own, outside the pool (so
 * a pool of one still has its connection for the migrations), and ends with it: a process killed while it migrates
 * (its transaction rolls back) releases it as its connection closes. PGlite is one process at a time anyway
 * (pglite-lock.ts): nothing to take.
 */
async function underMigrationLock<T>(knex: Knex, work: () => Promise<T>): Promise<T> {
  // knex-pglite is a subclass of knex's pg client: only the configured client name tells them apart.
  if ((knex.client.config as { client?: unknown }).client !== 'pg') return work();
  const connection = (await knex.client.acquireRawConnection()) as RawConnection;
  try {
    await connection.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    try {
      return await work();
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await knex.client.destroyRawConnection(connection).catch(() => undefined);
  }
}
