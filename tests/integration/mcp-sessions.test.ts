/**
 * The session limits of /mcp (services/api/mcp/sessions.ts, docs/mcp.md): per client address in dev mode and per
 * account hosted, a table of exact size, the longest-idle session of the same principal given up before a refusal,
 * and refusals that are JSON-RPC errors in plain words (a hosted 401 also names the Bearer scheme). Requests come from different loopback addresses (127.0.0.x) through undici's
 * `localAddress`, so that one test process plays several clients.
 */
import { requestStateSeal } from '../../services/api/mcp/request-state.js';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch } from 'undici';
import { afterAll, describe, expect, test as base } from 'vitest';
import express from 'express';
import { createMcpEndpoint, type McpEndpoint } from '../../services/api/mcp/server.js';
import { SessionTable } from '../../services/api/mcp/sessions.js';
import { authenticate } from '../../services/api/principal.js';
import { createCallWaiter } from '../../shared/calls/answer/waiter.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';

const test = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { mcpMandate: 'alice/test' } }), use),
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

const agents = new Map<string, Agent>();
/** A dispatcher whose connections leave from this loopback address. */
function from(address: string): Agent {
  let agent = agents.get(address);
  if (!agent) agents.set(address, (agent = new Agent({ localAddress: address })));
  return agent;
}

afterAll(async () => {
  await Promise.all([...agents.values()].map((a) => a.close()));
});

interface Answer {
  status: number;
  session: string | null;
  retryAfter: string | null;
  challenge: string | null;
  /** The JSON-RPC message (the first `data:` of an event stream). */
  body: any;
}

interface From {
  /** The loopback address the request leaves from (default 127.0.0.1). */
  address?: string;
  /** Hosted: the agent key. */
  key?: string;
}

async function rpc(url: string, message: unknown, options: From & { session?: string; authorization?: string } = {}): Promise<Answer> {
  const authorization = options.authorization ?? (options.key ? `Bearer ${options.key}` : undefined);
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    dispatcher: from(options.address ?? '127.0.0.1'),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(options.session ? { 'mcp-session-id': options.session, 'mcp-protocol-version': '2025-06-18' } : {}),
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  const data = res.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)?.[1] : text;
  return {
    status: res.status,
    session: res.headers.get('mcp-session-id'),
    retryAfter: res.headers.get('retry-after'),
    challenge: res.headers.get('www-authenticate'),
    body: data ? JSON.parse(data) : undefined,
  };
}

async function open(url: string, from: From = {}): Promise<string> {
  const r = await rpc(url, INITIALIZE, from);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.session!;
}

/** Is the session still served? */
const alive = async (url: string, session: string, key?: string): Promise<boolean> =>
  (await rpc(url, LIST, { session, ...(key ? { key } : {}) })).status === 200;

/** The MCP endpoint again, with small session limits, behind the gateway's JSON body and dev principal, on its own port. */
async function smallLimits(g: TestGateway, limits: { total: number; perPrincipal: number }) {
  const ctx = g.gw.context;
  const waiter = await createCallWaiter(ctx.db, ctx.messaging.notifier);
  const mcp: McpEndpoint = createMcpEndpoint({
    ctx,
    engine: g.gw.engine.withWaiter(waiter),
    waiter,
    defaultMandate: 'alice/test',
    progressIntervalMs: 1000,
    elicitationTimeoutMs: 1000,
    requestState: requestStateSeal('a secret of this test', 60, () => Date.now()),
    sessionLimits: limits,
  });
  const app = express()
    .use(express.json())
    .use(authenticate(ctx.db, { hosted: false, now: ctx.now }))
    .use(mcp.router);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    mcp,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await mcp.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await waiter.close();
    },
  };
}

function expectRefusal(r: Answer, status: number, words: RegExp): void {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: expect.stringMatching(words) } });
  expect(Number(r.retryAfter)).toBeGreaterThan(0);
}

describe('MCP session limits', () => {
  test('a client address at its limit (20) gives up its longest-idle session; another address is untouched', async ({ gateway: g }) => {
    await g.mandate({});
    const mine: string[] = [];
    for (let i = 0; i < 20; i++) mine.push(await open(g.url));
    const neighbour = await open(g.url, { address: '127.0.0.2' });
    // Using the first makes the second the longest idle.
    expect(await alive(g.url, mine[0]!)).toBe(true);
    const newest = await open(g.url);
    expect(await alive(g.url, mine[1]!)).toBe(false);
    for (const s of [mine[0]!, ...mine.slice(2), newest, neighbour]) expect(await alive(g.url, s)).toBe(true);
  });

  test('a burst cannot overshoot: a principal holds at most its share, the table at most its size, refusals are JSON-RPC', async ({ gateway: g }) => {
    await g.mandate({});
    const small = await smallLimits(g, { total: 5, perPrincipal: 3 });
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => rpc(small.url, INITIALIZE)));
      for (const r of answers.filter((x) => x.status !== 200)) expectRefusal(r, 429, /too many MCP sessions: 3 are open for this client address/);
      expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(3);
      expect(small.mcp.sessionCount()).toBe(3);
      const live = [];
      for (const r of answers.filter((x) => x.status === 200)) if (await alive(small.url, r.session!)) live.push(r.session);
      expect(live).toHaveLength(3);

      // Another address takes the two places left; a third finds the table full (its own sessions: none to give up).
      const b1 = await open(small.url, { address: '127.0.0.2' });
      const b2 = await open(small.url, { address: '127.0.0.2' });
      expectRefusal(await rpc(small.url, INITIALIZE, { address: '127.0.0.3' }), 503, /as many MCP sessions as it can \(5\)/);
      // At a full table the second address gives up its own longest-idle session, never another's.
      await alive(small.url, b1);
      await open(small.url, { address: '127.0.0.2' });
      expect(await alive(small.url, b2)).toBe(false);
      expect(await alive(small.url, b1)).toBe(true);
      for (const s of live) expect(await alive(small.url, s!)).toBe(true);
      expect(small.mcp.sessionCount()).toBe(5);
    } finally {
      await small.stop();
    }
  });

  test('a session with a tool call in flight is never given up; when every session is busy the next is refused', async ({ gateway: g }) => {
    await g.mandate({});
    const small = await smallLimits(g, { total: 10, perPrincipal: 1 });
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-mcp-')), 'patient.log');
    const client = new Client({ name: 'busy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${small.url}/mcp`)));
    try {
      const abort = new AbortController();
      const running = client.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/patient', input: { file, ms: 20_000 } } }, undefined, {
        signal: abort.signal,
      });
      running.catch(() => undefined);
      await poll(async () => (await readFile(file, 'utf8').catch(() => '')).includes('started'), { what: 'the agent to start', intervalMs: 25 });
      expectRefusal(await rpc(small.url, INITIALIZE), 429, /each is busy/);
      expect(small.mcp.sessionCount()).toBe(1);
      abort.abort('done');
      await expect(running).rejects.toThrow();
      // Once the call has ended, the session is idle again and is given up for a new one.
      await poll(async () => (await rpc(small.url, INITIALIZE)).status === 200, { what: 'a new session', intervalMs: 25 });
      expect(small.mcp.sessionCount()).toBe(1);
      await expect(client.listTools()).rejects.toThrow();
      // The cancelled call settles unbilled before the ledger audit.
      const call = await g.db.knex('calls').where({ agent_id: 'fixtures/patient' }).first('id');
      await poll(async () => (await g.get(`/v0/receipts/${call.id}`)).status === 200, { what: 'the receipt', intervalMs: 25 });
    } finally {
      await client.close().catch(() => undefined);
      await small.stop();
    }
  });
});

describe('/mcp hosted', () => {
  test('a 401 says, in WWW-Authenticate and in words, to sign in or connect with an agent key; sessions are limited per account', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const keyless = await rpc(g.url, INITIALIZE);
      expect(keyless.status).toBe(401);
      const metadata = `resource_metadata="${g.url}/.well-known/oauth-protected-resource/mcp"`;
      expect(keyless.challenge).toMatch(new RegExp(`^Bearer realm="holon", ${metadata}, error_description="[^"]*agent key[^"]*"$`));
      expect(keyless.body).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/agent key/) } });
      for (const authorization of ['Bearer hlk_a_not-a-key', 'Basic abc']) {
        const refused = await rpc(g.url, INITIALIZE, { authorization });
        expect(refused.status, authorization).toBe(401);
        expect(refused.challenge, authorization).toMatch(
          new RegExp(`^Bearer realm="holon", ${metadata}, error="invalid_token", error_description="[^"]*agent key[^"]*"$`),
        );
      }

      const alice = await signUp(g.url, 'alice');
      const second = (await workMandate(g.url, alice)).agent;
      const bob = await signUp(g.url, 'bob');
      const bobs = await open(g.url, { key: bob.sandboxAgent });
      const alices: string[] = [];
      for (let i = 0; i < 20; i++) alices.push(await open(g.url, { key: alice.sandboxAgent }));
      // The account's other key counts against the same 20: the longest-idle session of the account makes room.
      const other = await open(g.url, { key: second });
      expect(await alive(g.url, alices[0]!, alice.sandboxAgent)).toBe(false);
      for (const s of alices.slice(1)) expect(await alive(g.url, s, alice.sandboxAgent)).toBe(true);
      expect(await alive(g.url, other, second)).toBe(true);
      expect(await alive(g.url, bobs, bob.sandboxAgent)).toBe(true);
    });
  });
});

describe('the session table', () => {
  const entry = (principal: string, closed: string[]) => ({ principal, lastUsed: 0, seq: 0, inFlight: 0, close: () => void closed.push(principal) });

  test('an initialize holds its slot from admission, before anything awaits: slots under way count against both limits', () => {
    const closed: string[] = [];
    const table = new SessionTable({ total: 3, perPrincipal: 2, idleMs: 60_000 });
    const a1 = table.admit('address:a');
    const a2 = table.admit('address:a');
    expect([a1.ok, a2.ok]).toEqual([true, true]);
    // Nothing is open yet, so nothing can be given up: refused, however many arrive at once.
    expect(table.admit('address:a')).toMatchObject({ ok: false, status: 429 });
    const b1 = table.admit('address:b');
    expect(b1.ok).toBe(true);
    expect(table.admit('address:c')).toMatchObject({ ok: false, status: 503 });
    // A failed initialize gives its slot back; a filled one becomes a session, which can be given up when idle.
    if (!a1.ok || !a2.ok || !b1.ok) throw new Error('admitted above');
    a1.slot.release();
    a1.slot.release();
    expect(table.admit('address:c').ok).toBe(true);
    a2.slot.fill('s-a2', entry('address:a', closed));
    expect(table.size).toBe(1);
    // The table is full (one session, two under way): a's idle session makes room for a's new one, never for c.
    expect(table.admit('address:c')).toMatchObject({ ok: false, status: 503 });
    expect(table.admit('address:a').ok).toBe(true);
    expect(closed).toEqual(['address:a']);
    expect(table.get('s-a2')).toBeUndefined();
  });
});
