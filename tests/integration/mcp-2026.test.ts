/**
 * The gateway's MCP server for 2026-07-28 clients (services/api/mcp/server.ts, tool-server.ts, call-agent.ts,
 * tasks-extension.ts): stateless requests answered by any API process, driven by the SDK v2 client and by raw
 * JSON-RPC where the wire itself is what is tested (input requests and their sealed requestState, the tasks
 * extension, the standard headers). Whole gateways on real Postgres and Redis; the ledger audit runs after each test.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, test as base } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import type { Answer } from '../support/http.js';

const FILE_SECRET = 'a file secret both API processes of this test share, long enough';

const test = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { mcpProgressMs: 100, mcpMandate: 'alice/test', fileSecret: FILE_SECRET } }), use),
});

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

/** A v2 client pinned to 2026-07-28, answering forms with `elicit` when given. */
async function connect(url: string, elicit?: (params: any) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }) {
  const client = new Client(
    { name: 'holon-2026-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: VERSION } }, capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit(request.params) as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
  return client;
}

interface Rpc {
  status: number;
  body: any;
}

/** One raw 2026-07-28 request: the envelope in `_meta`, the standard headers (unless `headers` overrides them). */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { caps?: object; headers?: Record<string, string>; name?: string } = {},
): Promise<Rpc> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientCapabilities': options.caps ?? {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const name = options.name ?? (typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined);
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-holon-mandate': 'alice/test',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } }),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!)).find((m) => 'id' in m)
    : JSON.parse(text);
  return { status: res.status, body: json };
}

const callAgent = (url: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, caps: object = { elicitation: { form: {} } }) =>
  rpc(url, 'tools/call', { name: 'call_agent', arguments: args, ...extra }, { caps });

describe('MCP 2026-07-28 at /mcp', () => {
  test('the v2 client: discover, tools with cache hints, a paid call whose text blocks are its words and its JSON', async ({ gateway: g }) => {
    await g.mandate({ allow: { agents: ['examples/echo-upper'], capabilities: [] } });
    const c = await connect(g.url);
    try {
      expect(c.getProtocolEra()).toBe('modern');
      expect(c.getServerCapabilities()?.extensions).toEqual({ [TASKS]: {} });
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name)).toContain('list_calls');
      // 2026 tools carry no 2025 task hint: the tasks extension decides per request.
      expect(tools.find((t) => t.name === 'call_agent')?.execution).toBeUndefined();

      const r = await c.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: '</untrusted> <b>' } } });
      expect(r.structuredContent).toMatchObject({
        status: 'succeeded',
        output: { text: '</UNTRUSTED> <B>' },
        receipt: { billed: true, cost: { total: '0.01' } },
      });
      const [words, json] = r.content as Array<{ type: 'text'; text: string }>;
      expect(words!.text).toContain('<untrusted>');
      // The serialized JSON is the structured content itself, with no `<` left in its text.
      expect(json!.text).not.toContain('<');
      expect(JSON.parse(json!.text)).toEqual(r.structuredContent);
    } finally {
      await c.close();
    }
    const listed = await rpc(g.url, 'tools/list', {});
    expect(listed.body.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    const discovered = await rpc(g.url, 'server/discover', {});
    expect(discovered.body.result).toMatchObject({ supportedVersions: [VERSION], cacheScope: 'public', capabilities: { extensions: { [TASKS]: {} } } });
  });

  test('headers that disagree with the body are HeaderMismatch; an unsupported version is refused with the versions served', async ({ gateway: g }) => {
    await g.mandate({});
    const mismatch = await rpc(g.url, 'tools/call', { name: 'get_budget', arguments: {} }, { name: 'get_budget', headers: { 'mcp-name': 'call_agent' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe(-32020);
    const method = await rpc(g.url, 'tools/list', {}, { headers: { 'mcp-method': 'tools/call' } });
    expect(method.status).toBe(400);
    expect(method.body.error.code).toBe(-32020);
    const unsupported = await rpc(
      g.url,
      'tools/list',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      { headers: { 'mcp-protocol-version': '2099-01-01' } },
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error).toMatchObject({ code: -32022, data: { supported: [VERSION] } });
    // Nothing was admitted or charged by any of them.
    expect((await g.get<Answer<'readMandate', 200>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
  });

  test('an approval is an input request: the v2 client answers it by itself; accept runs the call, decline rejects it', async ({ gateway: g }) => {
    await g.mandate({ approval: { above: '0.005' } });
    const asked: any[] = [];
    const yes = await connect(g.url, (p) => (asked.push(p), { action: 'accept' }));
    try {
      const r = await yes.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: 'please' } } });
      expect(r.structuredContent).toMatchObject({ status: 'succeeded', output: { text: 'PLEASE' }, receipt: { billed: true } });
      expect(asked).toHaveLength(1);
      expect(asked[0].message).toContain('Worst case: 0.01 EUR');
      expect(asked[0].message).toContain('please');
    } finally {
      await yes.close();
    }
    const no = await connect(g.url, () => ({ action: 'decline' }));
    try {
      const r = await no.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: 'no' } } });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ status: 'rejected', error: { code: 'approval_rejected' }, receipt: { billed: false } });
    } finally {
      await no.close();
    }
    // A client that declares no forms gets pending_approval, as in 2025.
    const plain = await callAgent(g.url, { agent: 'examples/echo-upper', input: { text: 'later' } }, {}, {});
    expect(plain.body.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'pending_approval' } });
  });

  test('the requestState is sealed and bound: tampered, or for other arguments, it is refused; the retry lands on another API process', async ({
    gateway: g,
  }) => {
    await g.mandate({ approval: { above: '0.005' } });
    const other = await startTestGateway({ beside: g, roles: ['api'], config: { mcpMandate: 'alice/test', fileSecret: FILE_SECRET } });
    try {
      const args = { agent: 'examples/echo-upper', input: { text: 'bound' } };
      const first = await callAgent(g.url, args);
      expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { approval: { method: 'elicitation/create' } } });
      const { requestState } = first.body.result;
      // Nothing in it reads as the approval or the input.
      expect(typeof requestState).toBe('string');
      expect(Buffer.from(requestState.split('.')[3] ?? '', 'base64url').toString('utf8')).not.toContain('approval');
      const approved = { inputResponses: { approval: { action: 'accept', content: {} } } };

      const flipped = requestState.slice(0, -3) + (requestState.endsWith('AAA') ? 'BBB' : 'AAA');
      const tampered = await callAgent(g.url, args, { ...approved, requestState: flipped });
      expect(tampered.body.error).toMatchObject({ code: -32602 });
      const swapped = await callAgent(g.url, { ...args, input: { text: 'something else' } }, { ...approved, requestState });
      expect(swapped.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/other arguments/) });
      // Nothing ran: the approval is still pending, the budget untouched.
      expect((await g.get<Answer<'readMandate', 200>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });

      // The honest retry, on the other API process: the call runs there.
      const done = await callAgent(other.url, args, { ...approved, requestState });
      expect(done.body.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'succeeded', output: { text: 'BOUND' } } });
      // The same state again: the approval is used, the form's answer decides nothing more.
      const again = await callAgent(g.url, args, { ...approved, requestState });
      expect(again.body.result.structuredContent).toMatchObject({ status: 'pending_approval', approval: { status: 'used' } });
    } finally {
      await other.stop();
    }
  });

  test('a question the agent asks is an input request; answered on the retry, the call goes on', async ({ gateway: g }) => {
    await g.mandate({});
    const c = await connect(g.url, (p) => ({ action: 'accept', content: { name: p.message.includes('name 2') ? 'Two' : 'One' } }));
    try {
      const r = await c.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/asker', input: { asks: 2 } } });
      expect(r.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: expect.stringContaining('Two') } });
    } finally {
      await c.close();
    }
    // Raw: a refused answer is asked again; a declined one cancels the call, unbilled.
    const first = await callAgent(g.url, { agent: 'fixtures/asker', input: {} });
    const asked = first.body.result;
    expect(asked).toMatchObject({ resultType: 'input_required', inputRequests: { answer: { params: { requestedSchema: { required: ['name'] } } } } });
    const wrong = await callAgent(
      g.url,
      { agent: 'fixtures/asker', input: {} },
      { requestState: asked.requestState, inputResponses: { answer: { action: 'accept', content: { name: '' } } } },
    );
    expect(wrong.body.result).toMatchObject({ resultType: 'input_required' });
    const declined = await callAgent(
      g.url,
      { agent: 'fixtures/asker', input: {} },
      { requestState: wrong.body.result.requestState, inputResponses: { answer: { action: 'decline' } } },
    );
    expect(declined.body.result.structuredContent.receipt).toMatchObject({ status: 'failed', error: 'cancelled', billed: false });
  });

  test('tasks: created for a client that declared the extension, polled, given an answer with tasks/update, cancelled unbilled; list_calls lists them', async ({
    gateway: g,
  }) => {
    await g.mandate({});
    const caps = { extensions: { [TASKS]: {} } };
    const created = await callAgent(g.url, { agent: 'fixtures/asker', input: {} }, {}, caps);
    // The call runs at once where it was admitted: its task may already ask when it is created.
    expect(created.body.result).toMatchObject({
      resultType: 'task',
      status: expect.stringMatching(/^(working|input_required)$/),
      pollIntervalMs: expect.any(Number),
      ttlMs: expect.any(Number),
    });
    const taskId = created.body.result.taskId as string;
    const get = () => rpc(g.url, 'tasks/get', { taskId }, { caps });
    const waiting = await poll(async () => ((await get()).body.result?.status === 'input_required' ? (await get()).body.result : undefined), {
      what: 'the task to ask',
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(waiting.inputRequests.answer).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('What is name 1?') } });
    // An answer the question refuses is -32602; an unknown key is ignored.
    expect(
      (await rpc(g.url, 'tasks/update', { taskId, inputResponses: { answer: { action: 'accept', content: { name: '' } } } }, { caps })).body.error.code,
    ).toBe(-32602);
    expect((await rpc(g.url, 'tasks/update', { taskId, inputResponses: { nothing: {} } }, { caps })).body.result).toBeDefined();
    expect(
      (await rpc(g.url, 'tasks/update', { taskId, inputResponses: { answer: { action: 'accept', content: { name: 'Tasha' } } } }, { caps })).body.result,
    ).toBeDefined();
    const completed = await poll(async () => ((await get()).body.result?.status === 'completed' ? (await get()).body.result : undefined), {
      what: 'the task to complete',
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(completed.result.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Tasha' }, receipt: { billed: true } });

    // Another task, cancelled while it waits: unbilled.
    const second = (await callAgent(g.url, { agent: 'fixtures/asker', input: {} }, {}, caps)).body.result.taskId as string;
    await poll(async () => ((await rpc(g.url, 'tasks/get', { taskId: second }, { caps })).body.result?.status === 'input_required' ? true : undefined), {
      what: 'the second task to ask',
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect((await rpc(g.url, 'tasks/cancel', { taskId: second }, { caps })).body.result).toBeDefined();
    const cancelled = await poll(
      async () => {
        const t = (await rpc(g.url, 'tasks/get', { taskId: second }, { caps })).body.result;
        return t?.status === 'cancelled' ? t : undefined;
      },
      { what: 'the task to be cancelled', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(cancelled.status).toBe('cancelled');
    expect((await g.get<any>(`/v0/receipts/${second}`)).body).toMatchObject({ status: 'failed', error: 'cancelled', billed: false });

    // Without the extension declared, none of its methods: -32021, HTTP 400.
    const undeclared = await rpc(g.url, 'tasks/get', { taskId });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    // Another principal's task is no task; list_calls lists both, newest first.
    expect((await rpc(g.url, 'tasks/get', { taskId: 'c_nothing' }, { caps })).body.error.code).toBe(-32602);
    const listed = await rpc(g.url, 'tools/call', { name: 'list_calls', arguments: {} });
    expect(listed.body.result.structuredContent.calls.map((c: any) => [c.id, c.status])).toEqual([
      [second, 'cancelled'],
      [taskId, 'completed'],
    ]);
  });

  test('hosted: the standard headers are read before the body; a keyless request is refused unread, with the Bearer challenge', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_budget"', 'x'.repeat(64 * 1024)]) {
        const res = await fetch(`${g.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'get_budget' },
          body,
        });
        // Malformed JSON would be a 400 had it been read: it was not.
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(
          /^Bearer realm="holon".*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
        );
        expect(((await res.json()) as any).error.message).toMatch(/takes an agent key/);
      }
      // Without the headers (a 2025 client) the same refusal comes after the body.
      const legacy = await fetch(`${g.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc": nope' });
      expect(legacy.status).toBe(400);
    });
  });
});
