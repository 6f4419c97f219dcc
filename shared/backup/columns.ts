/**
 * How a column's value travels through a backup, both ways, keeping it exact (pure: SQL text only).
 *
 * - `bytea` (file chunks, encrypted credentials): base64, decoded on restore;
 * - `boolean`, `smallint`, `integer`: JSON booleans and numbers (exact in JSON);
 * - everything else (`bigint` money, `numeric`, `timestamp with time zone` to the microsecond, `jsonb`, text…): the
 *   value's own Postgres text, cast back to the column's type on restore. jsonb's text is kept as a string, not
 *   parsed, so a large number inside it keeps every digit.
 */
import type { ColumnSpec } from './format.js';

/** A quoted SQL identifier. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const NATIVE = new Set(['boolean', 'smallint', 'integer']);

/** The select-list expression that reads `column` of `alias` as it is written in the file. */
export function readExpression(column: ColumnSpec, alias: string): string {
  const col = `${ident(alias)}.${ident(column.name)}`;
  if (column.type === 'bytea') return `replace(encode(${col}, 'base64'), chr(10), '')`;
  if (NATIVE.has(column.type)) return col;
  return `${col}::text`;
}

/** The placeholder that turns a file value back into the column's value. */
export function writeExpression(column: ColumnSpec): string {
  if (column.type === 'bytea') return `decode(?, 'base64')`;
  return `?::${column.type}`;
}

/**
 * Rows per INSERT: at most 500 and 30,000 bound values (Postgres allows 65,535), fewer for tables with bytea
 * columns (a file chunk is 512 KiB); the loader also flushes a batch past 8 MB of file text.
 */
export function insertBatchRows(columns: readonly ColumnSpec[]): number {
  if (columns.some((c) => c.type === 'bytea')) return 16;
  return Math.max(1, Math.min(500, Math.floor(30_000 / Math.max(1, columns.length))));
}

/** Rows per FETCH from the backup's cursor: few for bytea tables, so memory stays bounded. */
export function fetchBatchRows(columns: readonly ColumnSpec[]): number {
  return columns.some((c) => c.type === 'bytea') ? 8 : 1000;
}
