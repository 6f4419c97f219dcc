/**
 * What the backup tests compare and how they run the CLI: every table's rows read independently of the backup code
 * (`to_jsonb(row)` text: timestamps to the microsecond, bigints in full, bytea in hex), the sequences, empty
 * databases to restore into (a bare Postgres database, never migrated), and `holon` as a child process.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { openDatabase, type Database, type Queryable } from '../../shared/db/connect.js';
import { createDatabase, databaseUrlFor, dropDatabase } from './postgres-admin.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** `holon …` in a child process with `env` over this one's (DATABASE_URL: undefined removes it). */
export async function holonCli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), ...args], {
      cwd: ROOT,
      env: childEnv,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Every row of every table (knex's own tables excepted), each as its `to_jsonb` text, sorted. */
export async function tableContents(db: Queryable): Promise<Record<string, string[]>> {
  return db.transaction(async (trx) => {
    await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
    const tables = (
      await trx.raw<{ rows: Array<{ name: string }> }>(
        `SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'knex\\_%'
          ORDER BY table_name`,
      )
    ).rows.map((r) => r.name);
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const rows = (await trx.raw<{ rows: Array<{ j: string }> }>(`SELECT to_jsonb(x)::text AS j FROM "${t}" x ORDER BY 1`)).rows;
      out[t] = rows.map((r) => r.j);
    }
    return out;
  });
}

/** Each sequence's last value and whether it was called (knex's own excepted). */
export async function sequenceStates(db: Queryable): Promise<Record<string, string>> {
  const names = (
    await db.raw<{ rows: Array<{ name: string }> }>(
      `SELECT sequence_name AS name FROM information_schema.sequences WHERE sequence_schema = current_schema() AND sequence_name NOT LIKE 'knex\\_%' ORDER BY 1`,
    )
  ).rows.map((r) => r.name);
  const out: Record<string, string> = {};
  for (const n of names) {
    const r = (await db.raw<{ rows: Array<{ v: string; c: boolean }> }>(`SELECT last_value::text AS v, is_called AS c FROM "${n}"`)).rows[0]!;
    out[n] = `${r.v}${r.c ? '' : ' (not called)'}`;
  }
  return out;
}

/** Per currency, what all journal lines sum to (the empty object when there are none). */
export async function journalSums(db: Queryable): Promise<Record<string, string>> {
  const rows = (
    await db.raw<{ rows: Array<{ currency: string; total: string }> }>(`SELECT currency, sum(amount)::text AS total FROM journal_lines GROUP BY currency`)
  ).rows;
  return Object.fromEntries(rows.map((r) => [r.currency, r.total]));
}

/** A new, bare Postgres database on the test server (no schema at all), dropped by `drop()` and at the run's end. */
export async function emptyPostgres(): Promise<{ url: string; open(): Promise<Database>; drop(): Promise<void> }> {
  const base = inject('databaseUrl');
  const name = `holon_t_${inject('testRunId')}_bk${randomBytes(4).toString('hex')}`;
  await createDatabase(base, name);
  const url = databaseUrlFor(base, name);
  return { url, open: () => openDatabase({ url, migrate: false, poolMax: 2 }), drop: () => dropDatabase(base, name) };
}
