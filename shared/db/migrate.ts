/**
 * Forward-only knex migrations, listed here in order (no directory scanning, so they run the same
 * under tsx, vitest and a bundled build).
 */
import type { Knex } from 'knex';
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
].map(forwardOnly);

const source: Knex.MigrationSource<Migration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

export async function migrateToLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}
