/**
 * `holon backup --out FILE [--db DIR] [--json]`: every row of every table, the sequences and the schema version,
 * from one consistent snapshot of DATABASE_URL (or the PGlite directory), into a JSON Lines file
 * (docs/backups.md). Exit 0 written, 1 refused or failed (the message says why), 2 misused.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { backupToFile } from '../../shared/backup/files.js';
import { failed, summaryJson, summaryText, terminalProgress } from './backup-output.js';
import { databaseTarget, openTarget, targetMisuse } from './database-target.js';

const USAGE = 'usage: holon backup --out FILE [--db DIR] [--json]  (DATABASE_URL, else the PGlite directory --db)\n';

export async function backupCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  let values: { out?: string; db?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { out: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean', default: false } } }));
  } catch (e) {
    process.stderr.write(`holon backup: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.out) {
    process.stderr.write(`holon backup: --out FILE is required\n${USAGE}`);
    return 2;
  }
  const file = path.resolve(values.out);
  const misuse = targetMisuse(values.db, env);
  if (misuse) {
    process.stderr.write(`holon backup: ${misuse}\n${USAGE}`);
    return 2;
  }
  const target = databaseTarget(values.db, env);
  const progress = terminalProgress('backup ');
  try {
    const db = await openTarget(target, true);
    try {
      const summary = await backupToFile(db, file, progress.onProgress ? { onProgress: progress.onProgress } : {});
      progress.stop();
      const report = { command: 'backup' as const, file, database: target.label, summary };
      out.write(values.json ? summaryJson(report) : summaryText(report));
      return 0;
    } finally {
      await db.close();
    }
  } catch (e) {
    progress.stop();
    return failed('backup', e);
  }
}
