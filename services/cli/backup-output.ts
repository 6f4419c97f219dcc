/**
 * What `holon backup` and `holon restore` show: a progress bar on stderr while they work (only on a terminal),
 * then a summary on stdout, in words or as JSON (`--json`).
 */
import cliProgress from 'cli-progress';
import { databaseMessage } from '../../shared/backup/files.js';
import type { OnProgress, Summary } from '../../shared/backup/progress.js';

export interface ProgressDisplay {
  onProgress?: OnProgress;
  stop(): void;
}

export function terminalProgress(verb: string, stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
  if (!stream.isTTY) return { stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${verb} {bar} {percentage}% | {value}/{total} rows | {tablesDone}/{tablesTotal} tables | {table}`,
      hideCursor: true,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    onProgress: (p) => {
      const payload = { table: p.table, tablesDone: p.tablesDone, tablesTotal: p.tablesTotal };
      if (!started) {
        bar.start(Math.max(p.rowsTotal, 1), p.rowsDone, payload);
        started = true;
      } else bar.update(p.rowsDone, payload);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

const count = (n: number) => n.toLocaleString('en-US');

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export interface Report {
  command: 'backup' | 'restore';
  file: string;
  database: string;
  summary: Summary;
}

export function summaryJson(r: Report): string {
  const s = r.summary;
  return `${JSON.stringify({
    command: r.command,
    file: r.file,
    database: r.database,
    schema: s.schema.at(-1) ?? null,
    migrations: s.schema.length,
    tables: s.tables,
    rows: s.rows,
    sequences: s.sequences,
    bytes: s.bytes,
    seconds: s.seconds,
    ...(r.command === 'restore' ? { audit: 'ok' } : {}),
  })}\n`;
}

export function summaryText(r: Report): string {
  const s = r.summary;
  const tables = Object.keys(s.tables).length;
  const head =
    r.command === 'backup'
      ? `backup written: ${r.file}\n  from ${r.database}`
      : `restore done: ${r.file}\n  into ${r.database}, in one transaction; ledger audit ok`;
  const filled = Object.entries(s.tables)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b));
  const empty = tables - filled.length;
  const perTable = `${filled.map(([t, n]) => `${t} ${count(n)}`).join(', ')}${empty ? `${filled.length ? '; ' : ''}${empty} empty` : ''}`;
  return (
    `${head}\n` +
    `  schema ${s.schema.at(-1)} (${s.schema.length} migrations)\n` +
    `  ${tables} tables, ${count(s.rows)} rows, ${s.sequences} sequences, ${size(s.bytes)} in ${s.seconds.toFixed(2)} s\n` +
    `  ${perTable}\n`
  );
}

/** A refusal or failure, in plain words on stderr (never a stack, never a statement with data in it): exit 1. */
export function failed(command: string, e: unknown, err: { write(s: string): unknown } = process.stderr): number {
  err.write(`holon ${command}: ${databaseMessage(e)}\n`);
  return 1;
}
