/**
 * Tenants never see each other, by id (DESIGN §3.7, docs/hosted.md "Principals and scoping"): for every route and MCP
 * tool that takes an id, account B asking for account A's real id gets exactly the answer of a random well-formed id
 * that names nothing — the same status, the same headers that matter, the same body text, the same MCP tool result.
 *
 * How two answers are compared (`normalized`):
 *  - the id asked for is replaced by `<id>` in each answer, since a message may echo the id the caller sent ("there is
 *    no approval a_…"): the echo depends only on what was sent, never on what exists; the random id has the real
 *    one's length, so Content-Length is compared as it is;
 *  - a request that is refused WITH a receipt (POST /v0/calls, call_agent, a call_agent task) mints a new receipt each
 *    time: that receipt's id (also the task id), its `created_at` and its `signature` (which covers both; each
 *    occurrence of the three strings) are replaced by `<new receipt>`, `<new receipt's created_at>` and `<new
 *    receipt's signature>`. Everything else of the answer — status, code, message, every
 *    reason, the rest of the receipt — is compared byte for byte;
 *    A call_agent task's own `createdAt` and `lastUpdatedAt` are left out the same way;
 *  - headers: all of them, but `date`, `x-request-id` (per request) and `etag` (a hash of the body, whose normalized
 *    text is compared instead);
 *  - MCP: the whole tool result (content, structuredContent, isError), or the JSON-RPC error (code, message, data).
 * Each row also says what the answer must be (`expect`), so that two answers alike by accident (a bad key, a typo in a
 * path) do not pass. The table is the checklist of routes and tools that take an id; a failure lists every mismatch.
 * Before the fix, the 32 rows that name A's approval in a call (POST /v0/calls, call_agent, call_agent as a task)
 * failed: their reasons said the approval's state, that it was for mandate alice/work, and — by "was given for
 * another input" or its absence — whether a guess of A's input was right.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newApprovalId } from '../../shared/calls/submit/approvals.js';
import { newReceiptId } from '../../shared/calls/ids.js';
import { fileHandle } from '../../shared/files/handles.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { send, signUp, workMandate } from '../support/hosted.js';
import { GENEROUS_RATE_LIMITS, request } from '../support/http.js';
import { poll } from '../support/poll.js';
import { startWebhookAgent, type PublishedServer } from '../support/published-servers.js';

const FILE_SECRET = 'tenant-ids-file-secret-0123456789abcdef';

/** One answer as the wire carried it. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** A request for one id: the same function builds the real id's request and the random id's. */
type Probe = (id: string) => Promise<Answer>;

interface Row {
  name: string;
  probe: Probe;
  /** Account A's id, and one of the same form (and length) that names nothing. */
  real: string;
  random: string;
  /** Refused with a receipt: the new receipt's id and created_at are left out of the comparison. */
  fresh?: boolean;
  /** What the (normalized) answer to A's id says, as `<status> <body>` (MCP: status 0, a JSON-RPC error -1): a substring. */
  expect: string;
}

const IGNORED_HEADERS = new Set(['date', 'x-request-id', 'etag']);

async function ask(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await request(base, method, path, options);
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!IGNORED_HEADERS.has(k)) headers[k] = v;
  });
  return { status: res.status, headers, text: await res.text() };
}

/** An MCP answer (a tool result, a task, or the JSON-RPC error a request got) as one comparable text. */
async function mcp(run: () => Promise<unknown>): Promise<Answer> {
  try {
    return { status: 0, headers: {}, text: JSON.stringify(await run()) };
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown; data?: unknown };
    return { status: -1, headers: {}, text: JSON.stringify({ code: err.code, message: err.message, data: err.data }) };
  }
}

/** The receipts an answer carries that this very request minted: each object with a receipt id and a created_at. */
function freshReceipts(text: string): Array<{ id: string; created_at: string; signature: string }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const found: Array<{ id: string; created_at: string; signature: string }> = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.id === 'string' && /^r_[0-9a-z]{9}[0-9a-f]{12}$/.test(o.id) && typeof o.created_at === 'string' && typeof o.signature === 'string') {
        found.push({ id: o.id, created_at: o.created_at, signature: o.signature });
      }
      Object.values(o).forEach(walk);
    }
  };
  walk(parsed);
  return found;
}

const replaceAll = (text: string, what: string, by: string): string => text.split(what).join(by);

function normalized(a: Answer, asked: string, fresh: boolean): Answer {
  let text = replaceAll(a.text, asked, '<id>');
  if (fresh) {
    for (const r of freshReceipts(a.text)) {
      text = replaceAll(
        replaceAll(replaceAll(text, r.signature, "<new receipt's signature>"), r.id, '<new receipt>'),
        r.created_at,
        "<new receipt's created_at>",
      );
    }
  }
  return { ...a, text };
}

/** `n` characters of a-z (a name, a handle's tail) that nothing in these tests uses. */
const letters = (n: number): string =>
  Array.from(randomBytes(n))
    .map((b) => String.fromCharCode(97 + (b % 26)))
    .join('');
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const base62 = (n: number): string =>
  Array.from(randomBytes(n))
    .map((b) => BASE62[b % 62])
    .join('');
/** A name of `real`'s length, in `real`'s form, that is not `real`. */
const sameLength = (real: string): string => {
  for (;;) {
    const s = letters(real.length);
    if (s !== real) return s;
  }
};

async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server };
}

async function connect(base: string, key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'tenant-ids-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return { client, transport };
}

let github: FakeGitHub;
let agent: PublishedServer;
beforeAll(async () => {
  github = await startFakeGitHub();
  agent = await startWebhookAgent({ tls: false });
});
afterAll(async () => {
  await agent?.close();
  await github?.close();
});

describe('another tenant’s id answers exactly like an id that names nothing', () => {
  test('every route and MCP tool that takes an id: account B asking for A’s id and for a random one gets the same bytes', async () => {
    const config = { ...github.config, githubTimeoutMs: 2000, allowPrivateEndpoints: true, fileSecret: FILE_SECRET, ...GENEROUS_RATE_LIMITS };
    await useAudited(await startTestGateway({ hosted: true, config }), async (g) => {
      const receiver = await startReceiver();
      const clients: Client[] = [];
      try {
        const { rows, untouched } = await buildRows(g, receiver.url, clients);
        const mismatches: string[] = [];
        for (const row of rows) {
          expect(row.random.length, `${row.name}: the random id has the real one's length`).toBe(row.real.length);
          expect(row.random, row.name).not.toBe(row.real);
          const real = normalized(await row.probe(row.real), row.real, row.fresh === true);
          const random = normalized(await row.probe(row.random), row.random, row.fresh === true);
          if (JSON.stringify(real) !== JSON.stringify(random)) {
            mismatches.push(`${row.name}\n    A's id:    ${JSON.stringify(real)}\n    random id: ${JSON.stringify(random)}`);
          } else if (!`${real.status} ${real.text}`.includes(row.expect)) {
            mismatches.push(`${row.name}: both answered ${real.status} ${real.text.slice(0, 300)}, not ${row.expect}`);
          }
        }
        expect(mismatches, mismatches.join('\n')).toEqual([]);
        expect(rows.length).toBeGreaterThanOrEqual(100);
        await untouched();
      } finally {
        await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
        await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
      }
    });
  });
});

/** Account A's things (each kind an id can name), account B's keys and MCP session, and the table of probes. */
async function buildRows(g: TestGateway, callbackUrl: string, clients: Client[]): Promise<{ rows: Row[]; untouched(): Promise<void> }> {
  const base = g.url;
  // A signs in with GitHub (so that A can publish); B is an email account.
  const alice = await signInWithGitHub(base, github, 'alice', 4001);
  const aliceWork = await workMandate(base, alice, { approval: { above: '0.005' } });
  const bob = await signUp(base, 'bob');
  const bobWork = await workMandate(base, bob);

  // A's calls: one finished (with a webhook delivery), one held for approval (pending), one granted, one used, one rejected.
  const input = { text: 'secret of alice' };
  const call = { agent: 'examples/echo-upper', input };
  const held = async (text: string) => {
    const r = await send(base, 'POST', '/v0/calls', { key: aliceWork.agent, body: { ...call, input: { text } } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return { approval: r.body.approval.id as string, receipt: r.body.receipt.id as string };
  };
  const pending = await held(input.text);
  const granted = await held(input.text);
  expect((await send(base, 'POST', `/v0/approvals/${granted.approval}`, { key: alice.human, body: { run: false } })).status).toBe(200);
  const used = await held(input.text);
  const ran = await send(base, 'POST', `/v0/approvals/${used.approval}`, { key: alice.human, body: {} });
  expect(ran.status, JSON.stringify(ran.body)).toBe(200);
  const rejected = await held(input.text);
  expect((await send(base, 'POST', `/v0/approvals/${rejected.approval}`, { key: alice.human, body: { decision: 'reject' } })).status).toBe(200);
  // A call that ran and whose webhook was delivered: under a second mandate of A's that asks no approval.
  const aliceOpen = await workMandate(base, alice, { id: 'open' });
  const delivered = await send(base, 'POST', '/v0/calls', { key: aliceOpen.agent, body: { ...call, callback_url: callbackUrl } });
  expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
  const finished = delivered.body.receipt.id as string;
  await poll(
    async () => {
      const r = await send(base, 'GET', `/v0/calls/${finished}/deliveries`, { key: alice.human });
      return r.body.delivery?.state === 'delivered';
    },
    { what: "A's webhook to be delivered", timeoutMs: 15_000, intervalMs: 50 },
  );

  // A's file.
  const up = await fetch(`${base}/v0/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.human}`, 'content-type': 'text/plain' },
    body: 'a,b\n1,2\n',
  });
  expect(up.status).toBe(201);
  const file = ((await up.json()) as { id: string }).id;

  // A's published agent (a webhook agent on loopback).
  const manifest = {
    id: 'alice/echo',
    version: '1.0.0',
    summary: 'alice/echo, published for a test',
    capabilities: ['text.echo'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint: `http://127.0.0.1:${agent.port}/echo`, limits: { timeout_s: 10 } },
  };
  const published = await send(base, 'POST', '/v0/agents', { key: alice.human, body: manifest });
  expect(published.status, JSON.stringify(published.body)).toBe(201);

  // A's MCP session and task; B's MCP session.
  const aliceMcp = await connect(base, aliceWork.agent);
  clients.push(aliceMcp.client);
  const aliceTask = (
    await aliceMcp.client.request(
      { method: 'tools/call', params: { name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: 'task' } }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    )
  ).task.taskId;
  const aliceSession = aliceMcp.transport.sessionId!;
  const bobMcp = (await connect(base, bobWork.agent)).client;
  clients.push(bobMcp);

  const rows: Row[] = [];
  const add = (row: Row) => rows.push(row);
  const http =
    (method: string, path: (id: string) => string, key: string, body?: (id: string) => unknown): Probe =>
    (id) =>
      ask(base, method, path(id), { key, ...(body ? { body: body(id) } : {}) });
  const tool =
    (name: string, args: (id: string) => Record<string, unknown>): Probe =>
    (id) =>
      mcp(() => bobMcp.callTool({ name, arguments: args(id) }));
  const bobKeys = [
    ['B human', bob.human],
    ['B agent key', bobWork.agent],
  ] as const;
  /** B's call body: a human names B's mandate, an agent key's is implied. */
  const bobCall = (key: string, extra: Record<string, unknown>) => ({ ...(key === bob.human ? { mandate: bobWork.mandate } : {}), ...call, ...extra });
  const notFound = (message: string) => `404 {"error":{"code":"not_found","message":"${message}"}}`;
  const aliceMandate = aliceWork.mandate; // alice/work
  // A mandate id names its issuer: the one that names nothing, for B, is another name in A's namespace.
  const randomMandate = `alice/${sameLength('work')}`;

  // --- approvals: the case of the issue is POST /v0/calls {"approval"}, with A's very input (a guess confirmed) and another
  const guesses = [
    ["A's input", input],
    ['another input', { text: 'a guess' }],
  ] as const;
  for (const [state, real] of [
    ['pending', pending.approval],
    ['granted', granted.approval],
    ['used', used.approval],
    ['rejected', rejected.approval],
  ] as const) {
    const approval = { real, random: newApprovalId() };
    for (const [who, key] of bobKeys) {
      add({
        name: `GET /v0/approvals/{id} (${state}) as ${who}`,
        ...approval,
        expect: notFound('there is no approval <id>'),
        probe: http('GET', (x) => `/v0/approvals/${x}`, key),
      });
      for (const [which, asked] of guesses) {
        add({
          name: `POST /v0/calls {"approval"} (${state}, ${which}) as ${who}`,
          ...approval,
          fresh: true,
          expect: '403 {"error":{"code":"denied","message":"there is no approval <id>"},"receipt":{"id":"<new receipt>"',
          probe: http(
            'POST',
            () => '/v0/calls',
            key,
            (x) => bobCall(key, { input: asked, approval: x }),
          ),
        });
      }
    }
    for (const [how, body] of [
      ['{}', {}],
      ['{"run": false}', { run: false }],
      ['{"decision": "reject"}', { decision: 'reject' }],
    ] as const) {
      add({
        name: `POST /v0/approvals/{id} ${how} (${state}) as B human`,
        ...approval,
        expect: notFound('there is no approval <id>'),
        probe: http(
          'POST',
          (x) => `/v0/approvals/${x}`,
          bob.human,
          () => body,
        ),
      });
    }
    add({
      name: `POST /v0/approvals/{id} {} (${state}) as B agent key`,
      ...approval,
      expect: '403 {"error":{"code":"forbidden","message":"an agent key cannot decide approvals"}}',
      probe: http(
        'POST',
        (x) => `/v0/approvals/${x}`,
        bobWork.agent,
        () => ({}),
      ),
    });
    add({
      name: `MCP get_approval (${state})`,
      ...approval,
      expect: '"error":{"code":"not_found","message":"there is no approval <id> under mandate bob/work"}',
      probe: tool('get_approval', (x) => ({ id: x })),
    });
    for (const [which, asked] of guesses) {
      add({
        name: `MCP call_agent {"approval"} (${state}, ${which})`,
        ...approval,
        fresh: true,
        expect: '"error":{"code":"denied","message":"there is no approval <id>"}',
        probe: tool('call_agent', (x) => ({ ...call, input: asked, approval: x })),
      });
      add({
        name: `MCP call_agent {"approval"} as a task, then its tasks/result (${state}, ${which})`,
        ...approval,
        fresh: true,
        expect: '"error":{"code":"denied","message":"there is no approval <id>"}',
        probe: (x) =>
          mcp(async () => {
            const created = await bobMcp.request(
              { method: 'tools/call', params: { name: 'call_agent', arguments: { ...call, input: asked, approval: x }, task: { ttl: 60_000 } } },
              CreateTaskResultSchema,
            );
            const result = await bobMcp.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
            // The new task's own clock readings are left out, like its receipt's.
            return { task: { ...created.task, createdAt: '<new task>', lastUpdatedAt: '<new task>' }, result };
          }),
      });
    }
  }
  for (const [who, key] of bobKeys) {
    add({
      name: `GET /v0/approvals?mandate= as ${who}`,
      real: aliceMandate,
      random: randomMandate,
      expect: notFound('there is no mandate <id>'),
      probe: http('GET', (x) => `/v0/approvals?mandate=${encodeURIComponent(x)}`, key),
    });
  }

  // --- calls, receipts, deliveries, MCP tasks (a task id is its call's id) ------------------------------------------
  for (const [what, real] of [
    ['a finished call with a delivery', finished],
    ['a held call', pending.receipt],
    ["an MCP task's call", aliceTask],
  ] as const) {
    const receipt = { real, random: newReceiptId() };
    for (const [who, key] of bobKeys) {
      const noCall = notFound('there is no call <id>');
      add({ name: `GET /v0/calls/{id} (${what}) as ${who}`, ...receipt, expect: noCall, probe: http('GET', (x) => `/v0/calls/${x}`, key) });
      add({ name: `GET /v0/calls/{id}?wait=1 (${what}) as ${who}`, ...receipt, expect: noCall, probe: http('GET', (x) => `/v0/calls/${x}?wait=1`, key) });
      add({ name: `POST /v0/calls/{id}/cancel (${what}) as ${who}`, ...receipt, expect: noCall, probe: http('POST', (x) => `/v0/calls/${x}/cancel`, key) });
      add({
        name: `GET /v0/calls/{id}/deliveries (${what}) as ${who}`,
        ...receipt,
        expect: noCall,
        probe: http('GET', (x) => `/v0/calls/${x}/deliveries`, key),
      });
      add({
        name: `POST /v0/calls/{id}/deliveries (${what}) as ${who}`,
        ...receipt,
        expect: noCall,
        probe: http('POST', (x) => `/v0/calls/${x}/deliveries`, key),
      });
      add({
        name: `GET /v0/receipts/{id} (${what}) as ${who}`,
        ...receipt,
        expect: notFound('there is no receipt <id>'),
        probe: http('GET', (x) => `/v0/receipts/${x}`, key),
      });
      add({
        name: `GET /v0/receipts/{id}/proof (${what}) as ${who}`,
        ...receipt,
        expect: notFound('there is no receipt <id>'),
        probe: http('GET', (x) => `/v0/receipts/${x}/proof`, key),
      });
      add({
        name: `GET /v0/receipts?before= (${what}) as ${who}`,
        ...receipt,
        expect: '400 {"error":{"code":"invalid_request","message":"before must be the `next` of a previous page"',
        probe: http('GET', (x) => `/v0/receipts?before=${x}`, key),
      });
    }
    add({
      name: `MCP get_receipt (${what})`,
      ...receipt,
      expect: '"error":{"code":"not_found","message":"there is no receipt <id> under mandate bob/work"}',
      probe: tool('get_receipt', (x) => ({ id: x })),
    });
  }
  const task = { real: aliceTask, random: newReceiptId() };
  const noTask = `{"code":-32602,"message":"MCP error -32602: there is no task <id> on this connection's mandate"}`;
  add({ name: 'MCP tasks/get', ...task, expect: noTask, probe: (x) => mcp(() => bobMcp.experimental.tasks.getTask(x)) });
  add({ name: 'MCP tasks/result', ...task, expect: noTask, probe: (x) => mcp(() => bobMcp.experimental.tasks.getTaskResult(x, CallToolResultSchema)) });
  add({ name: 'MCP tasks/cancel', ...task, expect: noTask, probe: (x) => mcp(() => bobMcp.experimental.tasks.cancelTask(x)) });
  for (const method of ['POST', 'GET', 'DELETE']) {
    add({
      name: `${method} /mcp with A's Mcp-Session-Id and B's key`,
      real: aliceSession,
      random: randomUUID(),
      expect: '404 {"jsonrpc":"2.0","error":{"code":-32001,"message":"unknown or expired MCP session: initialize a new one"}',
      probe: (x) =>
        ask(base, method, '/mcp', {
          key: bobWork.agent,
          headers: { 'mcp-session-id': x, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          ...(method === 'POST' ? { body: { jsonrpc: '2.0', id: 7, method: 'tools/list' } } : {}),
        }),
    });
  }

  // --- mandates ------------------------------------------------------------------------------------------------------
  const mandate = { real: aliceMandate, random: randomMandate };
  const noMandate = notFound('there is no mandate <id>');
  for (const [who, key] of bobKeys) {
    add({ name: `GET /v0/mandates/{id} as ${who}`, ...mandate, expect: noMandate, probe: http('GET', (x) => `/v0/mandates/${x}`, key) });
    for (const path of ['/v0/receipts', '/v0/receipts.csv', '/v0/agents']) {
      add({
        name: `GET ${path}?mandate= as ${who}`,
        ...mandate,
        expect: noMandate,
        probe: http('GET', (x) => `${path}?mandate=${encodeURIComponent(x)}`, key),
      });
    }
    add({
      name: `POST /v0/calls {"mandate"} as ${who}`,
      ...mandate,
      expect: noMandate,
      probe: http(
        'POST',
        () => '/v0/calls',
        key,
        (x) => ({ mandate: x, ...call }),
      ),
    });
  }
  add({
    name: 'POST /v0/keys {"mandate"} as B human',
    ...mandate,
    expect: notFound('you have no mandate <id>'),
    probe: http(
      'POST',
      () => '/v0/keys',
      bob.human,
      (x) => ({ mandate: x }),
    ),
  });
  add({
    name: 'POST /v0/mandates {"id"} in A’s namespace as B human',
    ...mandate,
    expect: '400 {"error":{"code":"invalid_mandate"',
    probe: http(
      'POST',
      () => '/v0/mandates',
      bob.human,
      (x) => ({ id: x, grantee: 'bob/assistant', allow: { agents: ['examples/*'] }, budget: { total: '1.00' } }),
    ),
  });

  // --- keys, accounts ------------------------------------------------------------------------------------------------
  add({
    name: "DELETE /v0/keys/{prefix} (A's agent key) as B human",
    real: aliceWork.prefix,
    random: `hlk_a_${base62(8)}`,
    expect: notFound('you have no live key <id>'),
    probe: http('DELETE', (x) => `/v0/keys/${x}`, bob.human),
  });
  const account = { real: 'alice', random: sameLength('alice') };
  add({
    name: 'GET /v0/statement?account= as B human',
    ...account,
    expect: notFound('there is no account <id>'),
    probe: http('GET', (x) => `/v0/statement?account=${x}`, bob.human),
  });
  add({
    name: 'POST /v0/admin/accounts/{handle}/disable as B human',
    ...account,
    expect: '403 {"error":{"code":"forbidden"',
    probe: http(
      'POST',
      (x) => `/v0/admin/accounts/${x}/disable`,
      bob.human,
      () => ({}),
    ),
  });

  // --- files ---------------------------------------------------------------------------------------------------------
  const fileIds = { real: file, random: `f_${randomBytes(16).toString('base64url')}` };
  const noFile = '"message":"there is no file holon://files/<id> for this call: it does not exist, has expired, or is not yours"';
  for (const [who, key] of bobKeys) {
    add({
      name: `POST /v0/calls naming A's file handle as ${who}`,
      ...fileIds,
      fresh: true,
      expect: `422 {"error":{"code":"file_not_found",${noFile}},"receipt":{"id":"<new receipt>"`,
      probe: http(
        'POST',
        () => '/v0/calls',
        key,
        (x) => bobCall(key, { input: { text: fileHandle(x) } }),
      ),
    });
  }
  add({
    name: "MCP call_agent naming A's file handle",
    ...fileIds,
    fresh: true,
    expect: `"error":{"code":"file_not_found",${noFile}}`,
    probe: tool('call_agent', (x) => ({ ...call, input: { text: fileHandle(x) } })),
  });
  for (const [who, key] of [
    ['no key', ''],
    ['B human', bob.human],
  ] as const) {
    add({
      name: `GET /v0/files/{id} with a made-up signature, ${who}`,
      ...fileIds,
      expect: '403 {"error":{"code":"invalid_link"',
      probe: http('GET', (x) => `/v0/files/${x}?exp=9999999999&sig=${'0'.repeat(64)}`, key),
    });
  }

  // --- published versions, their evaluations, endpoint credentials ----------------------------------------------------
  const version = { real: 'alice/echo@1.0.0', random: `alice/${sameLength('echo')}@1.0.0` };
  const notPublished = notFound('you have not published <id>');
  add({
    name: 'DELETE /v0/agents/{ns}/{name}@{version} (yank) as B human',
    ...version,
    expect: notPublished,
    probe: http('DELETE', (x) => `/v0/agents/${x}`, bob.human),
  });
  add({
    name: 'POST /v0/agents/{ns}/{name}@{version}/evaluate as B human',
    ...version,
    expect: notPublished,
    probe: http(
      'POST',
      (x) => `/v0/agents/${x}/evaluate`,
      bob.human,
      () => ({}),
    ),
  });
  const agentIds = { real: 'alice/echo', random: `alice/${sameLength('echo')}` };
  const notYours = notFound('no agent <id> in your namespace');
  add({
    name: 'GET /v0/agents/{ns}/{name}/credential as B human',
    ...agentIds,
    expect: notYours,
    probe: http('GET', (x) => `/v0/agents/${x}/credential`, bob.human),
  });
  add({
    name: 'PUT /v0/agents/{ns}/{name}/credential as B human',
    ...agentIds,
    expect: notYours,
    probe: http(
      'PUT',
      (x) => `/v0/agents/${x}/credential`,
      bob.human,
      () => ({ token: 'tok_1234567890' }),
    ),
  });
  add({
    name: 'DELETE /v0/agents/{ns}/{name}/credential as B human',
    ...agentIds,
    expect: notYours,
    probe: http('DELETE', (x) => `/v0/agents/${x}/credential`, bob.human),
  });
  add({
    name: 'POST /v0/agents (publish) a version of A’s agent as B human',
    ...agentIds,
    expect: '403 {"error":{"code":"',
    probe: http(
      'POST',
      () => '/v0/agents',
      bob.human,
      (x) => ({ ...manifest, id: x, version: '1.0.1' }),
    ),
  });
  /** Nothing B tried changed A's things: the approvals' states, the key, the published version, the task. */
  const untouched = async () => {
    const states = [];
    for (const a of [pending, granted, used, rejected]) states.push((await send(base, 'GET', `/v0/approvals/${a.approval}`, { key: alice.human })).body.status);
    expect(states).toEqual(['pending', 'approved', 'used', 'rejected']);
    expect((await send(base, 'GET', '/v0/me', { key: aliceWork.agent })).status).toBe(200);
    expect(g.gw.context.registry.resolve('alice/echo@1.0.0').ok).toBe(true);
    expect((await aliceMcp.client.experimental.tasks.getTask(aliceTask)).status).not.toBe('cancelled');
  };
  return { rows, untouched };
}
