/**
 * SQL functions kept as files, one current text each: `<name>.sql` holds exactly one `CREATE OR REPLACE FUNCTION
 * <name>(…)` in the form `pg_get_functiondef` prints it (without the schema), after optional `--` comment lines. The
 * migrator re-applies every file whose text the database does not hold (`applySqlFunctions`, after the versioned
 * migrations, as Flyway's repeatable migrations): a change to a function's body is a change to its file, and nothing else.
 */
import { readFile } from 'node:fs/promises';
import type { Knex } from 'knex';

/** A database handle or an open transaction (as connect.ts's `Queryable`; imported from there, it would be a cycle). */
type Queryable = Knex | Knex.Transaction;

/** A function's file: its name (the file's, without `.sql`) and where it is. */
export interface SqlFunctionFile {
  name: string;
  url: URL;
}

/** The files `<name>.sql` of `names` in the folder of `moduleUrl` (a module's `import.meta.url`). */
export function sqlFunctionFiles(moduleUrl: string, names: readonly string[]): SqlFunctionFile[] {
  return names.map((name) => ({ name, url: new URL(`./${name}.sql`, moduleUrl) }));
}

const SCHEMA_QUALIFIER = /^(CREATE OR REPLACE FUNCTION )(?:"(?:[^"]|"")+"|[^\s."(]+)\./;

/**
 * A function's text as compared: without leading `--` comment lines, without the schema `pg_get_functiondef` puts
 * before the name, without whitespace at either end.
 */
function functionText(sql: string): string {
  const lines = sql.split('\n');
  let first = 0;
  while (first < lines.length && (lines[first]!.startsWith('--') || lines[first]!.trim() === '')) first++;
  return lines.slice(first).join('\n').trim().replace(SCHEMA_QUALIFIER, '$1');
}

/** The text of a function's file, checked to define that function and nothing before it. */
export async function readSqlFunction(file: SqlFunctionFile): Promise<string> {
  const text = functionText(await readFile(file.url, 'utf8'));
  if (!text.startsWith(`CREATE OR REPLACE FUNCTION ${file.name}(`)) {
    throw new Error(`${file.url.pathname} must hold one CREATE OR REPLACE FUNCTION ${file.name}(…)`);
  }
  return text;
}

/** Each function of `names` in the current schema, by name: the texts of its definitions (overloads included). */
export async function definedFunctions(knex: Queryable, names: readonly string[]): Promise<Map<string, string[]>> {
  const res = await knex.raw<{ rows: Array<{ name: string; def: string }> }>(
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = ANY(?::text[]) ORDER BY p.oid`,
    [[...names]],
  );
  const defined = new Map<string, string[]>();
  for (const row of res.rows) defined.set(row.name, [...(defined.get(row.name) ?? []), functionText(row.def)]);
  return defined;
}

/**
 * Creates or replaces each function whose file's text the database does not hold, in one transaction; answers their
 * names (none when every text is current). A function whose arguments or result change needs a versioned migration
 * that drops the old one first: `CREATE OR REPLACE` refuses to change a result type and adds an overload beside a
 * function of other arguments.
 */
export async function applySqlFunctions(knex: Queryable, files: readonly SqlFunctionFile[]): Promise<string[]> {
  const texts = await Promise.all(files.map(async (f) => ({ name: f.name, text: await readSqlFunction(f) })));
  const defined = await definedFunctions(
    knex,
    files.map((f) => f.name),
  );
  const stale = texts.filter((f) => !defined.get(f.name)?.includes(f.text));
  if (stale.length === 0) return [];
  await knex.transaction(async (trx) => {
    // knex reads `?` as a binding: escaped, it reaches the database as it is written.
    for (const f of stale) await trx.raw(f.text.replaceAll('?', '\\?'));
  });
  return stale.map((f) => f.name);
}
