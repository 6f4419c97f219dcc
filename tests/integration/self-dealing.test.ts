/**
 * Self-dealing cannot buy a ranking (shared/catalogue/agent-record.ts, shared/core/resolution.ts `rankingRecord`):
 * runs an agent's author paid for — directly or as the payer of a delegation tree's root — never enter its Agent
 * Record, its ranking or a `min_success_rate` check, and a measured record moves the capability ranking only once
 * HOLON_RANKING_MIN_PAYERS (3) distinct accounts paid for its runs. The calls themselves are billed as any other.
 * Every payer here is vouched for by the admin's credit (tests/integration/sign-up-payers.test.ts: payers that are not).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { recordPublished } from '../../shared/registry/published.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';
import { insertRuns } from '../support/synthetic-runs.js';
import { callByName, routing, type Caller } from '../support/routing-checks.js';

async function echoServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, server };
}

/** An author's agent claiming `text.echo`, published straight into the registry (the publishing checks are not the subject). */
async function publish(g: TestGateway, id: string, amount: string, endpoint: string): Promise<void> {
  const v = validateManifest({
    id,
    version: '1.0.0',
    summary: `${id}, an echo`,
    capabilities: ['text.echo'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount },
    runtime: { kind: 'webhook', endpoint, limits: { timeout_s: 10 } },
  });
  if (!v.ok) throw new Error(`invalid test manifest: ${JSON.stringify(v.problems)}`);
  expect(await recordPublished(g.gw.context, { manifest: v.manifest, author: id.split('/')[0]! })).toBe('listed');
}

/** The admin's credit to an account (1.00 EUR): outside money, so the account counts as a payer (counted-payer.ts). */
async function vouch(g: TestGateway, account: string): Promise<void> {
  const r = await send(g.url, 'POST', '/v0/admin/credit', {
    key: ADMIN_KEY,
    body: { account, amount: '1.00', currency: 'EUR' },
    headers: { 'Idempotency-Key': `vouch-${account}` },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function caller(g: TestGateway, handle: string, doc: Record<string, unknown> = {}): Promise<Caller> {
  const account = await signUp(g.url, handle);
  await vouch(g, handle);
  const work = await workMandate(g.url, account, { allow: { agents: ['bob/*', 'carol/*'], capabilities: ['text.*'], published: true }, ...doc });
  return { account, mandate: work.mandate, key: work.agent };
}

const recordOf = async (g: TestGateway, id: string) =>
  (await send<{ record: { runs: number; successes: number; payers: number } }>(g.url, 'GET', `/v0/agents/${id}`)).body.record;

test('an author calling her own agent 30 times, or a second account of hers doing it, leaves the routing unchanged; three real payers move it', async () => {
  const agent = await echoServer();
  try {
    await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
      const bob = await signUp(g.url, 'bob');
      const carol = await caller(g, 'carol');
      expect(bob.handle).toBe('bob');
      await publish(g, 'bob/echo', '0.01', agent.url);
      await publish(g, 'carol/echo', '0.03', agent.url);
      // bob/echo has three real customers and a modest record: 20 successes in 100 runs at 0.01 each.
      await insertRuns(
        g.db.knex,
        Array.from({ length: 100 }, (_, i) => ({
          agentId: 'bob/echo',
          version: '1.0.0',
          status: i < 20 ? ('succeeded' as const) : ('failed' as const),
          ...(i < 20 ? {} : { code: 'agent_error' }),
          latency: 5,
          cost: 10_000,
          payer: `customer-${i % 3}`,
        })),
      );
      for (const customer of ['customer-0', 'customer-1', 'customer-2']) await vouch(g, customer);
      const alice = await caller(g, 'alice');
      // Before: bob/echo (0.01 ÷ smoothed 21/102 ≈ 0.049 per success; about 0.044 once alice's three routed calls
      // succeeded) beats carol/echo's prior (0.03 ÷ 50 % = 0.06).
      expect(await routing(g.url, alice)).toEqual({ ranked: ['bob/echo', 'carol/echo'], reached: 'bob/echo@1.0.0' });

      // The reviewer's scenario: carol calls her own agent 30 times. Counted, 30 of 30 at 0.03 (≈ 0.032) would rank it first.
      await callByName(g.url, carol, 'carol/echo', 30);
      expect(await recordOf(g, 'carol/echo')).toMatchObject({ runs: 0, successes: 0, payers: 0 });
      expect(await routing(g.url, alice)).toEqual({ ranked: ['bob/echo', 'carol/echo'], reached: 'bob/echo@1.0.0' });

      // A second account of hers, signed up by email, makes the same 30 calls: counted, but one payer ranks nothing.
      const carol2 = await caller(g, 'carol-two');
      await callByName(g.url, carol2, 'carol/echo', 30);
      expect(await recordOf(g, 'carol/echo')).toMatchObject({ runs: 30, successes: 30, payers: 1, counted_payers: 1 });
      expect(await routing(g.url, alice)).toEqual({ ranked: ['bob/echo', 'carol/echo'], reached: 'bob/echo@1.0.0' });

      // Two more real payers (three in all): now the measured record moves the ranking.
      for (const handle of ['dave', 'erin']) await callByName(g.url, await caller(g, handle), 'carol/echo', 2);
      expect(await recordOf(g, 'carol/echo')).toMatchObject({ runs: 34, successes: 34, payers: 3, counted_payers: 3 });
      expect(await routing(g.url, alice)).toEqual({ ranked: ['carol/echo', 'bob/echo'], reached: 'carol/echo@1.0.0' });

      // Every one of those calls was billed: carol paid for her own 30 like anyone else.
      const own = await g.db.knex('receipts').where({ payer: 'carol', agent: 'carol/echo@1.0.0', billed: true }).count<{ count: string }[]>({ count: '*' });
      expect(Number(own[0]!.count)).toBe(30);
    });
  } finally {
    agent.server.close();
  }
});

test('runs the author paid for, directly or at the root of a delegation tree, never reach min_success_rate', async () => {
  const agent = await echoServer();
  try {
    await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
      await signUp(g.url, 'bob');
      await publish(g, 'bob/echo', '0.01', agent.url);
      const strict = await caller(g, 'alice', { require: { min_success_rate: '0.9' } });
      const failures = (extra: { payer: string; rootPayer?: string }) =>
        Array.from({ length: 25 }, () => ({ agentId: 'bob/echo', version: '1.0.0', status: 'failed' as const, code: 'agent_error', latency: 5, ...extra }));
      // 25 failures bob paid for, and 25 that dave paid for inside a tree whose root bob paid for: none counts.
      await insertRuns(g.db.knex, [...failures({ payer: 'bob' }), ...failures({ payer: 'dave', rootPayer: 'bob' })]);
      expect(await recordOf(g, 'bob/echo')).toMatchObject({ runs: 0, payers: 0 });
      const admitted = await send(g.url, 'POST', '/v0/calls', { key: strict.key, body: { agent: 'bob/echo', input: {} } });
      expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
      // The same failures paid for by someone else count, and the mandate now refuses the agent.
      await insertRuns(g.db.knex, failures({ payer: 'dave' }));
      await vouch(g, 'dave');
      expect(await recordOf(g, 'bob/echo')).toMatchObject({ runs: 26, successes: 1, payers: 2 });
      const denied = await send<{ receipt: { reasons: string[] } }>(g.url, 'POST', '/v0/calls', { key: strict.key, body: { agent: 'bob/echo', input: {} } });
      expect(denied.status).toBe(403);
      expect(denied.body.receipt.reasons.join(' ')).toMatch(/succeeded in 1 of 26 runs, below the required success rate/);
    });
  } finally {
    agent.server.close();
  }
});
