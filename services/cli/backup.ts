/**
 * `holon backup --out FILE [--db DIR] [--json]`: every row of every table, the sequences and the schema version,
 * from one consistent snapshot of DATABASE_URL (or the PGlite directory), into a JSON Lines file
 * (docs/backups.md). Exit 0 written, 1 refused or failed (the message says why), 2 misused.
 */
import type { backupToFile } from '../../shared/backup/files.js';
import { runFileCommand } from './backup-output.js';

const USAGE = 'usage: holon backup --out FILE [--db DIR] [--json]  (DATABASE_URL, else the PGlite directory --db)\n';

export function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  // The backup itself (and the database layer under it) is loaded once the arguments are right.
  const run: typeof backupToFile = async (...args) => (await import('../../shared/backup/files.js')).backupToFile(...args);
  return runFileCommand({ command: 'backup', fileOption: 'out', usage: USAGE, mustExist: true, run }, argv, env, out);
}
