/**
 * What is in the database, read from Postgres's own catalog (the same on Postgres and PGlite): the tables of the
 * current schema but the migrations' own, their columns, foreign keys, sequences, the applied migrations and the
 * user triggers that fire on INSERT. Backups and restores follow the schema as it is, so a new migration's table is
 * in the next backup without a change here.
 */
import type { Queryable } from '../db/connect.js';
import type { ColumnSpec } from './format.js';
import { ident } from './columns.js';
import { type ForeignKey, tablesInDependencyOrder } from './order.js';

/** knex's bookkeeping: restore writes it by running the migrations, never from the file. */
export const MIGRATION_TABLES = ['knex_migrations', 'knex_migrations_lock'] as const;

export interface TableInfo {
  name: string;
  columns: ColumnSpec[];
  primaryKey: string[];
  /** A foreign key from the table to itself (mandates, calls, holds): its rows go parents first. */
  selfReference?: { column: string; references: string };
}

/** The rows of one catalog query, each with the columns that query selects (as the driver returns them). */
async function rows<Row extends object>(db: Queryable, sql: string, bindings: readonly unknown[] = []): Promise<Row[]> {
  const r = await db.raw<{ rows: Row[] }>(sql, bindings as never);
  return r.rows;
}

const EXCLUDED = `(${MIGRATION_TABLES.map((t) => `'${t}'`).join(', ')})`;

async function tableNames(db: Queryable): Promise<string[]> {
  const r = await rows<{ name: string }>(
    db,
    `SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname NOT IN ${EXCLUDED}
      ORDER BY c.relname`,
  );
  return r.map((x) => String(x.name));
}

async function columnsOf(db: Queryable, table: string): Promise<ColumnSpec[]> {
  // Generated columns are computed again on insert: they are neither written nor read.
  const r = await rows<{ name: string; type: string }>(
    db,
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a
      WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY a.attnum`,
    [ident(table)],
  );
  return r.map((x) => ({ name: String(x.name), type: String(x.type) }));
}

interface Constraint {
  table: string;
  references: string;
  columns: string[];
  referenced: string[];
  kind: string;
}

async function constraints(db: Queryable): Promise<Constraint[]> {
  const r = await rows<{ kind: string; table: string; references: string; columns: string[]; referenced: string[] }>(
    db,
    `SELECT c.contype AS kind, t.relname AS "table", coalesce(f.relname, '') AS "references",
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
            array(SELECT a.attname::text FROM unnest(coalesce(c.confkey, '{}')) WITH ORDINALITY k(n, i)
                   JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS referenced
       FROM pg_constraint c
       JOIN pg_class t ON t.oid = c.conrelid
       LEFT JOIN pg_class f ON f.oid = c.confrelid
      WHERE c.connamespace = current_schema()::regnamespace AND c.contype IN ('f', 'p')`,
  );
  return r.map((x) => ({
    kind: String(x.kind),
    table: String(x.table),
    references: String(x.references),
    columns: x.columns,
    referenced: x.referenced,
  }));
}

/** Every table, in an order that satisfies the foreign keys, with its columns, primary key and self-reference. */
export async function readTables(db: Queryable): Promise<TableInfo[]> {
  const names = await tableNames(db);
  const all = await constraints(db);
  const keys: ForeignKey[] = all.filter((c) => c.kind === 'f').map((c) => ({ table: c.table, references: c.references }));
  const out: TableInfo[] = [];
  for (const name of tablesInDependencyOrder(names, keys)) {
    const selfRefs = all.filter((c) => c.kind === 'f' && c.table === name && c.references === name);
    if (selfRefs.length > 1 || selfRefs.some((c) => c.columns.length !== 1)) {
      throw new Error(`table ${name} references itself through more than one single column: not supported by backups`);
    }
    const self = selfRefs[0];
    out.push({
      name,
      columns: await columnsOf(db, name),
      primaryKey: all.find((c) => c.kind === 'p' && c.table === name)?.columns ?? [],
      ...(self ? { selfReference: { column: self.columns[0]!, references: self.referenced[0]! } } : {}),
    });
  }
  return out;
}

/** The sequences of the current schema (bigserial counters), the migrations' own excepted. */
export async function readSequences(db: Queryable): Promise<string[]> {
  const r = await rows<{ name: string }>(
    db,
    `SELECT s.relname AS name FROM pg_class s
       LEFT JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype IN ('a', 'i')
       LEFT JOIN pg_class owner ON owner.oid = d.refobjid
      WHERE s.relkind = 'S' AND s.relnamespace = current_schema()::regnamespace
        AND (owner.relname IS NULL OR owner.relname NOT IN ${EXCLUDED})
      ORDER BY s.relname`,
  );
  return r.map((x) => String(x.name));
}

export async function readSequence(db: Queryable, name: string): Promise<{ last_value: string; is_called: boolean }> {
  const [r] = await rows<{ last_value: string; is_called: boolean }>(db, `SELECT last_value::text AS last_value, is_called FROM ${ident(name)}`);
  return { last_value: String(r!.last_value), is_called: r!.is_called === true };
}

/** The applied migrations, in the order they ran (none when the database was never migrated). */
export async function appliedMigrations(db: Queryable): Promise<string[]> {
  const [exists] = await rows<{ present: boolean }>(db, `SELECT to_regclass('knex_migrations') IS NOT NULL AS present`);
  if (!exists?.present) return [];
  return (await rows<{ name: string }>(db, `SELECT name FROM knex_migrations ORDER BY id`)).map((x) => String(x.name));
}

/** Tables that hold at least one row. */
export async function nonEmptyTables(db: Queryable, tables: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const t of tables) if ((await rows<{ any: boolean }>(db, `SELECT EXISTS (SELECT 1 FROM ${ident(t)}) AS any`))[0]?.any) found.push(t);
  return found;
}

export interface InsertTrigger {
  table: string;
  name: string;
}

/**
 * Enabled user triggers that fire on INSERT and are not constraint triggers: the ones a restore turns off, so that
 * they neither refuse nor alter a copied row. The append-only triggers fire on UPDATE, DELETE and TRUNCATE only
 * (they never meet an INSERT), and the deferred journal-balance constraint triggers stay on: the restored journal
 * must balance at commit like any other.
 */
export async function insertTriggers(db: Queryable, tables: readonly string[]): Promise<InsertTrigger[]> {
  if (!tables.length) return [];
  const r = await rows<{ table: string; name: string }>(
    db,
    `SELECT c.relname AS "table", t.tgname AS name
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(?::text[])
        AND NOT t.tgisinternal AND t.tgconstraint = 0 AND (t.tgtype & 4) <> 0 AND t.tgenabled <> 'D'
      ORDER BY c.relname, t.tgname`,
    [tables],
  );
  return r.map((x) => ({ table: String(x.table), name: String(x.name) }));
}

/** Every user trigger on the tables and whether it is enabled: restore's proof that it turned back on what it turned off. */
export async function triggerStates(db: Queryable): Promise<Array<{ table: string; name: string; enabled: boolean }>> {
  const r = await rows<{ table: string; name: string; enabled: boolean }>(
    db,
    `SELECT c.relname AS "table", t.tgname AS name, t.tgenabled <> 'D' AS enabled
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
      ORDER BY c.relname, t.tgname`,
  );
  return r.map((x) => ({ table: String(x.table), name: String(x.name), enabled: x.enabled === true }));
}
