/**
 * Backups keep every value exactly, across backends (Postgres → PGlite and PGlite → Postgres): timestamps to the
 * microsecond (and infinity), bigint money above 2^53, jsonb with a number no double holds and awkward strings,
 * bytea with every byte value (and empty), text with newlines, quotes, backslashes and emoji, NULLs. Rows are
 * compared through `to_jsonb` text, read independently of the backup code.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { backupToFile, restoreFromFile } from '../../shared/backup/files.js';
import type { Queryable } from '../../shared/db/connect.js';
import { audit } from '../../shared/ledger/audit.js';
import { DEMO_CREDIT_ACCOUNT, ensureAccount, postEntry } from '../../shared/ledger/index.js';
import { tableContents } from '../support/backup-checks.js';
import { type Backend, createTestDatabase } from '../support/db.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'holon-backup-values-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const BIG = 9_007_199_254_740_993n; // 2^53 + 1: not a double

async function awkwardRows(db: Queryable): Promise<void> {
  await ensureAccount(db, DEMO_CREDIT_ACCOUNT);
  await ensureAccount(db, 'alice');
  await postEntry(db, {
    key: 'signup:alice',
    kind: 'signup',
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency: 'EUR', amount: -BIG },
      { account: 'alice', currency: 'EUR', amount: BIG },
    ],
  });
  await db.raw(`UPDATE accounts SET created_at = '2026-01-02 03:04:05.123456+00', email = 'alice@example.test' WHERE handle = 'alice'`);
  await db.raw(
    `INSERT INTO mandates (id, issuer, grantee, doc, currency, total, expires_at, revoked_at, created_at)
     VALUES ('alice/odd', 'alice', 'alice/assistant', ?::jsonb, 'EUR', ?, 'infinity', NULL, '1999-12-31 23:59:59.999999+00')`,
    ['{"n": 12345678901234567890.5, "s": "é\\u2028 \\"q\\" \\\\ \\n", "z": [1.0, -0]}', BIG.toString()],
  );
  await db.raw(`INSERT INTO blocked_emails (email, reason) VALUES ('odd@example.test', ?)`, ['line one\nline two\t"quoted" \\ back 🧾 é']);
  const now = new Date('2026-05-06T07:08:09.010Z');
  await db.raw(
    `INSERT INTO files (id, owner, content_type, status, size, sha256, created_at, expires_at) VALUES ('f1', 'alice', 'application/octet-stream', 'ready', 256, repeat('a', 64), ?, ?)`,
    [now, now],
  );
  await db.raw(`INSERT INTO file_chunks (file_id, seq, data) VALUES ('f1', 0, ?), ('f1', 1, ''::bytea)`, [
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  ]);
}

describe.each<[Backend, Backend]>([
  ['postgres', 'pglite'],
  ['pglite', 'postgres'],
])('from %s to %s', (from, to) => {
  test('every value comes back exactly', async () => {
    const source = await createTestDatabase(from);
    const target = await createTestDatabase(to);
    try {
      await awkwardRows(source.knex);
      const file = path.join(dir, `${from}-to-${to}.jsonl`);
      const written = await backupToFile(source, file);
      const read = await restoreFromFile(target, file);
      expect(read.tables).toEqual(written.tables);
      const expected = await tableContents(source.knex);
      expect(expected.mandates![0]).toContain('12345678901234567890.5');
      expect(expected.accounts!.join()).toContain('2026-01-02T03:04:05.123456+00:00');
      expect(await tableContents(target.knex)).toEqual(expected);
      const [chunk] = (await target.knex.raw(`SELECT data FROM file_chunks WHERE seq = 0`)).rows;
      expect(Buffer.from(chunk.data)).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
      expect((await audit(target.knex)).problems).toEqual([]);
    } finally {
      await source.close();
      await target.close();
    }
  });
});
