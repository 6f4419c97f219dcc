/**
 * Paying with sign-up accounts buys no ranking (shared/core/counted-payer.ts, shared/catalogue/counted-payers.ts,
 * shared/ledger/outside-funding.ts): on a hosted gateway, a payer counts toward an agent version's ranking facts and
 * `require.min_success_rate` only when its account is linked to GitHub, or when money from outside the platform other
 * than sign-up credit (the admin's credit) covers what it spent on that version. Fresh email accounts paying an
 * author's agent make normal, billed calls with receipts, and move nothing; the Agent Record shows how many of its
 * payers count (`counted_payers`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { recordPublished } from '../../shared/registry/published.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';
import { insertRuns } from '../support/synthetic-runs.js';
import { callByName, routing, type Caller } from '../support/routing-checks.js';

let github: FakeGitHub;
let agent: { url: string; server: Server };
beforeEach(async () => {
  github = await startFakeGitHub();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  agent = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, server };
});
afterEach(async () => {
  agent.server.close();
  await github.close();
});

async function withGateway(use: (g: TestGateway) => Promise<void>): Promise<void> {
  await useAudited(await startTestGateway({ hosted: true, config: { ...github.config, allowPrivateEndpoints: true } }), use);
}

/** An author's agent claiming `text.echo`, published straight into the registry (the publishing checks are not the subject). */
async function publish(g: TestGateway, id: string, amount: string): Promise<void> {
  const v = validateManifest({
    id,
    version: '1.0.0',
    summary: `${id}, an echo`,
    capabilities: ['text.echo'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount },
    runtime: { kind: 'webhook', endpoint: agent.url, limits: { timeout_s: 10 } },
  });
  if (!v.ok) throw new Error(`invalid test manifest: ${JSON.stringify(v.problems)}`);
  expect(await recordPublished(g.gw.context, { manifest: v.manifest, author: id.split('/')[0]! })).toBe('listed');
}

/** A fresh email account (free, unverified, with its sign-up credit) and a work mandate for published echo agents. */
async function caller(g: TestGateway, handle: string, doc: Record<string, unknown> = {}): Promise<Caller> {
  const account = await signUp(g.url, handle);
  const work = await workMandate(g.url, account, { allow: { agents: ['bob/*', 'mallory/*'], capabilities: ['text.*'], published: true }, ...doc });
  return { account, mandate: work.mandate, key: work.agent };
}

const recordOf = async (g: TestGateway, id: string) => {
  const r = await send<{
    record: { runs: number; successes: number; payers: number; counted_payers: number };
    records: { version: { all_time: { counted_payers: number } } };
  }>(g.url, 'GET', `/v0/agents/${id}`);
  expect(r.status).toBe(200);
  expect(r.body.records.version.all_time.counted_payers).toBe(r.body.record.counted_payers);
  return r.body.record;
};

/** Link an email account to GitHub: signing in with a GitHub account whose verified primary email is the account's. */
async function linkToGitHub(g: TestGateway, handle: string, id: number): Promise<void> {
  const linked = await signInWithGitHub(g.url, github, `${handle}-gh`, id, [{ email: `${handle}@example.test`, primary: true, verified: true }]);
  expect(linked.handle).toBe(handle);
}

/**
 * bob/echo at 0.01 with three customers signed in with GitHub and a modest record (20 successes in 100 runs, each
 * billed); mallory/echo at 0.03, unmeasured. alice, a fresh email account, is the caller whose routing is watched.
 */
async function market(g: TestGateway): Promise<Caller> {
  await signUp(g.url, 'bob');
  await signUp(g.url, 'mallory');
  await publish(g, 'bob/echo', '0.01');
  await publish(g, 'mallory/echo', '0.03');
  const customers: string[] = [];
  for (const [i, login] of ['ann', 'ben', 'cat'].entries()) customers.push((await signInWithGitHub(g.url, github, login, 7000 + i)).handle);
  await insertRuns(
    g.db.knex,
    Array.from({ length: 100 }, (_, i) => ({
      agentId: 'bob/echo',
      version: '1.0.0',
      status: i < 20 ? ('succeeded' as const) : ('failed' as const),
      ...(i < 20 ? {} : { code: 'agent_error' }),
      latency: 5,
      cost: 10_000,
      payer: customers[i % 3]!,
    })),
  );
  expect(await recordOf(g, 'bob/echo')).toMatchObject({ runs: 100, successes: 20, payers: 3, counted_payers: 3 });
  return caller(g, 'alice');
}

test('three fresh email accounts paying an agent 10 times each leave the routing where it was; linked to GitHub, they move it', async () => {
  await withGateway(async (g) => {
    const alice = await market(g);
    // bob/echo: 0.01 ÷ smoothed 21/102 ≈ 0.049 per success, beats mallory/echo's prior (0.03 ÷ 50 % = 0.06).
    expect(await routing(g.url, alice)).toEqual({ ranked: ['bob/echo', 'mallory/echo'], reached: 'bob/echo@1.0.0' });

    // The reviewer's scenario: three puppets, 10 calls each. Counted, 30 of 30 at 0.03 (≈ 0.031) would rank it first.
    const puppets: Caller[] = [];
    for (const handle of ['puppet-a', 'puppet-b', 'puppet-c']) puppets.push(await caller(g, handle));
    for (const p of puppets) await callByName(g.url, p, 'mallory/echo', 10);
    expect(await recordOf(g, 'mallory/echo')).toMatchObject({ runs: 30, successes: 30, payers: 3, counted_payers: 0 });
    expect(await routing(g.url, alice)).toEqual({ ranked: ['bob/echo', 'mallory/echo'], reached: 'bob/echo@1.0.0' });
    // Billed like any call: mallory earned from them all the same.
    const billed = await g.db
      .knex('receipts')
      .whereIn('payer', ['puppet-a', 'puppet-b', 'puppet-c'])
      .where({ billed: true })
      .count<{ count: string }[]>({ count: '*' });
    expect(Number(billed[0]!.count)).toBe(30);

    // The same three accounts linked to GitHub: now they count, and the measured record moves the ranking.
    for (const [i, p] of puppets.entries()) await linkToGitHub(g, p.account.handle, 9000 + i);
    expect(await recordOf(g, 'mallory/echo')).toMatchObject({ runs: 30, successes: 30, payers: 3, counted_payers: 3 });
    expect(await routing(g.url, alice)).toEqual({ ranked: ['mallory/echo', 'bob/echo'], reached: 'mallory/echo@1.0.0' });
  });
});

test('an email account counts once the admin’s credit covers what it spent on the version; an author’s earnings never do', async () => {
  await withGateway(async (g) => {
    const alice = await market(g);
    const puppets: Caller[] = [];
    for (const handle of ['puppet-a', 'puppet-b', 'puppet-c']) puppets.push(await caller(g, handle));
    for (const p of puppets) await callByName(g.url, p, 'mallory/echo', 10); // 0.30 each
    const credit = async (account: string, amount: string, requestKey: string) => {
      const r = await send(g.url, 'POST', '/v0/admin/credit', {
        key: ADMIN_KEY,
        body: { account, amount, currency: 'EUR' },
        headers: { 'Idempotency-Key': requestKey },
      });
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    };
    // 0.29 of outside money does not cover 0.30 spent on mallory/echo: still no counted payer.
    for (const p of puppets) await credit(p.account.handle, '0.29', `first-${p.account.handle}`);
    expect(await recordOf(g, 'mallory/echo')).toMatchObject({ payers: 3, counted_payers: 0 });
    expect((await routing(g.url, alice)).reached).toBe('bob/echo@1.0.0');
    // bob has earned from alice's routed calls (an author's share): money from other accounts, not from outside.
    const bob = await g.db.knex('journal_lines').where({ account: 'bob' }).where('amount', '>', 0).count<{ count: string }[]>({ count: '*' });
    expect(Number(bob[0]!.count)).toBeGreaterThan(1);
    // One more cent each: 0.30 covers it, the three count, and the ranking moves.
    for (const p of puppets) await credit(p.account.handle, '0.01', `second-${p.account.handle}`);
    expect(await recordOf(g, 'mallory/echo')).toMatchObject({ payers: 3, counted_payers: 3 });
    expect(await routing(g.url, alice)).toEqual({ ranked: ['mallory/echo', 'bob/echo'], reached: 'mallory/echo@1.0.0' });
  });
});

test('min_success_rate reads only the runs of payers that count', async () => {
  await withGateway(async (g) => {
    await signUp(g.url, 'bob');
    await publish(g, 'bob/echo', '0.01');
    const strict = await caller(g, 'alice', { require: { min_success_rate: '0.9' } });
    const failures = (payer: string) =>
      Array.from({ length: 25 }, () => ({ agentId: 'bob/echo', version: '1.0.0', status: 'failed' as const, code: 'agent_error', latency: 5, payer }));
    // 25 failures paid by a fresh email account: shown in the record, but they do not count.
    await caller(g, 'puppet-a');
    await insertRuns(g.db.knex, failures('puppet-a'));
    expect(await recordOf(g, 'bob/echo')).toMatchObject({ runs: 25, payers: 1, counted_payers: 0 });
    const admitted = await send(g.url, 'POST', '/v0/calls', { key: strict.key, body: { agent: 'bob/echo', input: {} } });
    expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
    // Linked to GitHub, the same account counts, and the mandate now refuses the agent.
    await linkToGitHub(g, 'puppet-a', 9100);
    const denied = await send<{ receipt: { reasons: string[] } }>(g.url, 'POST', '/v0/calls', { key: strict.key, body: { agent: 'bob/echo', input: {} } });
    expect(denied.status).toBe(403);
    expect(denied.body.receipt.reasons.join(' ')).toMatch(/succeeded in 0 of 25 runs, below the required success rate/);
  });
});
