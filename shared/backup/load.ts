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
import { checkTrailer, type ColumnSpec, type EndLine, type HeaderLine, LineDigest, parseBodyLine, type RowLine } from './format.js';
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

/**
 * Load the rest of a backup (`lines`: every line after the header, without newlines) into `db`, whose schema
 * version was already found equal to the header's. `headerText` is the first line as read, for the checksum.
 */
export async function loadBackup(db: Db, header: HeaderLine, headerText: string, lines: AsyncIterator<string>, options: LoadOptions = {}): Promise<Summary> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const digest = new LineDigest();
  digest.add(`${headerText}\n`);
  const rowsTotal = header.tables.reduce((s, t) => s + t.rows, 0);
  const summary = await db.transaction(async (trx) => {
    await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
    await trx.raw(`SET LOCAL DateStyle = 'ISO, YMD'`);
    const tables = await readTables(trx);
    const names = tables.map((t) => t.name);
    // Nobody writes while the copy goes in (reads still answer: empty).
    if (names.length) await trx.raw(`LOCK TABLE ${names.map(ident).join(', ')} IN EXCLUSIVE MODE`);
    const full = await nonEmptyTables(trx, names);
    if (full.length) throw new BackupError(`the target database is not empty: ${full.join(', ')} already hold rows; restore only into an empty database`);
    const columns = new Map(tables.map((t) => [t.name, t.columns]));
    checkTables(header, columns);

    const triggers = await insertTriggers(trx, names);
    await setTriggers(trx, triggers, false);

    const inserter = new Inserter(trx, columns);
    const counts: Record<string, number> = Object.fromEntries(header.tables.map((t) => [t.name, 0]));
    const tableIndex = new Map(header.tables.map((t, i) => [t.name, i]));
    const knownSequences = new Set(header.sequences);
    let sequences = 0;
    let rowsDone = 0;
    let lineNo = 1;
    let end: EndLine | undefined;
    let endBytes = 0;
    for (;;) {
      const next = await lines.next();
      if (next.done) break;
      lineNo++;
      const text = next.value;
      if (end) throw new BackupError(`line ${lineNo}: content after the trailer: the file is damaged`);
      const line = parseBodyLine(text, lineNo);
      if (line.type === 'end') {
        end = line;
        endBytes = Buffer.byteLength(`${text}\n`, 'utf8');
        continue;
      }
      digest.add(`${text}\n`);
      if (line.type === 'row') {
        await inserter.add(line, lineNo, text.length);
        counts[line.table] = (counts[line.table] ?? 0) + 1;
        rowsDone++;
        if (rowsDone % 500 === 0) {
          options.onProgress?.({
            table: line.table,
            tablesDone: tableIndex.get(line.table) ?? 0,
            tablesTotal: header.tables.length,
            rowsDone,
            rowsTotal,
            bytes: digest.bytes,
          });
        }
      } else {
        await inserter.flush();
        if (!knownSequences.has(line.name)) throw new BackupError(`line ${lineNo}: sequence ${line.name}, which the header does not list`);
        await trx.raw('SELECT setval(?::regclass, ?::bigint, ?)', [ident(line.name), line.last_value, line.is_called]);
        sequences++;
      }
    }
    await inserter.flush();
    if (!end) throw new BackupError(`the file ends at line ${lineNo} without its trailer: it is truncated (an interrupted backup or copy)`);
    checkTrailer(end, { counts, sequences, digest });
    for (const t of header.tables) {
      if (counts[t.name] !== t.rows) throw new BackupError(`table ${t.name}: the header counts ${t.rows} rows but the file has ${counts[t.name]}`);
    }

    await setTriggers(trx, triggers, true);
    const off = (await triggerStates(trx)).filter((t) => triggers.some((d) => d.table === t.table && d.name === t.name) && !t.enabled);
    if (off.length) throw new Error(`triggers still off after the restore: ${off.map((t) => `${t.table}.${t.name}`).join(', ')}`);

    const report = await audit(trx);
    if (!report.ok) throw new BackupError(`the restored ledger does not pass the audit, so nothing was restored:\n  ${report.problems.join('\n  ')}`);
    options.onProgress?.({ table: 'done', tablesDone: header.tables.length, tablesTotal: header.tables.length, rowsDone, rowsTotal, bytes: digest.bytes });
    return { schema: header.schema, tables: counts, rows: rowsDone, sequences, bytes: digest.bytes + endBytes, seconds: 0 };
  });
  // The deferred journal checks ran at commit: the duration includes them.
  return { ...summary, seconds: (now().getTime() - started) / 1000 };
}
