/**
 * What `holon backup` and `holon restore` show: a progress bar on stderr while they work (only on a terminal),
 * then a summary on stdout, in words or as JSON (`--json`).
 */
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { databaseMessage } from '../../shared/backup/errors.js';
import type { OnProgress, Summary } from '../../shared/backup/progress.js';
import type { Database } from '../../shared/db/connect.js';
import { databaseTarget, openTarget, targetMisuse } from './database-target.js';

interface ProgressDisplay {
  onProgress?: OnProgress;
  stop(): void;
}

function terminalProgress(verb: string, stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
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

interface Report {
  command: 'backup' | 'restore';
  file: string;
  database: string;
  summary: Summary;
}

function summaryJson(r: Report): string {
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

function summaryText(r: Report): string {
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

/** What differs between `holon backup` and `holon restore`; the rest (options, target, progress, summary) is shared. */
export interface FileCommand {
  command: 'backup' | 'restore';
  /** The option naming the file: `--out` for a backup, `--in` for a restore. */
  fileOption: 'out' | 'in';
  usage: string;
  /** Whether the target must already exist (a PGlite directory to back up) or may be created (a restore). */
  mustExist: boolean;
  run(db: Database, file: string, options: { onProgress?: OnProgress }): Promise<Summary>;
}

/** Parse `--<file> FILE [--db DIR] [--json]`, open the target, run with a progress bar, print the summary. */
export async function runFileCommand(spec: FileCommand, argv: string[], env: NodeJS.ProcessEnv, out: { write(s: string): unknown }): Promise<number> {
  const misused = (message: string) => {
    process.stderr.write(`holon ${spec.command}: ${message}\n${spec.usage}`);
    return 2;
  };
  let values: { out?: string; in?: string; db?: string; json?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { [spec.fileOption]: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean', default: false } },
    }));
  } catch (e) {
    return misused((e as Error).message);
  }
  const named = values[spec.fileOption];
  if (!named) return misused(`--${spec.fileOption} FILE is required`);
  const file = path.resolve(named);
  const misuse = targetMisuse(values.db, env);
  if (misuse) return misused(misuse);
  const target = databaseTarget(values.db, env);
  const progress = terminalProgress(spec.command === 'backup' ? 'backup ' : 'restore');
  // A restore may create the PGlite directory it restores into: if it fails, what it created goes again.
  const created = !spec.mustExist && target.dir ? createdBy(target.dir) : undefined;
  try {
    const db = await openTarget(target, spec.mustExist);
    try {
      const summary = await spec.run(db, file, progress.onProgress ? { onProgress: progress.onProgress } : {});
      progress.stop();
      const report = { command: spec.command, file, database: target.label, summary };
      out.write(values.json ? summaryJson(report) : summaryText(report));
      return 0;
    } finally {
      await db.close();
    }
  } catch (e) {
    progress.stop();
    if (created) await removeCreated(created);
    return failed(spec.command, e);
  }
}

/**
 * What opening `dir` would create: the topmost of it and its parents that does not exist yet, or `dir` itself when it
 * exists but is empty (its contents are then what goes); undefined when it already holds something.
 */
function createdBy(dir: string): { path: string; keep: boolean } | undefined {
  if (existsSync(dir)) return readdirSync(dir).length === 0 ? { path: dir, keep: true } : undefined;
  let top = dir;
  while (!existsSync(path.dirname(top)) && path.dirname(top) !== top) top = path.dirname(top);
  return { path: top, keep: false };
}

async function removeCreated(created: { path: string; keep: boolean }): Promise<void> {
  if (!created.keep) return rm(created.path, { recursive: true, force: true });
  for (const entry of readdirSync(created.path)) await rm(path.join(created.path, entry), { recursive: true, force: true });
}
