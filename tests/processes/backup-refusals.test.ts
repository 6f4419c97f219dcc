/**
 * What `holon restore` refuses, and that a refused or failed restore leaves the target as it found it (on Postgres
 * and on PGlite): a damaged line near the end, a row the database refuses, a truncated file, a backup whose
 * journal does not balance (its checksum made to match), a non-empty target (the tables named), another schema
 * version (the migrations named, the target untouched). The triggers: the append-only ones refuse an UPDATE after a
 * restore, and a user trigger that would block the copied INSERTs is off during the load and on again after.
 * `holon audit` exits 0 on clean books and 1 once an unbalanced line is forced in. And `holon backup` never
 * overwrites a file.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackupError } from '../../shared/backup/errors.js';
import { backupToFile, restoreFromFile } from '../../shared/backup/files.js';
import { encodeLine, LineDigest } from '../../shared/backup/format.js';
import { MIGRATION_TABLES, nonEmptyTables } from '../../shared/backup/catalog.js';
import type { Database, Queryable } from '../../shared/db/connect.js';
import { DEMO_CREDIT_ACCOUNT, ensureAccount, postEntry } from '../../shared/ledger/index.js';
import { emptyPostgres, holonCli } from '../support/backup-checks.js';
import { BACKENDS, createTestDatabase, dbTest } from '../support/db.js';
import { printedPort } from '../support/processes.js';

let dir: string;
let file: string;
let lines: string[];

async function credit(db: Queryable, account: string, amount: bigint): Promise<void> {
  await ensureAccount(db, DEMO_CREDIT_ACCOUNT);
  await ensureAccount(db, account);
  await postEntry(db, {
    key: `signup:${account}`,
    kind: 'signup',
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency: 'EUR', amount: -amount },
      { account, currency: 'EUR', amount },
    ],
  });
}

/** A small ledger: two credited accounts, a transfer, and an encrypted credential (bytea). */
async function seed(db: Queryable): Promise<void> {
  await credit(db, 'alice', 5_000_000n);
  await credit(db, 'bob', 2_000_000n);
  await postEntry(db, {
    key: 'admin-credit:transfer',
    kind: 'admin-credit',
    lines: [
      { account: 'alice', currency: 'EUR', amount: -300_000n },
      { account: 'bob', currency: 'EUR', amount: 300_000n },
    ],
  });
  await db.raw(
    `INSERT INTO agent_credentials (agent_id, key_id, iv, ciphertext, tag, set_by) VALUES ('bob/echo', 'k1', '\\x00ff'::bytea, '\\xdeadbeef'::bytea, '\\x01'::bytea, 'bob')`,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'holon-backup-refusals-'));
  file = path.join(dir, 'small.jsonl');
  const source = await createTestDatabase('postgres');
  try {
    await seed(source.knex);
    await backupToFile(source, file);
  } finally {
    await source.close();
  }
  lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A variant of the backup file, written beside it. */
async function variant(name: string, content: string[]): Promise<string> {
  const f = path.join(dir, name);
  await writeFile(f, content.map((l) => `${l}\n`).join(''));
  return f;
}

/** The trailer recomputed over `body` (header and rows): a file that was changed on purpose, with a valid checksum. */
function resealed(body: string[]): string[] {
  const digest = new LineDigest();
  for (const l of body) digest.add(`${l}\n`);
  const end = JSON.parse(lines.at(-1)!);
  return [...body, encodeLine({ ...end, lines: digest.lines, sha256: digest.hex() }).trimEnd()];
}

async function refusal(db: Database, f: string): Promise<string> {
  try {
    await restoreFromFile(db, f);
  } catch (e) {
    expect(e).toBeInstanceOf(BackupError);
    return (e as Error).message;
  }
  throw new Error('expected the restore to be refused');
}

const tablesWithRows = async (db: Database) => {
  const names = (await db.knex.raw<{ rows: Array<{ t: string }> }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()`)).rows.map(
    (r) => r.t,
  );
  return nonEmptyTables(
    db.knex,
    names.filter((n) => !(MIGRATION_TABLES as readonly string[]).includes(n)),
  );
};

const rowLines = () => lines.map((l, i) => [l, i] as const).filter(([l]) => l.startsWith('{"type":"row"'));

describe.each(BACKENDS)('a restore into %s that fails leaves nothing', (backend) => {
  const test = dbTest(backend);

  test('a damaged line near the end: refused, naming the line; the target stays empty', async ({ db }) => {
    const [, last] = rowLines().at(-1)!;
    const damaged = [...lines];
    damaged[last] = damaged[last]!.slice(0, 40);
    const message = await refusal(db, await variant(`damaged-${backend}.jsonl`, damaged));
    expect(message).toBe(`line ${last + 1} is not valid JSON: the file is damaged`);
    expect(await tablesWithRows(db)).toEqual([]);
  });

  test('a row the database refuses (a duplicate key) rolls back every row before it', async ({ db }) => {
    const [line] = rowLines()
      .filter(([l]) => l.includes('"table":"journal_lines"'))
      .at(-1)!;
    const withDuplicate = resealed([
      ...lines.slice(0, -1).filter((l) => !l.startsWith('{"type":"sequence"')),
      line,
      ...lines.filter((l) => l.startsWith('{"type":"sequence"')),
    ]);
    const message = await refusal(db, await variant(`duplicate-${backend}.jsonl`, withDuplicate));
    expect(message).toMatch(/^the database refused the restore, so nothing was restored: duplicate key value violates unique constraint "journal_lines_pkey"/);
    expect(message).not.toMatch(/insert into/i); // the statement (and the rows in it) is never repeated
    expect(await tablesWithRows(db)).toEqual([]);
  });

  test('a truncated file: without its trailer, or cut inside a line', async ({ db }) => {
    expect(await refusal(db, await variant(`no-trailer-${backend}.jsonl`, lines.slice(0, -1)))).toBe(
      `the file ends at line ${lines.length - 1} without its trailer: it is truncated (an interrupted backup or copy)`,
    );
    const cut = (await readFile(file, 'utf8')).slice(0, -200);
    await writeFile(path.join(dir, `cut-${backend}.jsonl`), cut);
    expect(await refusal(db, path.join(dir, `cut-${backend}.jsonl`))).toMatch(/is not valid JSON|without its trailer/);
    expect(await tablesWithRows(db)).toEqual([]);
  });

  test('a changed amount is refused by the checksum; resealed, by the ledger audit', async ({ db }) => {
    const [line, at] = rowLines().find(([l]) => l.includes('"table":"journal_lines"'))!;
    const changed = [...lines];
    changed[at] = line.replace(/"amount":"(-?)(\d+)"/, (_m, sign, digits) => `"amount":"${sign}${BigInt(digits) + 1n}"`);
    expect(changed[at]).not.toBe(line);
    expect(await refusal(db, await variant(`changed-${backend}.jsonl`, changed))).toBe(
      'the checksum does not match the content: the file was changed or damaged',
    );
    const message = await refusal(db, await variant(`resealed-${backend}.jsonl`, resealed(changed.slice(0, -1))));
    expect(message).toMatch(/^the restored ledger does not pass the audit, so nothing was restored:\n {2}EUR: all accounts together sum to /);
    expect(await tablesWithRows(db)).toEqual([]);
  });

  test('a target that holds rows is refused, naming the tables, and is left as it was', async ({ db }) => {
    await credit(db.knex, 'carol', 1_000_000n);
    expect(await refusal(db, file)).toBe(
      'the target database is not empty: accounts, journal_entries, account_balances, journal_lines already hold rows; restore only into an empty database',
    );
    expect((await db.knex('accounts').pluck('handle')).sort()).toEqual(['carol', DEMO_CREDIT_ACCOUNT]);
  });
});

describe('a restore that fails midway leaves a bare target bare', () => {
  const damagedMidway = () => {
    const rows = rowLines();
    const [, middle] = rows[Math.floor(rows.length / 2)]!;
    const damaged = [...lines];
    damaged[middle] = damaged[middle]!.slice(0, 30);
    return variant('damaged-midway.jsonl', damaged);
  };

  it('Postgres: no table, not even the migrations, is left in a database that had none', async () => {
    const f = await damagedMidway();
    const target = await emptyPostgres();
    try {
      const r = await holonCli(['restore', '--in', f], { DATABASE_URL: target.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^holon restore: line \d+ is not valid JSON: the file is damaged\n$/);
      const db = await target.open();
      try {
        const tables = await db.knex.raw(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`);
        expect(tables.rows).toEqual([]);
        expect(
          (await db.knex.raw(`SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace WHERE s.nspname = current_schema()`))
            .rows[0].n,
        ).toBe(0);
      } finally {
        await db.close();
      }
      // and the same file, whole, then restores into it
      expect((await holonCli(['restore', '--in', file], { DATABASE_URL: target.url })).code).toBe(0);
    } finally {
      await target.drop();
    }
  });

  it('PGlite: a directory the restore created is gone again; an empty one is left empty', async () => {
    const f = await damagedMidway();
    const fresh = path.join(dir, 'fresh-parent', 'pglite');
    const r = await holonCli(['restore', '--in', f, '--db', fresh], { DATABASE_URL: undefined });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is not valid JSON: the file is damaged/);
    expect(existsSync(path.join(dir, 'fresh-parent'))).toBe(false);

    const empty = path.join(dir, 'empty-pglite');
    await mkdir(empty);
    expect((await holonCli(['restore', '--in', f, '--db', empty], { DATABASE_URL: undefined })).code).toBe(1);
    expect(readdirSync(empty)).toEqual([]);
  });
});

describe('schema version', () => {
  const test = dbTest('postgres');

  test('a backup of another schema version is refused before the target is touched, naming the migrations', async () => {
    const header = JSON.parse(lines[0]!);
    const last = header.schema.at(-1);
    const older = await variant('older.jsonl', [JSON.stringify({ ...header, schema: header.schema.slice(0, -1) }), ...lines.slice(1)]);
    const target = await emptyPostgres();
    try {
      const r = await holonCli(['restore', '--in', older], { DATABASE_URL: target.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^holon restore: the backup's schema version is .* \\(${header.schema.length - 1} migrations\\), this holon's is ${last} \\(${header.schema.length}\\); not in the backup: ${last}\\. Restore with the holon version that made the backup\\n$`,
        ),
      );
      const db = await target.open();
      try {
        // refused before the migrations ran: the bare database is still bare
        expect((await db.knex.raw(`SELECT to_regclass('knex_migrations') IS NULL AS bare`)).rows[0].bare).toBe(true);
      } finally {
        await db.close();
      }
    } finally {
      await target.drop();
    }
  });

  test('a target migrated by another holon version is refused', async ({ db }) => {
    await db.knex('knex_migrations').insert({ name: '999_from_the_future', batch: 99, migration_time: new Date() });
    expect(await refusal(db, file)).toMatch(/^the target database was migrated by another holon version \(999_from_the_future is not this holon's\)/);
    await db.knex('knex_migrations').where({ name: '999_from_the_future' }).delete();
  });
});

describe('triggers', () => {
  const test = dbTest('postgres');

  test('the append-only triggers stay on; a user trigger blocking INSERTs is off for the load only', async ({ db }) => {
    await db.knex.raw(
      `CREATE FUNCTION test_refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no inserts into %', TG_TABLE_NAME; END $$`,
    );
    await db.knex.raw(`CREATE TRIGGER test_no_insert BEFORE INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION test_refuse_insert()`);
    const summary = await restoreFromFile(db, file);
    expect(summary.tables).toMatchObject({ accounts: 3, journal_lines: 6, agent_credentials: 1 });
    const states = (await db.knex.raw(`SELECT tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`)).rows;
    expect(states.filter((s: { tgenabled: string }) => s.tgenabled === 'D')).toEqual([]);
    expect(states.map((s: { tgname: string }) => s.tgname)).toEqual(
      expect.arrayContaining(['test_no_insert', 'journal_lines_append_only', 'journal_lines_balanced']),
    );
    await expect(db.knex.raw(`INSERT INTO accounts (handle, kind) VALUES ('dave', 'user')`)).rejects.toThrow(/no inserts into accounts/);
    await expect(db.knex.raw(`UPDATE journal_lines SET amount = amount + 1`)).rejects.toThrow(/journal_lines is append-only: UPDATE is refused/);
    await expect(db.knex.raw(`DELETE FROM journal_entries`)).rejects.toThrow(/append-only/);
    await expect(db.knex.raw(`TRUNCATE journal_lines`)).rejects.toThrow(/append-only/);
    await db.knex.raw('DROP TRIGGER test_no_insert ON accounts');
    // the sequences came along: the next entry does not collide with a restored one
    await credit(db.knex, 'erin', 1n);
  });
});

describe('holon audit and holon backup as commands', () => {
  const test = dbTest('postgres');

  test('holon audit: exit 0 on clean books, 1 with the discrepancy named once an unbalanced line is forced in', async () => {
    const db = await createTestDatabase('postgres');
    try {
      await seed(db.knex);
      const clean = await holonCli(['audit'], { DATABASE_URL: db.url });
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/^audit ok: Postgres 127\.0\.0\.1:5432\/holon_t_\w+: the journal balances/);
      // Forced past the journal's own guard (its constraint trigger off for this one transaction), as a bug or a hand edit would.
      await db.knex.transaction(async (trx) => {
        await trx.raw('ALTER TABLE journal_lines DISABLE TRIGGER journal_lines_balanced');
        await trx.raw(
          `INSERT INTO journal_lines (entry_id, account, currency, amount) SELECT id, 'alice', 'EUR', 1 FROM journal_entries WHERE key = 'signup:alice'`,
        );
        await trx.raw('ALTER TABLE journal_lines ENABLE TRIGGER journal_lines_balanced');
      });
      const broken = await holonCli(['audit', '--json'], { DATABASE_URL: db.url });
      expect(broken.code).toBe(1);
      const report = JSON.parse(broken.stdout);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual(
        expect.arrayContaining([
          'EUR: all accounts together sum to 0.000001, not zero',
          'entry signup:alice: its EUR lines sum to 0.000001',
          'alice EUR: cached balance 4.70 but journal lines sum to 4.700001',
        ]),
      );
      const text = await holonCli(['audit'], { DATABASE_URL: db.url });
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/^audit found 3 discrepancies in Postgres .*:\n {2}- EUR: all accounts together sum to 0\.000001, not zero\n/);
    } finally {
      await db.close();
    }
  });

  test('holon backup refuses to overwrite a file, and a directory without a database; misuse (no --out, an unknown option, --db beside DATABASE_URL) is exit 2', async ({
    db,
  }) => {
    const existing = await holonCli(['backup', '--out', file], { DATABASE_URL: db.url });
    expect(existing).toMatchObject({ code: 1, stderr: `holon backup: ${file} already exists: a backup never overwrites one (choose another name)\n` });
    const nowhere = path.join(dir, 'no-db-here');
    const none = await holonCli(['backup', '--db', nowhere, '--out', path.join(dir, 'x.jsonl')], { DATABASE_URL: undefined });
    expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining(`no database in ${nowhere}`) });
    expect((await holonCli(['backup'], { DATABASE_URL: db.url })).code).toBe(2);
    expect((await holonCli(['restore', '--bogus'], { DATABASE_URL: db.url })).code).toBe(2);
    const both = await holonCli(['audit', '--db', nowhere], { DATABASE_URL: db.url });
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('--db names a PGlite directory but DATABASE_URL is set') });
  });
});

describe('a PGlite directory a running gateway holds', () => {
  it('holon audit, backup and restore say so and stop (exit 1), and the gateway goes on; a stale lock is taken over', async () => {
    const pglite = path.join(dir, 'held');
    const env = { ...process.env, LOG_LEVEL: 'info', HOLON_AGENT_HOST: '0', HOLON_MANDATES: '' } as NodeJS.ProcessEnv;
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const gateway = spawn(process.execPath, ['bin/holon.mjs', 'serve', '--port', '0', '--db', pglite], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env,
    });
    let out = '';
    gateway.stdout.on('data', (c) => (out += c));
    gateway.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
    try {
      const port = (await printedPort(gateway, () => out)) ?? 0;
      expect(port, out).toBeGreaterThan(0);
      const inUse = (stderr: string, command: string) => {
        expect(stderr).toMatch(new RegExp(`^holon ${command}: the PGlite database `));
        expect(stderr).toContain(`${pglite} is in use by another process (\`holon serve\`, pid ${gateway.pid}, since `);
        expect(stderr).toContain('PGlite allows one process at a time: stop that one first');
      };
      const audited = await holonCli(['audit', '--db', pglite], { DATABASE_URL: undefined });
      expect(audited.code).toBe(1);
      inUse(audited.stderr, 'audit');
      const backedUp = await holonCli(['backup', '--db', pglite, '--out', path.join(dir, 'held.jsonl')], { DATABASE_URL: undefined });
      expect(backedUp.code).toBe(1);
      inUse(backedUp.stderr, 'backup');
      expect(existsSync(path.join(dir, 'held.jsonl'))).toBe(false);
      const restored = await holonCli(['restore', '--in', file, '--db', pglite], { DATABASE_URL: undefined });
      expect(restored.code).toBe(1);
      inUse(restored.stderr, 'restore');
      // the gateway was not disturbed
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      gateway.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    // Stopped: the lock went with it, and the commands work.
    expect(existsSync(path.join(pglite, 'holon.lock'))).toBe(false);
    expect((await holonCli(['audit', '--db', pglite], { DATABASE_URL: undefined })).code).toBe(0);
    // A lock left by a process that is gone (a crash) is stale: taken over.
    await writeFile(path.join(pglite, 'holon.lock'), JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), command: 'holon serve', since: 'then' }));
    const afterCrash = await holonCli(['audit', '--db', pglite], { DATABASE_URL: undefined });
    expect(afterCrash.code, afterCrash.stderr).toBe(0);
    expect(existsSync(path.join(pglite, 'holon.lock'))).toBe(false);
  });
});
