/**
 * `holon restore --in FILE [--db DIR] [--json]`: load a backup into an EMPTY database (DATABASE_URL, or the PGlite
 * directory), in one transaction: the schema version must be this holon's, the target must hold no rows, the file
 * must be whole (its trailer's counts and checksum), and the restored ledger must pass the audit — else nothing is
 * restored. Exit 0 restored, 1 refused or failed (the message says why), 2 misused.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { restoreFromFile } from '../../shared/backup/files.js';
import { failed, summaryJson, summaryText, terminalProgress } from './backup-output.js';
import { databaseTarget, openTarget, targetMisuse } from './database-target.js';

const USAGE = 'usage: holon restore --in FILE [--db DIR] [--json]  (into DATABASE_URL, else the PGlite directory --db; it must be empty)\n';

export async function restoreCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  let values: { in?: string; db?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { in: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean', default: false } } }));
  } catch (e) {
    process.stderr.write(`holon restore: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.in) {
    process.stderr.write(`holon restore: --in FILE is required\n${USAGE}`);
    return 2;
  }
  const file = path.resolve(values.in);
  const misuse = targetMisuse(values.db, env);
  if (misuse) {
    process.stderr.write(`holon restore: ${misuse}\n${USAGE}`);
    return 2;
  }
  const target = databaseTarget(values.db, env);
  const progress = terminalProgress('restore');
  try {
    const db = await openTarget(target, false);
    try {
      const summary = await restoreFromFile(db, file, progress.onProgress ? { onProgress: progress.onProgress } : {});
      progress.stop();
      const report = { command: 'restore' as const, file, database: target.label, summary };
      out.write(values.json ? summaryJson(report) : summaryText(report));
      return 0;
    } finally {
      await db.close();
    }
  } catch (e) {
    progress.stop();
    return failed('restore', e);
  }
}
