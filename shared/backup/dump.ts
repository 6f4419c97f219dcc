/**
 * Writing a backup: every row of every table and every sequence, from one consistent snapshot (a REPEATABLE READ,
 * READ ONLY transaction: a gateway may keep serving meanwhile), read through a cursor in batches so no table is
 * ever held in memory whole. `write` receives the file's text line by line and should wait when its sink is full.
 */
import type { Db, Tx } from '../db/connect.js';
import { fetchBatchRows, ident, readExpression } from './columns.js';
import { appliedMigrations, readSequence, readSequences, readTables, type TableInfo } from './catalog.js';
import { type CellValue, encodeLine, FORMAT_VERSION, type HeaderLine, LineDigest, type TableSpec } from './format.js';
import type { OnProgress, Summary } from './progress.js';

export interface DumpOptions {
  kind: 'postgres' | 'pglite';
  write(text: string): Promise<void>;
  onProgress?: OnProgress;
  /** The clock, for created_at and the duration. */
  now?: () => Date;
}

/** The query reading a table in insert order: by primary key, and for a self-referencing table parents first. */
function selectRows(t: TableInfo): string {
  const list = t.columns.map((c) => `${readExpression(c, 't')} AS ${ident(c.name)}`).join(', ');
  const order = t.primaryKey.map((c) => `t.${ident(c)}`);
  if (!t.selfReference) return `SELECT ${list} FROM ${ident(t.name)} t${order.length ? ` ORDER BY ${order.join(', ')}` : ''}`;
  const child = ident(t.selfReference.column);
  const key = ident(t.selfReference.references);
  return `WITH RECURSIVE tree(key, depth) AS (
            SELECT ${key}, 0 FROM ${ident(t.name)} WHERE ${child} IS NULL
            UNION ALL
            SELECT c.${key}, tree.depth + 1 FROM ${ident(t.name)} c JOIN tree ON c.${child} = tree.key
          )
          SELECT ${list} FROM ${ident(t.name)} t JOIN tree ON tree.key = t.${key}
          ORDER BY tree.depth${order.length ? `, ${order.join(', ')}` : ''}`;
}

async function countRows(trx: Tx, table: string): Promise<number> {
  const r = await trx.raw<{ rows: Array<{ n: string }> }>(`SELECT count(*)::text AS n FROM ${ident(table)}`);
  return Number(r.rows[0]!.n);
}

export async function dumpDatabase(db: Db, options: DumpOptions): Promise<Summary> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const digest = new LineDigest();
  const put = async (text: string) => {
    digest.add(text);
    await options.write(text);
  };
  return db.transaction(async (trx) => {
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // Timestamps written in UTC and ISO; floats with every digit.
    await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
    await trx.raw(`SET LOCAL DateStyle = 'ISO, YMD'`);
    await trx.raw('SET LOCAL extra_float_digits = 3');
    const schema = await appliedMigrations(trx);
    const tables = await readTables(trx);
    const sequences = await readSequences(trx);
    const specs: TableSpec[] = [];
    for (const t of tables) specs.push({ name: t.name, columns: t.columns, rows: await countRows(trx, t.name) });
    const version = (await trx.raw<{ rows: Array<{ v: string }> }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v;
    const header: HeaderLine = {
      type: 'header',
      format: FORMAT_VERSION,
      schema,
      created_at: now().toISOString(),
      database: options.kind,
      server_version: version,
      tables: specs,
      sequences,
    };
    await put(encodeLine(header));

    const counts: Record<string, number> = {};
    const rowsTotal = specs.reduce((s, t) => s + t.rows, 0);
    let rowsDone = 0;
    for (const [i, t] of tables.entries()) {
      let read = 0;
      await trx.raw(`DECLARE holon_backup NO SCROLL CURSOR FOR ${selectRows(t)}`);
      const batch = fetchBatchRows(t.columns);
      for (;;) {
        const got = (await trx.raw<{ rows: Array<Record<string, CellValue>> }>(`FETCH FORWARD ${batch} FROM holon_backup`)).rows;
        for (const row of got) await put(encodeLine({ type: 'row', table: t.name, row }));
        read += got.length;
        rowsDone += got.length;
        options.onProgress?.({ table: t.name, tablesDone: i, tablesTotal: tables.length, rowsDone, rowsTotal, bytes: digest.bytes });
        if (got.length < batch) break;
      }
      await trx.raw('CLOSE holon_backup');
      counts[t.name] = read;
      if (read !== specs[i]!.rows) {
        // Only a self-reference cycle can lose rows here (a row whose parents never reach a root).
        throw new Error(`table ${t.name}: ${specs[i]!.rows} rows counted but ${read} read (a cycle in ${t.selfReference?.column ?? 'its rows'}?)`);
      }
    }
    for (const name of sequences) await put(encodeLine({ type: 'sequence', name, ...(await readSequence(trx, name)) }));
    const trailer = encodeLine({ type: 'end', counts, sequences: sequences.length, lines: digest.lines, sha256: digest.hex() });
    const bytes = digest.bytes + Buffer.byteLength(trailer, 'utf8');
    await options.write(trailer);
    options.onProgress?.({ table: 'done', tablesDone: tables.length, tablesTotal: tables.length, rowsDone, rowsTotal, bytes });
    return { schema, tables: counts, rows: rowsDone, sequences: sequences.length, bytes, seconds: (now().getTime() - started) / 1000 };
  });
}
