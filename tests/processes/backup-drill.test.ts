/**
 * The backup drill (gateway.md §7 "Backups"), on every `npm test`: a hosted gateway with real traffic (paid calls,
 * a delegation tree, an approval, a published agent with an encrypted credential, a file, a moderation action) is
 * backed up with `holon backup` (a child process, while the gateway runs) and restored with `holon restore` into a
 * fresh, bare Postgres database, then into PGlite and from there back into Postgres. Each copy must hold the same
 * rows exactly (read independently of the backup code), the same balances, receipts and mandates and sequences; its
 * journal sums to zero, the ledger audit passes, the append-only triggers refuse an UPDATE again, and the restored
 * gateway serves a paid call (with the keys it had: only their hashes were copied) and the published agent.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { restoreCommand } from '../../services/cli/restore.js';
import { openDatabase, type Database } from '../../shared/db/connect.js';
import { audit } from '../../shared/ledger/audit.js';
import { readBalances } from '../../shared/ledger/accounts.js';
import { emptyPostgres, holonCli, journalSums, sequenceStates, tableContents } from '../support/backup-checks.js';
import { drillConfig, makeTraffic, type Traffic } from '../support/backup-traffic.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { send } from '../support/hosted.js';
import { startWebhookAgent, type PublishedServer } from '../support/published-servers.js';
import { poll } from '../support/poll.js';

let github: FakeGitHub;
let agent: PublishedServer;
let source: TestGateway;
let traffic: Traffic;
let dir: string;
let file: string;
let backup: { code: number; stdout: string; stderr: string };
let before: Record<string, string[]>;

beforeAll(async () => {
  agent = await startWebhookAgent({ tls: false });
  github = await startFakeGitHub();
  source = await startTestGateway({ config: drillConfig(github) });
  traffic = await makeTraffic(source.url, github, `http://127.0.0.1:${agent.port}/echo`);
  // Nothing left in flight (the published version's evaluation runs in the background): the copy is compared to the source.
  await poll(
    async () => {
      const open = await source.db.knex.raw<{ rows: Array<{ n: number }> }>(
        `SELECT (SELECT count(*) FROM evaluations WHERE status IN ('queued', 'running')) + (SELECT count(*) FROM calls WHERE status IN ('queued', 'running', 'settling')) AS n`,
      );
      return Number(open.rows[0]!.n) === 0;
    },
    { what: 'evaluations finished, calls closed' },
  );
  dir = await mkdtemp(path.join(tmpdir(), 'holon-backup-drill-'));
  file = path.join(dir, 'drill.jsonl');
  before = await tableContents(source.db.knex);
  backup = await holonCli(['backup', '--out', file, '--json'], { DATABASE_URL: source.db.url });
}, 120_000);

afterAll(async () => {
  const report = source ? await audit(source.db.knex) : { ok: true, problems: [] };
  await source?.stop();
  await github?.close();
  await agent?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  expect(report.problems, 'ledger audit of the source after the drill').toEqual([]);
});

/** Same rows, sequences, balances; the journal sums to zero; the audit passes. */
async function expectSameBooks(copy: Database): Promise<void> {
  expect(await tableContents(copy.knex)).toEqual(before);
  expect(await sequenceStates(copy.knex)).toEqual(await sequenceStates(source.db.knex));
  expect(await readBalances(copy.knex)).toEqual(await readBalances(source.db.knex));
  expect(Object.values(await journalSums(copy.knex)).every((total) => total === '0')).toBe(true);
  expect((await audit(copy.knex)).problems).toEqual([]);
}

describe('the backup drill', () => {
  test('holon backup copies every table of a live gateway, with the traffic in it', async () => {
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toBe(''); // not a terminal: no progress bar
    const summary = JSON.parse(backup.stdout);
    expect(summary).toMatchObject({
      command: 'backup',
      file,
      database: expect.stringMatching(/^Postgres 127\.0\.0\.1:5432\/holon_t_/),
      migrations: expect.any(Number),
    });
    expect(summary.database).not.toContain('postgres@'); // no credentials in what is printed
    expect(Object.keys(summary.tables).sort()).toEqual(Object.keys(before).sort());
    for (const [t, rows] of Object.entries(before)) expect(summary.tables[t], t).toBe(rows.length);
    for (const t of ['accounts', 'api_keys', 'mandates', 'journal_entries', 'journal_lines', 'receipts', 'calls', 'holds', 'approvals', 'call_events']) {
      expect(summary.tables[t], t).toBeGreaterThan(0);
    }
    expect(summary.tables).toMatchObject({ published_versions: 1, agent_credentials: 1, files: 1, file_chunks: 2, moderation_log: 1 });
    expect(summary.tables.evaluations).toBeGreaterThan(0);
    expect(summary.sequences).toBeGreaterThan(0);
    expect(summary.rows).toBe(Object.values(before).reduce((s, r) => s + r.length, 0));
  });

  test('restored into a fresh Postgres database: the same books, triggers on, and it serves paid calls', async () => {
    const target = await emptyPostgres();
    try {
      const restored = await holonCli(['restore', '--in', file], { DATABASE_URL: target.url });
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(/^restore done: .*\n {2}into Postgres 127\.0\.0\.1:5432\/holon_t_\w+, in one transaction; ledger audit ok\n/);
      const db = await target.open();
      try {
        await expectSameBooks(db);
        await expect(db.knex.raw(`UPDATE journal_lines SET amount = amount WHERE id = (SELECT min(id) FROM journal_lines)`)).rejects.toThrow(/append-only/);
        await expect(db.knex.raw(`DELETE FROM call_events`)).rejects.toThrow(/append-only/);
        await expect(db.knex.raw(`UPDATE published_versions SET repository = NULL`)).rejects.toThrow(/append-only/);

        const gw = await startTestGateway({ databaseUrl: target.url, config: drillConfig(github) });
        try {
          const paid = await send(gw.url, 'POST', '/v0/calls', { key: traffic.aliceAgent, body: { agent: 'examples/echo-upper', input: { text: 'after' } } });
          expect(paid.status, JSON.stringify(paid.body)).toBe(200);
          expect(paid.body).toMatchObject({ output: { text: 'AFTER' }, receipt: { billed: true, cost: { total: '0.01' } } });
          const published = await send(gw.url, 'POST', '/v0/calls', { key: traffic.aliceAgent, body: { agent: 'bob/echo', input: { n: 2 } } });
          expect(published.status, JSON.stringify(published.body)).toBe(200);
          expect(published.body.output).toEqual({ echo: { n: 2 } });
          // the published agent's credential was copied still encrypted, and still decrypts under the same secret
          expect(agent.hits.at(-1)?.authorization).toBe('Bearer drill-token.0123456789-abcdef');
          const receipts = await send(gw.url, 'GET', '/v0/receipts', { key: traffic.alice.human });
          expect(receipts.status).toBe(200);
          expect((await audit(db.knex)).problems).toEqual([]);
        } finally {
          await gw.stop();
        }
      } finally {
        await db.close();
      }
    } finally {
      await target.drop();
    }
  });

  test('restored into PGlite and from there back into Postgres: the same rows each time (the way out of a host, and back)', async () => {
    const pgliteDir = path.join(dir, 'pglite');
    const out: string[] = [];
    expect(await restoreCommand(['--in', file, '--db', pgliteDir, '--json'], {}, { write: (s) => out.push(s) })).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ command: 'restore', database: `PGlite ${pgliteDir}`, audit: 'ok' });
    const pglite = await openDatabase({ dir: pgliteDir, migrate: false });
    try {
      await expectSameBooks(pglite);
    } finally {
      await pglite.close();
    }

    const again = path.join(dir, 'from-pglite.jsonl');
    const fromPglite = await holonCli(['backup', '--db', pgliteDir, '--out', again], { DATABASE_URL: undefined });
    expect(fromPglite.code, fromPglite.stderr).toBe(0);
    expect(fromPglite.stdout).toMatch(/^backup written: /);
    const target = await emptyPostgres();
    try {
      const back = await holonCli(['restore', '--in', again, '--json'], { DATABASE_URL: target.url });
      expect(back.code, back.stderr).toBe(0);
      const db = await target.open();
      try {
        await expectSameBooks(db);
      } finally {
        await db.close();
      }
    } finally {
      await target.drop();
    }
  });
});
