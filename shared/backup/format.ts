/**
 * The backup file (docs/backups.md): JSON Lines, one JSON object per line.
 *
 *   {"type":"header","format":1,"schema":[…migrations],"created_at":…,"database":…,"tables":[{name,columns,rows}],"sequences":[…]}
 *   {"type":"row","table":"accounts","row":{"handle":"alice",…}}        one per row, tables in foreign-key order
 *   {"type":"sequence","name":"journal_entries_id_seq","last_value":"42","is_called":true}
 *   {"type":"end","counts":{"accounts":3,…},"sequences":5,"lines":1234,"sha256":"…"}
 *
 * The trailer's SHA-256 covers every byte before it (each line and its newline): a truncated or edited file is
 * refused. Values keep their exact database text (see columns.ts). Pure: parsing and checking, no I/O.
 */
import { createHash, type Hash } from 'node:crypto';
import { BackupError } from './errors.js';
import { isJsonObject } from '../core/json.js';

export const FORMAT_VERSION = 1;

export interface ColumnSpec {
  name: string;
  /** The column's type as Postgres formats it (`bigint`, `timestamp with time zone`, `jsonb`, `bytea`…). */
  type: string;
}

export interface TableSpec {
  name: string;
  columns: ColumnSpec[];
  /** Rows counted in the backup's snapshot when it started. */
  rows: number;
}

export interface HeaderLine {
  type: 'header';
  format: number;
  /** The applied migrations, in order: the schema version. */
  schema: string[];
  created_at: string;
  database: 'postgres' | 'pglite';
  server_version: string;
  /** In the order their rows follow (every referenced table before the tables referencing it). */
  tables: TableSpec[];
  sequences: string[];
}

/** A value as stored in a row line: text (or base64 for bytea), a boolean, a small integer, or null. */
export type CellValue = string | number | boolean | null;

export interface RowLine {
  type: 'row';
  table: string;
  row: Record<string, CellValue>;
}

export interface SequenceLine {
  type: 'sequence';
  name: string;
  last_value: string;
  is_called: boolean;
}

export interface EndLine {
  type: 'end';
  counts: Record<string, number>;
  sequences: number;
  /** Lines before this one (the header included). */
  lines: number;
  sha256: string;
}

export type BackupLine = HeaderLine | RowLine | SequenceLine | EndLine;

/** A line as written: JSON and its newline. */
export function encodeLine(line: BackupLine): string {
  return `${JSON.stringify(line)}\n`;
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function isCell(v: unknown): v is CellValue {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v));
}

function isTableSpec(v: unknown): v is TableSpec {
  return (
    isJsonObject(v) &&
    typeof v.name === 'string' &&
    isCount(v.rows) &&
    Array.isArray(v.columns) &&
    v.columns.every((c) => isJsonObject(c) && typeof c.name === 'string' && typeof c.type === 'string')
  );
}

/** The header's fields, each of its type (the first line's `type` and `format` are checked first, for their own refusals). */
function isHeaderLine(v: unknown): v is HeaderLine {
  return (
    isJsonObject(v) &&
    v.type === 'header' &&
    v.format === FORMAT_VERSION &&
    isStringArray(v.schema) &&
    typeof v.created_at === 'string' &&
    (v.database === 'postgres' || v.database === 'pglite') &&
    typeof v.server_version === 'string' &&
    Array.isArray(v.tables) &&
    v.tables.every(isTableSpec) &&
    isStringArray(v.sequences)
  );
}

function isRowLine(v: unknown): v is RowLine {
  return isJsonObject(v) && v.type === 'row' && typeof v.table === 'string' && isJsonObject(v.row) && Object.values(v.row).every(isCell);
}

function isSequenceLine(v: unknown): v is SequenceLine {
  return (
    isJsonObject(v) &&
    v.type === 'sequence' &&
    typeof v.name === 'string' &&
    typeof v.last_value === 'string' &&
    /^-?[0-9]+$/.test(v.last_value) &&
    typeof v.is_called === 'boolean'
  );
}

function isEndLine(v: unknown): v is EndLine {
  return (
    isJsonObject(v) &&
    v.type === 'end' &&
    isJsonObject(v.counts) &&
    Object.values(v.counts).every(isCount) &&
    isCount(v.sequences) &&
    isCount(v.lines) &&
    typeof v.sha256 === 'string'
  );
}

/** The first line: the header, or a refusal saying why this is not a backup this binary reads. */
export function parseHeader(text: string | undefined): HeaderLine {
  if (text === undefined || text === '') throw new BackupError('the file is empty: not a Holon backup');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BackupError('the first line is not JSON: not a Holon backup');
  }
  if (!isJsonObject(v) || v.type !== 'header') throw new BackupError('the first line is not a backup header: not a Holon backup');
  if (v.format !== FORMAT_VERSION) throw new BackupError(`backup format ${String(v.format)} is not the format this holon reads (${FORMAT_VERSION})`);
  if (!isHeaderLine(v)) throw new BackupError('the backup header is malformed');
  return v;
}

/** A line after the header: a row, a sequence or the trailer; `lineNo` (1-based) names the line in refusals. */
export function parseBodyLine(text: string, lineNo: number): RowLine | SequenceLine | EndLine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BackupError(`line ${lineNo} is not valid JSON: the file is damaged`);
  }
  if (isRowLine(v) || isSequenceLine(v) || isEndLine(v)) return v;
  throw new BackupError(`line ${lineNo} is not a row, a sequence or the trailer: the file is damaged`);
}

/** The running SHA-256 of the lines before the trailer. */
export class LineDigest {
  private readonly hash: Hash = createHash('sha256');
  lines = 0;
  bytes = 0;

  /** `line` with its newline, exactly as in the file. */
  add(line: string): void {
    this.hash.update(line, 'utf8');
    this.lines++;
    this.bytes += Buffer.byteLength(line, 'utf8');
  }

  hex(): string {
    return this.hash.digest('hex');
  }
}

/** Why a backup of schema `backup` cannot be restored by a binary at `binary`, or null when they are the same. */
export function schemaMismatch(backup: readonly string[], binary: readonly string[]): string | null {
  if (backup.length === binary.length && backup.every((m, i) => m === binary[i])) return null;
  const missing = binary.filter((m) => !backup.includes(m));
  const unknown = backup.filter((m) => !binary.includes(m));
  const parts = [
    `the backup's schema version is ${backup.at(-1) ?? '(none)'} (${backup.length} migrations), this holon's is ${binary.at(-1) ?? '(none)'} (${binary.length})`,
  ];
  if (missing.length) parts.push(`not in the backup: ${missing.join(', ')}`);
  if (unknown.length) parts.push(`unknown to this holon: ${unknown.join(', ')}`);
  if (!missing.length && !unknown.length) parts.push('the same migrations in another order');
  return `${parts.join('; ')}. Restore with the holon version that made the backup`;
}

/** The trailer against what was read: counts per table, sequences, lines and checksum. */
export function checkTrailer(end: EndLine, read: { counts: Record<string, number>; sequences: number; digest: LineDigest }): void {
  if (end.lines !== read.digest.lines)
    throw new BackupError(`the trailer counts ${end.lines} lines before it but the file has ${read.digest.lines}: the file is damaged`);
  const sha = read.digest.hex();
  if (end.sha256 !== sha) throw new BackupError('the checksum does not match the content: the file was changed or damaged');
  const tables = new Set([...Object.keys(end.counts), ...Object.keys(read.counts)]);
  for (const t of tables) {
    if ((end.counts[t] ?? 0) !== (read.counts[t] ?? 0)) {
      throw new BackupError(`table ${t}: the trailer counts ${end.counts[t] ?? 0} rows but the file has ${read.counts[t] ?? 0}`);
    }
  }
  if (end.sequences !== read.sequences) throw new BackupError(`the trailer counts ${end.sequences} sequences but the file has ${read.sequences}`);
}
