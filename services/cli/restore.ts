/**
 * `holon restore --in FILE [--db DIR] [--json]`: load a backup into an EMPTY database (DATABASE_URL, or the PGlite
 * directory), in one transaction: the schema version must be this holon's, the target must hold no rows, the file
 * must be whole (its trailer's counts and checksum), and the restored ledger must pass the audit — else nothing is
 * restored. Exit 0 restored, 1 refused or failed (the message says why), 2 misused.
 */
import type { restoreFromFile } from '../../shared/backup/files.js';
import { runFileCommand } from './backup-output.js';

const USAGE = 'usage: holon restore --in FILE [--db DIR] [--json]  (into DATABASE_URL, else the PGlite directory --db; it must be empty)\n';

export function restoreCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  // The restore itself (and the database layer under it) is loaded once the arguments are right.
  const run: typeof restoreFromFile = async (...args) => (await import('../../shared/backup/files.js')).restoreFromFile(...args);
  return runFileCommand({ command: 'restore', fileOption: 'in', usage: USAGE, mustExist: false, run }, argv, env, out);
}
