/**
 * A backup to a file and a restore from one: the file's I/O around dump.ts and load.ts.
 *
 * A backup is written to `<file>.partial`, synced, then renamed: a file with the final name is always whole (and
 * its trailer proves it). A restore reads the header first and refuses another schema version before it touches
 * the target; then, in ONE transaction, it migrates the target (a bare database becomes an empty Holon database)
 * and loads the rows: a restore that fails at any point leaves the target as it found it, a bare one bare.
 */
import { createReadStream } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import readline from 'node:readline';
import type { Database, Queryable } from '../db/connect.js';
import { MIGRATIONS, migrateToLatest } from '../db/migrate.js';
import { appliedMigrations, nonEmptyTables, readTables } from './catalog.js';
import { dumpDatabase } from './dump.js';
import { BackupError, databaseMessage } from './errors.js';
import { parseHeader, schemaMismatch } from './format.js';
import { loadBackup, type LoadOptions } from './load.js';
import type { OnProgress, Summary } from './progress.js';

const BINARY_SCHEMA: readonly string[] = MIGRATIONS.map((m) => m.name);

const WRITE_BUFFER = 1024 * 1024;

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

export async function backupToFile(db: Database, file: string, options: { onProgress?: OnProgress; now?: () => Date } = {}): Promise<Summary> {
  if (await exists(file)) throw new BackupError(`${file} already exists: a backup never overwrites one (choose another name)`);
  const schema = await appliedMigrations(db.knex);
  if (!schema.length) throw new BackupError('the database has no Holon schema (no migration was ever applied): nothing to back up');
  const partial = `${file}.partial`;
  const handle = await open(partial, 'w');
  let pending: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!pending.length) return;
    const text = pending.join('');
    pending = [];
    size = 0;
    await handle.write(text);
  };
  try {
    const summary = await dumpDatabase(db.knex, {
      kind: db.kind,
      ...options,
      write: async (text) => {
        pending.push(text);
        size += text.length;
        if (size >= WRITE_BUFFER) await flush();
      },
    });
    await flush();
    await handle.sync();
    await handle.close();
    await rename(partial, file);
    return summary;
  } catch (e) {
    await handle.close().catch(() => {});
    await unlink(partial).catch(() => {});
    throw e;
  }
}

/**
 * The target's migrations are this binary's, or a beginning of them; a target already holding rows is refused before
 * anything changes. Then the migrations run, inside the restore's transaction (`knex` is it).
 */
async function prepareTarget(knex: Queryable): Promise<void> {
  const applied = await appliedMigrations(knex);
  const foreign = applied.filter((m, i) => m !== BINARY_SCHEMA[i]);
  if (foreign.length) {
    throw new BackupError(
      `the target database was migrated by another holon version (${foreign.join(', ')} is not this holon's): restore into an empty database`,
    );
  }
  if (applied.length) {
    const full = await nonEmptyTables(
      knex,
      (await readTables(knex)).map((t) => t.name),
    );
    if (full.length) throw new BackupError(`the target database is not empty: ${full.join(', ')} already hold rows; restore only into an empty database`);
  }
  await migrateToLatest(knex);
}

export async function restoreFromFile(db: Database, file: string, options: LoadOptions = {}): Promise<Summary> {
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
  } catch (e) {
    throw new BackupError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const input = createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const it = lines[Symbol.asyncIterator]();
  try {
    const first = await it.next();
    const headerText = first.done ? undefined : first.value;
    const header = parseHeader(headerText);
    const mismatch = schemaMismatch(header.schema, BINARY_SCHEMA);
    if (mismatch) throw new BackupError(mismatch);
    try {
      // The migrations and the rows together: Postgres (and PGlite) roll DDL back like rows, so a failed restore
      // leaves no schema behind in a bare target. loadBackup's own transaction is a savepoint inside this one.
      return await db.knex.transaction(async (trx) => {
        await prepareTarget(trx);
        return loadBackup({ db: trx, header, headerText: headerText!, lines: it, options });
      });
    } catch (e) {
      if (e instanceof BackupError) throw e;
      // The database refused a row or the commit (a constraint, the journal balance): say so, plainly.
      throw new BackupError(`the database refused the restore, so nothing was restored: ${databaseMessage(e)}`);
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
