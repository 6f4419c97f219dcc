/**
 * Loading a backup into an empty, migrated database, in ONE transaction: a refusal or a failure at any line
 * (damaged, truncated, a row the database refuses, a ledger that does not audit) rolls everything back.
 *
 * Inside it: the tables are locked and checked empty, their columns checked against the header, the user triggers
 * that fire on INSERT turned off (none today: the append-only triggers fire on UPDATE, DELETE and TRUNCATE only),
 * rows inserted in batches in the file's order (foreign keys satisfied, constraints on), sequences set, the trailer
 * checked (counts, SHA-256), the triggers turned back on, and the ledger audit run; the deferred journal-balance
 * triggers check every restored entry when the transaction commits.
 */
import type { Db, Tx } from '../db/connect.js';
import { audit } from '../ledger/audit.js';
import { ident, insertBatchRows, writeExpression } from './columns.js';
import { insertTriggers, nonEmptyTables, readTables, triggerStates, type InsertTrigger } from './catalog.js';
import { BackupError } from './errors.js';
import { checkTrailer, type ColumnSpec, type EndLine, type HeaderLine, LineDigest, parseBodyLine, type RowLine, type SequenceLine } from './format.js';
import type { OnProgress, Summary } from './progress.js';

export interface LoadOptions {
  onProgress?: OnProgress;
  now?: () => Date;
}

/** A batch flushes past this much file text, whatever its row count. */
const BATCH_TEXT_LIMIT = 8 * 1024 * 1024;

const columnsText = (cs: readonly ColumnSpec[]) => cs.map((c) => `${c.name} ${c.type}`).join(', ');

/** The target's tables and columns are the backup's, exactly (the schema version matched; this checks the tables). */
function checkTables(header: HeaderLine, target: Map<string, ColumnSpec[]>): void {
  for (const t of header.tables) {
    const cols = target.get(t.name);
    if (!cols) throw new BackupError(`the backup has a table ${t.name} that the target database does not`);
    const want = [...t.columns].sort((a, b) => a.name.localeCompare(b.name));
    const have = [...cols].sort((a, b) => a.name.localeCompare(b.name));
    if (columnsText(want) !== columnsText(have)) {
      throw new BackupError(`table ${t.name}: the backup's columns (${columnsText(t.columns)}) are not the target's (${columnsText(cols)})`);
    }
  }
  const inHeader = new Set(header.tables.map((t) => t.name));
  const extra = [...target.keys()].filter((t) => !inHeader.has(t));
  if (extra.length) throw new BackupError(`the target database has tables the backup does not list: ${extra.join(', ')}`);
}

class Inserter {
  private table = '';
  private rows: RowLine['row'][] = [];
  private text = 0;

  constructor(
    private readonly trx: Tx,
    private readonly columns: Map<string, ColumnSpec[]>,
  ) {}

  async add(line: RowLine, lineNo: number, size: number): Promise<void> {
    const cols = this.columns.get(line.table);
    if (!cols) throw new BackupError(`line ${lineNo}: a row of table ${line.table}, which the header does not list`);
    const keys = Object.keys(line.row);
    if (keys.length !== cols.length || !cols.every((c) => Object.hasOwn(line.row, c.name))) {
      throw new BackupError(`line ${lineNo}: a ${line.table} row with the columns ${keys.join(', ')}, not the table's`);
    }
    if (line.table !== this.table) await this.flush();
    this.table = line.table;
    this.rows.push(line.row);
    this.text += size;
    if (this.rows.length >= insertBatchRows(cols) || this.text >= BATCH_TEXT_LIMIT) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.rows.length) return;
    const cols = this.columns.get(this.table)!;
    const tuple = `(${cols.map(writeExpression).join(', ')})`;
    const sql = `INSERT INTO ${ident(this.table)} (${cols.map((c) => ident(c.name)).join(', ')}) OVERRIDING SYSTEM VALUE VALUES ${this.rows.map(() => tuple).join(', ')}`;
    const bindings = this.rows.flatMap((r) => cols.map((c) => r[c.name] ?? null));
    this.rows = [];
    this.text = 0;
    await this.trx.raw(sql, bindings);
  }
}

async function setTriggers(trx: Tx, triggers: readonly InsertTrigger[], on: boolean): Promise<void> {
  for (const t of triggers) await trx.raw(`ALTER TABLE ${ident(t.table)} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${ident(t.name)}`);
}

/** A backup to load: the header (read and checked) and the rest of its lines, and the database to load it into. */
interface BackupToLoad {
  /** Empty and migrated; its schema version was already found equal to the header's. */
  db: Db;
  header: HeaderLine;
  /** The first line as read, for the checksum. */
  headerText: string;
  /** Every line after the header, without newlines. */
  lines: AsyncIterator<string>;
  options?: LoadOptions;
}

/** Load the rest of a backup into its database, in one transaction; the summary's duration includes the commit. */
export async function loadBackup({ db, header, headerText, lines, options = {} }: BackupToLoad): Promise<Summary> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const digest = new LineDigest();
  digest.add(`${headerText}\n`);
  const summary = await db.transaction(async (trx) => {
    const { columns, triggers } = await openTarget(trx, header);
    const copy = new BodyCopy(trx, header, columns, { digest, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    await copy.readAll(lines);
    checkCopied(header, copy, digest);
    await restoreTriggers(trx, triggers);
    const report = await audit(trx);
    if (!report.ok) throw new BackupError(`the restored ledger does not pass the audit, so nothing was restored:\n  ${report.problems.join('\n  ')}`);
    copy.progress('done', header.tables.length);
    return { schema: header.schema, tables: copy.counts, rows: copy.rowsDone, sequences: copy.sequences, bytes: digest.bytes + copy.endBytes, seconds: 0 };
  });
  // The deferred journal checks ran at commit: the duration includes them.
  return { ...summary, seconds: (now().getTime() - started) / 1000 };
}

/**
 * The target made ready: UTC and ISO dates, its tables locked (nobody writes while the copy goes in; reads still
 * answer: empty) and checked empty and equal to the backup's, the user triggers that fire on INSERT turned off.
 */
async function openTarget(trx: Tx, header: HeaderLine): Promise<{ columns: Map<string, ColumnSpec[]>; triggers: InsertTrigger[] }> {
  await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
  await trx.raw(`SET LOCAL DateStyle = 'ISO, YMD'`);
  const tables = await readTables(trx);
  const names = tables.map((t) => t.name);
  if (names.length) await trx.raw(`LOCK TABLE ${names.map(ident).join(', ')} IN EXCLUSIVE MODE`);
  const full = await nonEmptyTables(trx, names);
  if (full.length) throw new BackupError(`the target database is not empty: ${full.join(', ')} already hold rows; restore only into an empty database`);
  const columns = new Map(tables.map((t) => [t.name, t.columns]));
  checkTables(header, columns);
  const triggers = await insertTriggers(trx, names);
  await setTriggers(trx, triggers, false);
  return { columns, triggers };
}

/** The body of the file, line by line: rows inserted in batches, sequences set, the trailer kept for the checks. */
class BodyCopy {
  readonly counts: Record<string, number>;
  sequences = 0;
  rowsDone = 0;
  /** The line last read (the header is line 1). */
  lineNo = 1;
  end: EndLine | undefined;
  /** The trailer's own bytes: the file's size is the digest's bytes plus these. */
  endBytes = 0;
  private readonly inserter: Inserter;
  private readonly rowsTotal: number;
  private readonly tableIndex: Map<string, number>;
  private readonly knownSequences: Set<string>;

  constructor(
    private readonly trx: Tx,
    private readonly header: HeaderLine,
    columns: Map<string, ColumnSpec[]>,
    private readonly read: { digest: LineDigest; onProgress?: OnProgress },
  ) {
    this.inserter = new Inserter(trx, columns);
    this.counts = Object.fromEntries(header.tables.map((t) => [t.name, 0]));
    this.rowsTotal = header.tables.reduce((s, t) => s + t.rows, 0);
    this.tableIndex = new Map(header.tables.map((t, i) => [t.name, i]));
    this.knownSequences = new Set(header.sequences);
  }

  async readAll(lines: AsyncIterator<string>): Promise<void> {
    for (;;) {
      const next = await lines.next();
      if (next.done) break;
      await this.line(next.value);
    }
    await this.inserter.flush();
  }

  /** Where the copy is, to `onProgress`. */
  progress(table: string, tablesDone: number): void {
    const { rowsDone, rowsTotal } = this;
    this.read.onProgress?.({ table, tablesDone, tablesTotal: this.header.tables.length, rowsDone, rowsTotal, bytes: this.read.digest.bytes });
  }

  private async line(text: string): Promise<void> {
    this.lineNo++;
    const { lineNo } = this;
    if (this.end) throw new BackupError(`line ${lineNo}: content after the trailer: the file is damaged`);
    const line = parseBodyLine(text, lineNo);
    if (line.type === 'end') {
      this.end = line;
      this.endBytes = Buffer.byteLength(`${text}\n`, 'utf8');
      return;
    }
    this.read.digest.add(`${text}\n`);
    if (line.type === 'row') await this.row(line, text);
    else await this.sequence(line);
  }

  private async row(line: RowLine, text: string): Promise<void> {
    await this.inserter.add(line, this.lineNo, text.length);
    this.counts[line.table] = (this.counts[line.table] ?? 0) + 1;
    this.rowsDone++;
    if (this.rowsDone % 500 === 0) this.progress(line.table, this.tableIndex.get(line.table) ?? 0);
  }

  private async sequence(line: SequenceLine): Promise<void> {
    await this.inserter.flush();
    if (!this.knownSequences.has(line.name)) throw new BackupError(`line ${this.lineNo}: sequence ${line.name}, which the header does not list`);
    await this.trx.raw('SELECT setval(?::regclass, ?::bigint, ?)', [ident(line.name), line.last_value, line.is_called]);
    this.sequences++;
  }
}

/** The file was whole: its trailer is there and agrees (counts, SHA-256), and each table has the rows the header counts. */
function checkCopied(header: HeaderLine, copy: BodyCopy, digest: LineDigest): void {
  const { end, counts, sequences } = copy;
  if (!end) throw new BackupError(`the file ends at line ${copy.lineNo} without its trailer: it is truncated (an interrupted backup or copy)`);
  checkTrailer(end, { counts, sequences, digest });
  for (const t of header.tables) {
    if (counts[t.name] !== t.rows) throw new BackupError(`table ${t.name}: the header counts ${t.rows} rows but the file has ${counts[t.name]}`);
  }
}

/** The triggers turned off for the copy turned back on, and found on. */
async function restoreTriggers(trx: Tx, triggers: readonly InsertTrigger[]): Promise<void> {
  await setTriggers(trx, triggers, true);
  const off = (await triggerStates(trx)).filter((t) => triggers.some((d) => d.table === t.table && d.name === t.name) && !t.enabled);
  if (off.length) throw new Error(`triggers still off after the restore: ${off.map((t) => `${t.table}.${t.name}`).join(', ')}`);
}
