/**
 * The SQL functions a call runs have one current text, their file (shared/calls/sql/, shared/ledger/sql/;
 * shared/db/sql-functions.ts): on a migrated database `pg_get_functiondef` of each is its file, and `holon_admit`,
 * which no code calls, is gone. A second migration run changes nothing (not a function's row either); a function
 * changed in the database behind the files' back is put back by the next run. On Postgres and on PGlite.
 */
import { describe, expect } from 'vitest';
import { migrate, SQL_FUNCTIONS } from '../../shared/db/migrate.js';
import { definedFunctions, readSqlFunction } from '../../shared/db/sql-functions.js';
import { BACKENDS, dbTest, type TestDatabase } from '../support/db.js';

const NAMES = SQL_FUNCTIONS.map((f) => f.name);

/** Each function's definitions in the database, as compared with its file. */
const defined = async (db: TestDatabase) => Object.fromEntries(await definedFunctions(db.knex, NAMES));

/** Each file's function text. */
const files = async () => Object.fromEntries(await Promise.all(SQL_FUNCTIONS.map(async (f) => [f.name, [await readSqlFunction(f)]])));

/** The row version of each function's catalog row: a CREATE OR REPLACE gives it a new one. */
const catalogVersions = async (db: TestDatabase) =>
  (
    await db.knex.raw<{ rows: Array<{ proname: string; xmin: string }> }>(
      `SELECT proname, xmin::text FROM pg_proc WHERE proname = ANY(?::text[]) ORDER BY proname`,
      [NAMES],
    )
  ).rows;

for (const backend of BACKENDS) {
  const test = dbTest(backend);
  describe(`SQL functions from their files on ${backend}`, () => {
    test('each function the call runs is exactly its file, once; holon_admit is gone', async ({ db }) => {
      expect(NAMES).toEqual(
        expect.arrayContaining(['holon_admit_one', 'holon_admit_batch', 'holon_reserve', 'holon_settle_shared', 'holon_settle_batch', 'holon_log_append']),
      );
      expect(await defined(db)).toEqual(await files());
      const admit = await db.knex.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_proc WHERE proname = 'holon_admit'`);
      expect(admit.rows).toEqual([]);
    });

    test('a second migration run applies nothing and replaces no function', async ({ db }) => {
      const before = await catalogVersions(db);
      expect(before).toHaveLength(NAMES.length);
      const again = await migrate(db.knex);
      expect(again).toMatchObject({ applied: [], functions: [] });
      expect(await catalogVersions(db)).toEqual(before);
    });

    test('a function changed in the database is put back from its file by the next run, and only it', async ({ db }) => {
      await db.knex.raw(`CREATE OR REPLACE FUNCTION holon_reserve(p_mandate text, p_amount bigint, p_account text, p_currency text, p_hold text, p_call text)
        RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'reserved'; END $$`);
      expect((await defined(db)).holon_reserve).not.toEqual((await files()).holon_reserve);
      expect(await migrate(db.knex)).toMatchObject({ applied: [], functions: ['holon_reserve'] });
      expect(await defined(db)).toEqual(await files());
      expect(await migrate(db.knex)).toMatchObject({ functions: [] });
    });
  });
}
