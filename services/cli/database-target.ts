/**
 * Which database `holon backup | restore | audit` works on, as `holon serve` picks it: `DATABASE_URL` (Postgres),
 * else the PGlite directory of `--db DIR` (or HOLON_DB, default `.holon/db`). Named without its password.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../../shared/db/connect.js';
import { BackupError } from '../../shared/backup/errors.js';
import { valueIn } from '../../shared/platform/settings/declare.js';
import { SETTINGS } from '../../shared/platform/settings/index.js';

export interface DatabaseTarget {
  url?: string;
  dir?: string;
  /** `Postgres 127.0.0.1:5432/holon` or `PGlite /path`: printable (no credentials). */
  label: string;
}

/** `--db` beside DATABASE_URL is ambiguous for a command that copies or checks a whole database: a misuse, said so. */
export function targetMisuse(db: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (db !== undefined && env.DATABASE_URL?.trim()) return '--db names a PGlite directory but DATABASE_URL is set: use one or the other';
  return undefined;
}

export function databaseTarget(db: string | undefined, env: NodeJS.ProcessEnv): DatabaseTarget {
  const url = env.DATABASE_URL?.trim();
  if (url) {
    let label = 'Postgres (DATABASE_URL)';
    try {
      const u = new URL(url);
      label = `Postgres ${u.host}${u.pathname}`;
    } catch {
      /* an unparsable URL: the driver will say so */
    }
    return { url, label };
  }
  const dir = db === undefined ? valueIn(SETTINGS.dbDir, env) : path.resolve(db);
  return { dir, label: `PGlite ${dir}` };
}

/**
 * Open the target without migrating it. `mustExist`: a PGlite directory that is not a database is refused, not created.
 * The database drivers are loaded here, not with this module: a misused command exits without them.
 */
export async function openTarget(target: DatabaseTarget, mustExist: boolean): Promise<Database> {
  if (target.dir && mustExist && !existsSync(path.join(target.dir, 'PG_VERSION'))) {
    throw new BackupError(`no database in ${target.dir} (set DATABASE_URL for Postgres, or --db DIR for a PGlite directory)`);
  }
  if (target.url) await reachable(target);
  const { openDatabase } = await import('../../shared/db/connect.js');
  return openDatabase(target.url ? { url: target.url, migrate: false, poolMax: 2 } : { dir: target.dir!, migrate: false });
}

/** One plain connection first, so an unreachable or refusing server is one clear line (the pool would log a stack). */
async function reachable(target: DatabaseTarget): Promise<void> {
  if (!/^postgres(ql)?:\/\/./i.test(target.url ?? ''))
    throw new BackupError('DATABASE_URL is not a Postgres URL: it must start with postgres:// (postgres://USER:PASSWORD@HOST:PORT/DATABASE)');
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (e) {
    throw new BackupError(`cannot connect to ${target.label}: ${(e as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}
