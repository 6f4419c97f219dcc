/**
 * Restarts (gateway.md §7): `holon serve --hosted` killed with SIGKILL mid-call, then started again on the same
 * Postgres. The call in flight is closed failed / gateway_restarted, unbilled, its hold and reservation released;
 * the delegated child that had finished stays paid and counts against the mandate; its Idempotency-Key answers 409.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { createTestDatabase } from '../support/db.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';
import { printedPort, REPO_ROOT } from '../support/processes.js';

interface Served {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output(): string;
}

async function serve(databaseUrl: string): Promise<Served> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, HOLON_ADMIN_KEY: ADMIN_KEY, HOLON_AGENT_HOST: '0', LOG_LEVEL: 'info' };
  delete env.REDIS_URL;
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin/holon.mjs'), 'serve', '--hosted', '--port', '0', '--registry', 'examples,tests/fixtures/registry'],
    { cwd: REPO_ROOT, env },
  );
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const port = await printedPort(child, () => out);
  if (port) return { child, url: `http://127.0.0.1:${port}`, output: () => out };
  child.kill('SIGKILL');
  throw new Error(`holon serve did not start:\n${out}`);
}

/** Waits of this test: up to 15 s, every 50 ms. */
const SOON = { timeoutMs: 15_000, intervalMs: 50 };

test('kill -9 mid-call, restart: the call is closed unbilled, the finished child stays paid, the key answers 409', async () => {
  const db = await createTestDatabase('postgres');
  let served: Served | undefined;
  try {
    served = await serve(db.url!);
    const alice = await signUp(served.url, 'alice');
    const work = await workMandate(served.url, alice);
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-restart-')), 'parent.log');
    const headers = { 'idempotency-key': 'batch-7', prefer: 'respond-async' };
    const body = { agent: 'fixtures/patient-parent', input: { file } };
    const queued = await send(served.url, 'POST', '/v0/calls', { key: work.agent, body, headers });
    expect(queued.status).toBe(202);
    const callId = queued.body.call.id;
    await poll(async () => (await readFile(file, 'utf8').catch(() => '')).includes('child-done'), { what: 'the child to finish', ...SOON });
    const before = await db.knex('mandates').where({ id: work.mandate }).first('spent', 'reserved');
    expect(before.reserved).toBeGreaterThan(0n);

    served.child.kill('SIGKILL');
    await new Promise((r) => served!.child.once('exit', r));
    expect((await db.knex('calls').where({ id: callId }).first('status')).status).toBe('running');

    served = await serve(db.url!);
    const url = served.url;
    await poll(async () => (await send(url, 'GET', `/v0/receipts/${callId}`, { key: alice.human })).status === 200, {
      what: 'the interrupted call to settle',
      ...SOON,
    });
    const receipt = (await send(url, 'GET', `/v0/receipts/${callId}`, { key: alice.human })).body;
    expect(receipt).toMatchObject({ status: 'failed', error: 'gateway_restarted', billed: false, cost: { own: '0.00' } });
    expect(receipt.children).toHaveLength(1);
    expect(receipt.children[0]).toMatchObject({ agent: 'fixtures/counter@1.0.0', status: 'succeeded', billed: true, cost: { total: '0.01' } });
    const budget = (await send(url, 'GET', `/v0/mandates/${work.mandate}`, { key: alice.human })).body.budget;
    expect(budget).toMatchObject({ spent: '0.01', reserved: '0.00' });
    expect((await db.knex('holds').where({ status: 'held' })).length).toBe(0);

    const again = await send(url, 'POST', '/v0/calls', { key: work.agent, body, headers });
    expect([again.status, again.body.error?.code]).toEqual([409, 'idempotency_key_interrupted']);
    expect(again.body.error.message).toContain('GET /v0/receipts');

    const report = await audit(db.knex);
    expect(report.problems).toEqual([]);
  } finally {
    if (served && served.child.exitCode === null) {
      const exited = new Promise((r) => served!.child.once('exit', r));
      served.child.kill('SIGTERM');
      await exited;
    }
    await db.close();
  }
});
