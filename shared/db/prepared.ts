import type { Knex } from 'knex';

/**
 * Named prepared statements for the call's hot path (docs/PERFORMANCE.md): a statement of fixed text, sent with a
 * name, is parsed and planned once per connection by Postgres, then only bound and executed (node-postgres keeps the
 * name per connection; knex hands the option to the driver; PGlite ignores it). Only for statements whose text never
 * changes and whose result columns are named (a `SELECT *` would fail its cached plan once a migration added a column).
 */
export const namedStatement = (name: string): { name: string } => ({ name: `holon_${name}` });

/** A statement's text and its bindings, for a statement that embeds it (a CTE of the settlement's write). */
export interface SqlFragment {
  sql: string;
  bindings: readonly Knex.RawBinding[];
}

/** What an `unnestInsert` adds to the rows: columns set to one expression for all (`now()`), and a conflict skipped. */
interface UnnestInsertExtras {
  /** Column → a fixed SQL expression (trusted text, never input). */
  set?: Readonly<Record<string, string>>;
  /** The unique columns whose conflict leaves the existing row (`ON CONFLICT (…) DO NOTHING`). */
  skipConflictOn?: readonly string[];
}

/**
 * An INSERT of rows of fixed text, whatever their number: each column one array (`unnest`), typed as `columns` says
 * (in their order). For a statement that embeds it: its text does not grow with the rows, so it is not rebuilt for
 * each batch, and the statement can be prepared.
 */
export function unnestInsert<Row>(
  table: string,
  columns: ReadonlyArray<readonly [keyof Row & string, string]>,
  extras: UnnestInsertExtras = {},
): (rows: readonly Row[]) => SqlFragment {
  const set = Object.entries(extras.set ?? {});
  const names = [...columns.map(([c]) => c), ...set.map(([c]) => c)].join(', ');
  const values = ['*', ...set.map(([, expression]) => expression)].join(', ');
  const conflict = extras.skipConflictOn ? ` ON CONFLICT (${extras.skipConflictOn.join(', ')}) DO NOTHING` : '';
  const sql = `INSERT INTO ${table} (${names}) SELECT ${values} FROM unnest(${columns.map(([, t]) => `?::${t}[]`).join(', ')})${conflict}`;
  return (rows) => ({ sql, bindings: columns.map(([column]) => rows.map((r) => r[column])) as Knex.Value[] });
}
