/**
 * Hosted mode through HTTP (gateway.md §7): sign-up, keys, principals and scoping, idempotent calls, against real
 * Postgres and Redis; the ledger audit runs after every test.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAgentHost } from '../../agents/host.mjs';
import { postWebhook } from '../../services/settler/callbacks.js';
import { createGuardedDispatcher, isAddressRefused } from '../../shared/platform/guarded-net.js';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import { AGENTS_DIR, manifestsPointingAt } from '../support/mcp-agents.js';
import { ADMIN_KEY, send, signUp, workMandate, type Account, type Reply } from '../support/hosted.js';

describe('sign-up and keys', () => {
  test('a stranger signs up, gets keys once, calls under their own mandate and sees only their own things', async () => {
    // The platform's own agents (agents/, served over MCP by the reference host) are what the sandbox may hire.
    const host = await startAgentHost({ port: 0, dir: AGENTS_DIR, log: () => {} });
    const agents = await manifestsPointingAt(AGENTS_DIR, host.url);
    try {
      await useAudited(await startTestGateway({ hosted: true, config: { registryDirs: [...TEST_REGISTRY, agents] } }), (g) => strangerJourney(g));
    } finally {
      await host.close();
    }
  });

  async function strangerJourney(g: TestGateway): Promise<void> {
    {
      const r = await send(g.url, 'POST', '/v0/signup', { body: { handle: 'Bob', email: 'Bob@Example.test' } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        account: { handle: 'bob', email: 'bob@example.test' },
        balance: { currency: 'EUR', amount: '5.00' },
        mandate: { mandate: { id: 'bob/sandbox', issuer: 'bob', grantee: 'bob/assistant' }, budget: { total: '5.00', remaining: '5.00' } },
        keys: {
          human: { kind: 'human', key: expect.stringMatching(/^hlk_h_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}$/) },
          agent: { kind: 'agent', mandate: 'bob/sandbox', ask_in_client: true },
        },
      });
      const bob: Account = { handle: 'bob', human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent.key };

      // The sandbox agent key calls without naming a mandate, and pays from the demo credit.
      const sandboxCall = await send(g.url, 'POST', '/v0/calls', {
        key: bob.sandboxAgent,
        body: { agent: 'holon-labs/csv-profile', input: { csv: 'a,b\n1,x\n' } },
      });
      expect(sandboxCall.status).toBe(200);
      expect(sandboxCall.body).toMatchObject({ output: { rows: 1 }, receipt: { mandate: 'bob/sandbox', billed: true, cost: { total: '0.002' } } });
      expect((await send(g.url, 'GET', '/v0/mandates/bob/sandbox', { key: bob.sandboxAgent })).body.budget).toMatchObject({ spent: '0.002', reserved: '0.00' });

      const meHuman = await send(g.url, 'GET', '/v0/me', { key: bob.human });
      expect(meHuman.body).toMatchObject({
        kind: 'human',
        // An email account: linked to no GitHub account, so it cannot publish yet.
        account: { handle: 'bob', github: null },
        balances: [{ currency: 'EUR', balance: '4.998' }],
        mandates: [{ id: 'bob/sandbox' }],
      });
      expect(meHuman.body.keys.map((k: any) => k.kind).sort()).toEqual(['agent', 'human']);
      expect(JSON.stringify(meHuman.body)).not.toContain(bob.human);
      const meAgent = await send(g.url, 'GET', '/v0/me', { key: bob.sandboxAgent });
      expect(meAgent.body).toMatchObject({ kind: 'agent', account: 'bob', mandate: { id: 'bob/sandbox' } });

      // Their own mandate for the examples, an agent key for it, and a call with the mandate implied.
      const work = await workMandate(g.url, bob);
      const call = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'hi' } } });
      expect(call.status).toBe(200);
      expect(call.body).toMatchObject({ output: { text: 'HI' }, receipt: { mandate: 'bob/work', billed: true, cost: { total: '0.01' } } });
      const receipts = await send(g.url, 'GET', '/v0/receipts', { key: bob.human });
      expect(receipts.body.receipts.map((x: any) => x.id)).toEqual([call.body.receipt.id, sandboxCall.body.receipt.id]);
      const accounts = await send(g.url, 'GET', '/v0/accounts', { key: bob.human });
      expect(accounts.body.accounts.map((a: any) => a.account)).toEqual(['bob']);
      expect(accounts.body.accounts[0].balance).toBe('4.988');
      // NUL characters are refused in the URL too, before anything reads the database.
      expect((await send(g.url, 'GET', '/v0/receipts/r_x%00y', { key: bob.human })).status).toBe(400);
      expect((await send(g.url, 'GET', '/v0/agents?q=a%00b')).status).toBe(400);

      // Hosted mandates: in the caller's namespace, issuer forced, EUR, the platform's rates.
      const bad = await send(g.url, 'POST', '/v0/mandates', {
        key: bob.human,
        body: {
          id: 'carol/x',
          issuer: 'carol',
          grantee: 'carol/a',
          allow: { agents: ['examples/*'] },
          budget: { total: '1.00', currency: 'USD', fx: { USD: '100' } },
        },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.problems.map((p: any) => p.path).sort()).toEqual(['$.budget.currency', '$.budget.fx', '$.grantee', '$.id', '$.issuer']);
      const dup = await send(g.url, 'POST', '/v0/mandates', {
        key: bob.human,
        body: { id: 'work', grantee: 'bob/assistant', allow: { agents: ['examples/*'] }, budget: { total: '1.00' } },
      });
      expect(dup.status).toBe(409);
      const list = await send(g.url, 'GET', '/v0/mandates', { key: bob.human });
      expect(list.body.mandates.map((m: any) => m.mandate.id).sort()).toEqual(['bob/sandbox', 'bob/work']);
      expect(list.body.mandates.find((m: any) => m.mandate.id === 'bob/work').mandate.budget.fx).toBeDefined();
    }
  }

  test("handles and emails: GitHub rules in lower case; reserved, authors' namespaces, taken and malformed ones refused", async () => {
    await useAudited(
      await startTestGateway({
        hosted: true,
        config: {
          rateLimits: { perAddressPerMin: 600, perAccountPerMin: 1200, signupsPerHour: 100, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 },
        },
      }),
      async (g) => {
        await signUp(g.url, 'alice');
        const cases: Array<[unknown, number, string]> = [
          [{ handle: 'a', email: 'x1@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'x'.repeat(40), email: 'x2@example.test' }, 400, 'invalid_handle'],
          [{ handle: '-bob', email: 'x3@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'bo--b', email: 'x4@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'bo_b', email: 'x5@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'holon', email: 'x6@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'admin', email: 'x7@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'examples', email: 'x8@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'fixtures', email: 'x9@example.test' }, 400, 'invalid_handle'],
          [{ handle: 'alice', email: 'new@example.test' }, 409, 'handle_taken'],
          [{ handle: 'alice2', email: 'ALICE@example.test' }, 409, 'email_taken'],
          [{ handle: 'carol', email: 'not an email' }, 400, 'invalid_request'],
          [{ handle: 'carol' }, 400, 'invalid_request'],
          [{ handle: 'carol', email: 'c@example.test', admin: true }, 400, 'invalid_request'],
          [{ handle: 'car\u0000ol', email: 'c@example.test' }, 400, 'invalid_request'],
          [{ handle: 42, email: 'c@example.test' }, 400, 'invalid_request'],
        ];
        for (const [body, status, code] of cases) {
          const r = await send(g.url, 'POST', '/v0/signup', { body });
          expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
        }
        expect((await send(g.url, 'POST', '/v0/signup', { body: '{"handle": ' })).status).toBe(400);
        // Nothing half-made: exactly one account, one credit.
        expect((await g.db.knex('accounts').where({ kind: 'user' })).map((a) => a.handle)).toEqual(['alice']);
      },
    );
  });

  test('the database holds no plaintext key, only SHA-256 hashes', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const a = await signUp(g.url, 'alice');
      const work = await workMandate(g.url, a);
      await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'x' } } });
      const secrets = [a.human, a.sandboxAgent, work.agent].map((k) => k.slice(15));
      const columns = await g.db
        .knex('information_schema.columns')
        .where({ table_schema: 'public' })
        .whereIn('data_type', ['text', 'character varying', 'jsonb', 'json'])
        .select('table_name', 'column_name');
      expect(columns.length).toBeGreaterThan(20);
      for (const { table_name: table, column_name: column } of columns) {
        for (const secret of secrets) {
          const hit = await g.db
            .knex(table)
            .whereRaw('??::text LIKE ?', [column, `%${secret}%`])
            .count<{ count: bigint }[]>('* as count');
          expect(Number(hit[0]!.count), `${table}.${column}`).toBe(0);
        }
      }
      expect(Number((await g.db.knex('api_keys').count<{ count: string }[]>('* as count'))[0]!.count)).toBe(3);
    });
  });

  test('a revoked or expired key, or a disabled account, is refused at once on every API process', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
      try {
        const a = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, a);
        for (const base of [g.url, other.url]) expect((await send(base, 'GET', '/v0/me', { key: work.agent })).status).toBe(200);
        const revoked = await send(other.url, 'DELETE', `/v0/keys/${work.prefix}`, { key: a.human });
        expect(revoked.body).toEqual({ prefix: work.prefix, state: 'revoked' });
        for (const base of [g.url, other.url]) {
          const r = await send(base, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'x' } } });
          expect(r.status).toBe(401);
        }
        expect((await send(g.url, 'DELETE', `/v0/keys/${work.prefix}`, { key: a.human })).status).toBe(404);
        // Someone else's key cannot be revoked (it does not exist for them).
        const b = await signUp(g.url, 'bob');
        const bobKey = (await send(g.url, 'GET', '/v0/me', { key: b.human })).body.keys[0].prefix;
        expect((await send(g.url, 'DELETE', `/v0/keys/${bobKey}`, { key: a.human })).status).toBe(404);
        expect((await send(g.url, 'GET', '/v0/me', { key: b.human })).status).toBe(200);

        await g.db
          .knex('api_keys')
          .where({ account: 'alice', kind: 'human' })
          .update({ expires_at: new Date(Date.now() - 1000) });
        for (const base of [g.url, other.url]) expect((await send(base, 'GET', '/v0/me', { key: a.human })).status).toBe(401);
        expect((await send(g.url, 'GET', '/v0/me', { key: a.sandboxAgent })).status).toBe(200);
        await g.db.knex('accounts').where({ handle: 'alice' }).update({ disabled_at: new Date() });
        for (const base of [g.url, other.url]) expect((await send(base, 'GET', '/v0/me', { key: a.sandboxAgent })).status).toBe(401);
        for (const bad of ['Bearer nope', 'Basic abc', `Bearer ${a.sandboxAgent.slice(0, -1)}x`, 'Bearer ' + 'x'.repeat(300)]) {
          expect((await send(g.url, 'GET', '/v0/me', { headers: { authorization: bad } })).status).toBe(401);
        }
      } finally {
        await other.stop();
      }
    });
  });
});

describe('scoping: every principal × every resource route', () => {
  type Who = 'none' | 'admin' | 'owner-human' | 'owner-agent' | 'other-human' | 'other-agent';
  const WHO: Who[] = ['none', 'admin', 'owner-human', 'owner-agent', 'other-human', 'other-agent'];
  const kindOf = (w: Who) => (w === 'none' || w === 'admin' ? w : w.endsWith('human') ? 'human' : 'agent');
  const owns = (w: Who) => w.startsWith('owner');

  interface Fixture {
    mandate: string;
    receipt: string;
    approval: string;
    keys: Record<Who, string | undefined>;
  }
  interface Route {
    name: string;
    /** Which principal kinds the route serves at all (others: 401 without a key, 403 with one). */
    kinds: Array<'none' | 'admin' | 'human' | 'agent'>;
    /** Scoped to the owner's mandate: anyone else gets 404. */
    scoped: boolean;
    ok: number;
    request(f: Fixture, who: Who): { method: string; path: string; body?: unknown };
  }

  // The table of gateway.md §7 Principals, one row per route.
  const ROUTES: Route[] = [
    { name: 'GET mandate', kinds: ['human', 'agent'], scoped: true, ok: 200, request: (f) => ({ method: 'GET', path: `/v0/mandates/${f.mandate}` }) },
    { name: 'GET receipt', kinds: ['human', 'agent'], scoped: true, ok: 200, request: (f) => ({ method: 'GET', path: `/v0/receipts/${f.receipt}` }) },
    {
      name: 'GET receipt proof',
      kinds: ['human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'GET', path: `/v0/receipts/${f.receipt}/proof` }),
    },
    { name: 'GET call', kinds: ['human', 'agent'], scoped: true, ok: 200, request: (f) => ({ method: 'GET', path: `/v0/calls/${f.receipt}` }) },
    { name: 'GET approval', kinds: ['human', 'agent'], scoped: true, ok: 200, request: (f) => ({ method: 'GET', path: `/v0/approvals/${f.approval}` }) },
    // The owner's human passes the scope and then fails the body check: deciding is theirs, and nothing is decided.
    {
      name: 'POST approval',
      kinds: ['human'],
      scoped: true,
      ok: 400,
      request: (f) => ({ method: 'POST', path: `/v0/approvals/${f.approval}`, body: { run: 'maybe' } }),
    },
    {
      name: 'GET receipts of mandate',
      kinds: ['human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'GET', path: `/v0/receipts?mandate=${f.mandate}` }),
    },
    {
      name: 'GET approvals of mandate',
      kinds: ['human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'GET', path: `/v0/approvals?mandate=${f.mandate}` }),
    },
    {
      name: 'GET catalogue under mandate',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'GET', path: `/v0/agents?capability=text.upper&mandate=${f.mandate}` }),
    },
    {
      name: 'POST call under mandate',
      kinds: ['human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'POST', path: '/v0/calls', body: { mandate: f.mandate, agent: 'examples/echo-upper', input: { text: 'x' } } }),
    },
    {
      name: 'POST key for mandate',
      kinds: ['human'],
      scoped: true,
      ok: 201,
      request: (f) => ({ method: 'POST', path: '/v0/keys', body: { mandate: f.mandate } }),
    },
    {
      name: 'GET the receipt log’s checkpoint',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: false,
      ok: 200,
      request: () => ({ method: 'GET', path: '/v0/log/checkpoint' }),
    },
    {
      name: 'GET a consistency proof',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: false,
      ok: 200,
      request: () => ({ method: 'GET', path: '/v0/log/consistency?from=0&to=1' }),
    },
    {
      name: 'GET catalogue',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: false,
      ok: 200,
      request: () => ({ method: 'GET', path: '/v0/agents?q=echo' }),
    },
    {
      name: 'GET one agent',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: false,
      ok: 200,
      request: () => ({ method: 'GET', path: '/v0/agents/examples/echo-upper' }),
    },
    { name: 'GET me', kinds: ['human', 'agent'], scoped: false, ok: 200, request: () => ({ method: 'GET', path: '/v0/me' }) },
    { name: 'GET balances', kinds: ['admin', 'human'], scoped: false, ok: 200, request: () => ({ method: 'GET', path: '/v0/accounts' }) },
    { name: 'GET receipts', kinds: ['human', 'agent'], scoped: false, ok: 200, request: () => ({ method: 'GET', path: '/v0/receipts' }) },
    {
      name: 'GET receipts CSV of mandate',
      kinds: ['human', 'agent'],
      scoped: true,
      ok: 200,
      request: (f) => ({ method: 'GET', path: `/v0/receipts.csv?mandate=${f.mandate}` }),
    },
    {
      name: 'GET statement',
      kinds: ['admin', 'human'],
      scoped: false,
      ok: 200,
      request: (_f, who) => ({ method: 'GET', path: who === 'admin' ? '/v0/statement?account=owner' : '/v0/statement' }),
    },
    { name: 'GET approvals', kinds: ['human', 'agent'], scoped: false, ok: 200, request: () => ({ method: 'GET', path: '/v0/approvals' }) },
    { name: 'GET mandates', kinds: ['human'], scoped: false, ok: 200, request: () => ({ method: 'GET', path: '/v0/mandates' }) },
    {
      name: 'POST mandate',
      kinds: ['human'],
      scoped: false,
      ok: 201,
      request: (_f, who) => ({
        method: 'POST',
        path: '/v0/mandates',
        body: {
          id: `m-${Math.random().toString(36).slice(2, 10)}`,
          grantee: `${who.startsWith('owner') ? 'owner' : 'other'}/assistant`,
          allow: { agents: ['examples/*'] },
          budget: { total: '0.10' },
        },
      }),
    },
    {
      name: 'POST admin credit',
      kinds: ['admin'],
      scoped: false,
      ok: 201,
      request: () => ({ method: 'POST', path: '/v0/admin/credit', body: { account: 'owner', amount: '0.01' } }),
    },
    {
      name: 'POST signup',
      kinds: ['none', 'admin', 'human', 'agent'],
      scoped: false,
      ok: 201,
      request: () => ({
        method: 'POST',
        path: '/v0/signup',
        body: { handle: `u${Math.random().toString(36).slice(2, 10)}`, email: `${Math.random().toString(36).slice(2)}@example.test` },
      }),
    },
  ];

  function expected(route: Route, who: Who): number {
    const kind = kindOf(who);
    if (!route.kinds.includes(kind)) return kind === 'none' ? 401 : 403;
    if (route.scoped && !owns(who)) return 404;
    return route.ok;
  }

  test(`${ROUTES.length} routes × ${WHO.length} principals answer as the principals table says`, async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const owner = await signUp(g.url, 'owner');
      const other = await signUp(g.url, 'other');
      const ownerWork = await workMandate(g.url, owner, { approval: { agents: ['examples/word-count'] } });
      const otherWork = await workMandate(g.url, other);
      const receipt = (await send(g.url, 'POST', '/v0/calls', { key: ownerWork.agent, body: { agent: 'examples/echo-upper', input: { text: 'x' } } })).body
        .receipt.id;
      const held = await send(g.url, 'POST', '/v0/calls', { key: ownerWork.agent, body: { agent: 'examples/word-count', input: { text: 'a b' } } });
      expect(held.status).toBe(202);
      const f: Fixture = {
        mandate: ownerWork.mandate,
        receipt,
        approval: held.body.approval.id,
        keys: {
          none: undefined,
          admin: ADMIN_KEY,
          'owner-human': owner.human,
          'owner-agent': ownerWork.agent,
          'other-human': other.human,
          'other-agent': otherWork.agent,
        },
      };
      const mismatches: string[] = [];
      let checked = 0;
      for (const route of ROUTES) {
        for (const who of WHO) {
          const { method, path: p, body } = route.request(f, who);
          const r: Reply = await send(g.url, method, p, { ...(f.keys[who] ? { key: f.keys[who] } : {}), ...(body !== undefined ? { body } : {}) });
          checked++;
          if (r.status !== expected(route, who))
            mismatches.push(`${route.name} as ${who}: ${r.status} (expected ${expected(route, who)}) ${JSON.stringify(r.body).slice(0, 160)}`);
        }
      }
      expect(mismatches).toEqual([]);
      expect(checked).toBe(ROUTES.length * WHO.length);
      // What the listings show is scoped too.
      const otherReceipts = await send(g.url, 'GET', '/v0/receipts', { key: other.human });
      expect(otherReceipts.body.receipts.every((x: any) => x.mandate.startsWith('other/'))).toBe(true);
      expect((await send(g.url, 'GET', '/v0/approvals', { key: owner.human })).body.approvals.map((x: any) => x.id)).toEqual([f.approval]);
      expect((await send(g.url, 'GET', '/v0/approvals', { key: ownerWork.agent })).body.approvals.map((x: any) => x.id)).toEqual([f.approval]);
      expect((await send(g.url, 'GET', '/v0/approvals', { key: other.human })).body.approvals).toEqual([]);
      const otherBalances = await send(g.url, 'GET', '/v0/accounts', { key: other.human });
      expect(otherBalances.body.accounts.map((a: any) => a.account)).toEqual(['other']);
      const adminBalances = await send(g.url, 'GET', '/v0/accounts', { key: ADMIN_KEY });
      expect(adminBalances.body.accounts.map((a: any) => a.account)).toEqual(expect.arrayContaining(['owner', 'other', 'holon']));
      // The approval is still pending: nobody but its human could have decided it, and they sent a bad body.
      expect((await send(g.url, 'GET', `/v0/approvals/${f.approval}`, { key: owner.human })).body.status).toBe('pending');
    });
  });

  test('/mcp takes an agent key only, and runs under its mandate', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const a = await signUp(g.url, 'alice');
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };
      const headers = { accept: 'application/json, text/event-stream' };
      expect((await send(g.url, 'POST', '/mcp', { body: init, headers })).status).toBe(401);
      expect((await send(g.url, 'POST', '/mcp', { body: init, headers, key: a.human })).status).toBe(403);
      expect((await send(g.url, 'POST', '/mcp', { body: init, headers, key: ADMIN_KEY })).status).toBe(403);
      const ok = await send(g.url, 'POST', '/mcp', { body: init, headers, key: a.sandboxAgent });
      expect(ok.status).toBe(200);
      const session = ok.headers.get('mcp-session-id')!;
      // Another key cannot use the session.
      const b = await signUp(g.url, 'bob');
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      const stolen = await send(g.url, 'POST', '/mcp', {
        body: list,
        headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        key: b.sandboxAgent,
      });
      expect(stolen.status).toBe(404);

      // The SDK's client with the agent key, as `claude mcp add --header "Authorization: Bearer hlk_a_…"` connects.
      const client = new Client({ name: 'hosted-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${b.sandboxAgent}` } } }),
      );
      try {
        const budget = await client.callTool({ name: 'get_budget', arguments: {} });
        expect(budget.structuredContent).toMatchObject({ mandate: 'bob/sandbox', total: '5.00' });
        const foreign = await client.callTool({ name: 'get_receipt', arguments: { id: 'r_anything' } });
        expect(foreign.isError).toBe(true);
        // Revoking the key ends what the session may do at once.
        const prefix = (await send(g.url, 'GET', '/v0/me', { key: b.sandboxAgent })).body.key;
        expect((await send(g.url, 'DELETE', `/v0/keys/${prefix}`, { key: b.human })).status).toBe(200);
        await expect(client.callTool({ name: 'get_budget', arguments: {} })).rejects.toThrow();
      } finally {
        await client.close().catch(() => undefined);
      }
    });
  });
});

describe('idempotent calls', () => {
  test('20 identical requests at once across 2 API processes run the agent once; a repeat replays the receipt', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
      try {
        const a = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, a);
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-idem-')), 'runs.log');
        const body = { agent: 'fixtures/counter', input: { file, ms: 1500 } };
        const headers = { 'idempotency-key': 'order-42' };
        const replies = await Promise.all(
          Array.from({ length: 20 }, (_, i) => send(i % 2 ? other.url : g.url, 'POST', '/v0/calls', { key: work.agent, body, headers })),
        );
        // One request ran the call; each of the others was told it is running (409) or, arriving after it ended,
        // got the replay. The agent ran once.
        const ran = replies.filter((r) => r.status === 200 && r.body.replayed === undefined);
        expect(ran).toHaveLength(1);
        const original = ran[0]!.body.receipt;
        for (const r of replies.filter((x) => x !== ran[0])) {
          if (r.status === 409) expect(r.body.error.code).toBe('idempotency_key_in_use');
          // A replay reads the output while it is kept: before the original answer collected it, or after (gone).
          else if (r.body.output !== null) expect(r.body).toEqual({ replayed: true, status: 'succeeded', output: ran[0]!.body.output, receipt: original });
          else expect(r.body).toEqual({ replayed: true, status: 'succeeded', output: null, output_gone: 'collected', receipt: original });
        }
        expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0);
        expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(1);

        for (const base of [g.url, other.url]) {
          const again = await send(base, 'POST', '/v0/calls', { key: work.agent, body, headers });
          expect(again.status).toBe(200);
          // The synchronous answer was this call's one consumer: collected (docs/lifecycle.md).
          expect(again.body).toEqual({ replayed: true, status: 'succeeded', output: null, output_gone: 'collected', receipt: original });
        }
        expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(1);
        expect((await send(g.url, 'GET', `/v0/mandates/${work.mandate}`, { key: a.human })).body.budget.spent).toBe('0.01');

        // The same key for another request is refused; keys are per API key (another key may reuse the name).
        const different = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { ...body, input: { file, ms: 2 } }, headers });
        expect([different.status, different.body.error.code]).toEqual([422, 'idempotency_key_reused']);
        const byHuman = await send(g.url, 'POST', '/v0/calls', { key: a.human, body: { ...body, mandate: work.mandate }, headers });
        expect(byHuman.status).toBe(200);
        expect(byHuman.body.replayed).toBeUndefined();
        expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(2);

        // A refused request replays its refusal; a request that failed before any call frees the key.
        const denied = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'holon-labs/csv-profile', input: {} },
          headers: { 'idempotency-key': 'k2' },
        });
        const deniedAgain = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'holon-labs/csv-profile', input: {} },
          headers: { 'idempotency-key': 'k2' },
        });
        expect(denied.status).toBe(404);
        expect(deniedAgain).toMatchObject({
          status: 404,
          body: { replayed: true, status: 'denied', error: { code: denied.body.error.code }, receipt: { id: denied.body.receipt.id } },
        });
        const malformed = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'examples/echo-upper' },
          headers: { 'idempotency-key': 'k3' },
        });
        expect(malformed.status).toBe(400);
        const fixed = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'examples/echo-upper', input: { text: 'ok' } },
          headers: { 'idempotency-key': 'k3' },
        });
        expect(fixed.status).toBe(200);
        expect(
          (
            await send(g.url, 'POST', '/v0/calls', {
              key: work.agent,
              body: { agent: 'examples/echo-upper', input: { text: 'ok' } },
              headers: { 'idempotency-key': 'x'.repeat(300) },
            })
          ).status,
        ).toBe(400);
      } finally {
        await other.stop();
      }
    });
  });
});

describe('rate limits', () => {
  test('per address across API processes; a forged X-Forwarded-For buys nothing; per account across keys', async () => {
    const limits = {
      rateLimits: { perAddressPerMin: 5, perAccountPerMin: 8, signupsPerHour: 2, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 },
      trustProxy: true,
    };
    await useAudited(await startTestGateway({ hosted: true, config: limits }), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: limits });
      try {
        const setup = { 'x-forwarded-for': '10.0.0.1' };
        const a = await signUp(g.url, 'alice', setup);
        const proxied = (client: string, forged = '6.6.6.6') => ({ 'x-forwarded-for': `${forged}, ${client}` });
        // Five from 9.9.9.9 (the address the proxy appended), alternating processes and forging the first entry.
        const replies: Reply[] = [];
        for (let i = 0; i < 6; i++)
          replies.push(await send(i % 2 ? other.url : g.url, 'GET', '/v0/agents?q=echo', { headers: proxied('9.9.9.9', `1.2.3.${i}`) }));
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
        const refused = replies[5]!;
        expect(refused.body.error.code).toBe('rate_limited');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect((await send(g.url, 'GET', '/v0/agents?q=echo', { headers: proxied('9.9.9.8') })).status).toBe(200);

        // Per account: two keys, many addresses, one bucket (8 per minute; the sign-up used none of it).
        const statuses: number[] = [];
        for (let i = 0; i < 9; i++) {
          const key = i % 2 ? a.human : a.sandboxAgent;
          statuses.push((await send(i % 2 ? other.url : g.url, 'GET', '/v0/me', { key, headers: proxied(`20.0.0.${i}`) })).status);
        }
        expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);

        // Sign-ups per address: 2 per hour from 10.0.0.1 (alice was the first).
        expect((await signUp(g.url, 'bob', setup)).handle).toBe('bob');
        const third = await send(other.url, 'POST', '/v0/signup', { body: { handle: 'carol', email: 'carol@example.test' }, headers: setup });
        expect(third.status).toBe(429);
      } finally {
        await other.stop();
      }
    });
  });
});

describe('platform rules', () => {
  test("the admin key tops up credit but never calls under a user's mandate nor decides approvals", async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const a = await signUp(g.url, 'alice');
      const work = await workMandate(g.url, a, { approval: { agents: ['examples/echo-upper'] } });
      const held = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'x' } } });
      expect(held.status).toBe(202);
      expect((await send(g.url, 'POST', `/v0/approvals/${held.body.approval.id}`, { key: ADMIN_KEY, body: {} })).status).toBe(403);
      expect((await send(g.url, 'POST', `/v0/approvals/${held.body.approval.id}`, { key: work.agent, body: {} })).status).toBe(403);
      expect(
        (await send(g.url, 'POST', '/v0/calls', { key: ADMIN_KEY, body: { mandate: work.mandate, agent: 'examples/echo-upper', input: { text: 'x' } } }))
          .status,
      ).toBe(403);
      const credit = await send(g.url, 'POST', '/v0/admin/credit', { key: ADMIN_KEY, body: { account: 'alice', amount: '2.00' } });
      expect(credit.status).toBe(201);
      const ran = await send(g.url, 'POST', `/v0/approvals/${held.body.approval.id}`, { key: a.human, body: {} });
      expect(ran.status).toBe(200);
      expect(ran.body.output).toEqual({ text: 'X' });
      // NUL characters are refused in requests.
      const nul = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'a\u0000b' } } });
      expect(nul.status).toBe(400);

      // Callbacks never reach private addresses: refused at submission, and the delivery's every connection is checked.
      let hits = 0;
      const receiver = createServer((_req, res) => {
        hits++;
        res.end('ok');
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        for (const url of [hook, 'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/x', 'http://[::1]/x']) {
          const r = await send(g.url, 'POST', '/v0/calls', {
            key: work.agent,
            body: { agent: 'examples/echo-upper', input: { text: 'x' }, callback_url: url },
          });
          expect([r.status, r.body.error?.problems?.[0]?.path], url).toEqual([400, '$.callback_url']);
        }
        // A call whose URL turned private after submission (DNS rebinding): the guarded delivery refuses to connect.
        const ok = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/word-count', input: { text: 'a b' } } });
        expect(ok.status).toBe(200);
        await g.db.knex('calls').where({ id: ok.body.receipt.id }).update({ callback_url: hook });
        const guarded = createGuardedDispatcher();
        try {
          // The settler's own client for deliveries, with the URL the call row now names.
          const call = await g.db.knex('calls').where({ id: ok.body.receipt.id }).first('callback_url');
          const e = await postWebhook(call.callback_url, '{}', {}, { dispatcher: guarded, timeoutMs: 5_000, now: Date.now });
          expect('cause' in e && isAddressRefused(e.cause), JSON.stringify(e)).toBe(true);
        } finally {
          await guarded.close();
        }
        expect(hits).toBe(0);
      } finally {
        await new Promise((resolve) => receiver.close(resolve));
      }
    });
  });
});
