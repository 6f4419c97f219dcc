/**
 * The reference MCP host (agents/host.mjs) and its agents, over real Streamable HTTP with the SDK client (sec-company
 * in detail: sec-company.test.ts).
 * The Anthropic API is a local fake (node:http on 127.0.0.1).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseManifest, type Manifest } from '../../shared/core/manifest/index.js';
import { createAjv } from '../../shared/core/schema/ajv.js';

import { MAX_BODY_BYTES, startAgentHost, type AgentHost } from '../../agents/host.mjs';

function manifest(agent: string): Manifest {
  const r = parseManifest(readFileSync(new URL(`../../agents/${agent}/holon.yaml`, import.meta.url), 'utf8'), 'yaml');
  if (!r.ok) throw new Error(`agents/${agent}/holon.yaml is invalid: ${JSON.stringify(r.problems)}`);
  return r.manifest;
}
const CSV = manifest('csv-profile');
const SUMMARIZE = manifest('summarize');
const SEC = manifest('sec-company');

/** ajv with the gateway's settings (RE2, formats) against a manifest's interface.output. */
function outputProblems(m: Manifest, value: unknown): unknown[] {
  const validate = createAjv().compile(m.interface.output);
  return validate(value) ? [] : (validate.errors ?? []);
}

// ------------------------------------------------------------------------------------ fake Anthropic

type FakeMode = 'ok' | 'error' | 'garbage' | 'hang';
interface FakeRequest {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: { model?: string; max_tokens?: number; messages?: Array<{ role: string; content: string }> };
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const fake = {
  mode: 'ok' as FakeMode,
  usage: { input_tokens: 1500, output_tokens: 600 },
  requests: [] as FakeRequest[],
  /** For 'hang': the request arrived / the client went away before an answer. */
  arrived: deferred(),
  aborted: deferred(),
  url: '',
  server: undefined as http.Server | undefined,
};

async function startFake(): Promise<void> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fake.requests.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      switch (fake.mode) {
        case 'ok':
          return json(200, {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-haiku-4-5',
            stop_reason: 'end_turn',
            content: [{ type: 'text', text: '  A short summary.\n' }],
            usage: fake.usage,
          });
        case 'error':
          return json(500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
        case 'garbage':
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end('<html>not json</html>');
        case 'hang':
          res.on('close', () => {
            if (!res.writableEnded) fake.aborted.resolve();
          });
          fake.arrived.resolve();
          return undefined; // never answers
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.server = server;
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// ----------------------------------------------------------------------------------------- helpers

const hosts: AgentHost[] = [];
const clients: Client[] = [];
const logs: Array<{ level: string; message: string }> = [];
const log = (level: string, message: string) => void logs.push({ level, message });

async function startHost(env: Record<string, string | undefined>): Promise<AgentHost> {
  const host = await startAgentHost({ port: 0, env, log });
  hosts.push(host);
  return host;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'agent-host-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

function call(client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>;
}

function firstText(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error('no text block');
  return block.text;
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let host: AgentHost; // with the fake's URL and an API key
let client: Client;

beforeAll(async () => {
  await startFake();
  host = await startHost({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'test-key' });
  client = await connect(host.url);
});

beforeEach(() => {
  fake.mode = 'ok';
  fake.usage = { input_tokens: 1500, output_tokens: 600 };
  fake.requests.length = 0;
  fake.arrived = deferred();
  fake.aborted = deferred();
});

afterEach(() => {
  // Nothing about inputs or outputs is ever logged.
  for (const line of logs) expect(line.message).not.toMatch(/Ada|secret text|A short summary/);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.all(hosts.map((h) => h.close()));
  fake.server?.closeAllConnections();
  await new Promise<void>((resolve) => (fake.server ? fake.server.close(() => resolve()) : resolve()));
});

// ------------------------------------------------------------------------------------------- tests

describe('the host', () => {
  it('lists the three agents with their manifests input schemas and summaries (no outputSchema)', async () => {
    expect(host.tools).toEqual(['csv_profile', 'sec_company', 'summarize']);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['csv_profile', 'sec_company', 'summarize']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const [name, m] of [
      ['csv_profile', CSV],
      ['sec_company', SEC],
      ['summarize', SUMMARIZE],
    ] as const) {
      const t = byName[name]!;
      expect(t.inputSchema).toEqual(m.interface.input);
      expect(t.description).toBe(m.summary);
      expect(t.outputSchema).toBeUndefined();
      expect(t._meta).toEqual({ 'holon/agent': `${m.id}@${m.version}`, 'holon/output_schema': m.interface.output });
    }
  });

  it('answers GET /healthz', async () => {
    const res = await fetch(new URL('/healthz', host.url));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', tools: 3 });
  });

  it('an unknown tool is a JSON-RPC error', async () => {
    const error = await call(client, 'no_such_tool', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    // The words once, as the host sent them (the client adds its own "MCP error -32602: ").
    expect((error as McpError).message).toBe('MCP error -32602: Unknown tool: no_such_tool');
  });

  it('tools/call params that are not {name, arguments?} are -32602 in words, not the parser dump of -32603', async () => {
    const headers = { ...MCP_HEADERS, 'mcp-session-id': (client.transport as StreamableHTTPClientTransport).sessionId!, 'mcp-protocol-version': '2025-06-18' };
    for (const params of [undefined, { name: 7 }, { name: 'csv_profile', arguments: 'csv' }]) {
      const res = await fetch(host.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params }) });
      const answer = JSON.parse(/^data: (.*)$/m.exec(await res.text())![1]!);
      expect(answer.error.code, JSON.stringify(params)).toBe(ErrorCode.InvalidParams);
      expect(answer.error.message, JSON.stringify(params)).toMatch(/^(tools\/call takes params|the arguments of tools\/call must be an object)/);
    }
  });

  it('arguments that do not match interface.input fail without an error code (agent_error at the gateway)', async () => {
    const result = await call(client, 'csv_profile', { csv: 5 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(firstText(result)).toMatch(/^invalid arguments: \/csv must be string/);
  });

  it('refuses a request body above the limit with 413', async () => {
    const res = await fetch(host.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ ...INITIALIZE, pad: 'x'.repeat(MAX_BODY_BYTES) }) });
    expect(res.status).toBe(413);
  });

  it('refuses requests from a browser origin (DNS rebinding), but not from a page of this machine', async () => {
    const res = await fetch(host.url, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'http://evil.example' }, body: JSON.stringify(INITIALIZE) });
    expect(res.status).toBe(403);
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:3000', 'http://[::1]']) {
      const local = await fetch(host.url, { method: 'POST', headers: { ...MCP_HEADERS, origin }, body: JSON.stringify(INITIALIZE) });
      expect(local.status, origin).toBe(200);
      await local.body?.cancel();
    }
  });

  it('refuses a request without a session that is not an initialization, and an unknown session', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const none = await fetch(host.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(list) });
    expect(none.status).toBe(400);
    const unknown = await fetch(host.url, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': 'nope' }, body: JSON.stringify(list) });
    expect(unknown.status).toBe(404);
    const get = await fetch(host.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
    expect(get.status).toBe(404);
  });

  it('DELETE ends a session', async () => {
    const other = await connect(host.url);
    const transport = other.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    await transport.terminateSession();
    const res = await fetch(host.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
  });

  it('serves two sessions at the same time', async () => {
    const [a, b] = await Promise.all([connect(host.url), connect(host.url)]);
    expect((a.transport as StreamableHTTPClientTransport).sessionId).not.toBe((b.transport as StreamableHTTPClientTransport).sessionId);
    const [ra, rb, rs] = await Promise.all([
      call(a, 'csv_profile', { csv: 'x\n1\n2\n' }),
      call(b, 'csv_profile', { csv: 'y;z\nq;r\n', delimiter: ';' }),
      call(b, 'summarize', { text: 'secret text' }),
    ]);
    expect(ra.structuredContent).toEqual({ rows: 2, columns: [{ name: 'x', type: 'integer', nulls: 0, distinct: 2, min: 1, max: 2 }] });
    expect((rb.structuredContent as { columns: Array<{ name: string }> }).columns.map((c) => c.name)).toEqual(['y', 'z']);
    expect((rs.structuredContent as { summary: string }).summary).toBe('A short summary.');
  });
});

describe('csv_profile', () => {
  it('returns structuredContent valid against interface.output, and the same JSON as text', async () => {
    const input = CSV.interface.examples[0]!.input as Record<string, unknown>;
    const result = await call(client, 'csv_profile', input);
    expect(result.isError).toBeFalsy();
    expect(outputProblems(CSV, result.structuredContent)).toEqual([]);
    expect(result.structuredContent).toEqual(CSV.interface.examples[0]!.output);
    expect(JSON.parse(firstText(result))).toEqual(result.structuredContent);
    expect(result._meta).toBeUndefined(); // per_run: no units, no quote
  });

  it('a declared error is isError + structuredContent.error.code', async () => {
    const result = await call(client, 'csv_profile', { csv: 'a,b\n1,"open\n' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ error: { code: 'malformed_csv', message: expect.any(String) } });
    expect(JSON.parse(firstText(result))).toEqual(result.structuredContent);
    expect(CSV.interface.errors.malformed_csv).toEqual({ description: expect.any(String), billed: false });
  });
});

describe('summarize', () => {
  it('summarizes through the Messages API and reports units = ceil(tokens / 1000)', async () => {
    const result = await call(client, 'summarize', { text: 'secret text to summarize', max_words: 30 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ summary: 'A short summary.', input_tokens: 1500, output_tokens: 600 });
    expect(outputProblems(SUMMARIZE, result.structuredContent)).toEqual([]);
    expect(result._meta).toEqual({ 'holon/units': 3 });

    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('test-key');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body.model).toBe('claude-haiku-4-5');
    expect(sent.body.max_tokens).toBe(30 * 3 + 100);
    expect(sent.body.messages).toHaveLength(1);
    expect(sent.body.messages![0]!.role).toBe('user');
    expect(sent.body.messages![0]!.content).toContain('secret text to summarize');
    expect(sent.body.messages![0]!.content).toContain('at most 30 words');
  });

  it('counts started thousands of tokens', async () => {
    fake.usage = { input_tokens: 1000, output_tokens: 0 };
    expect((await call(client, 'summarize', { text: 'abc' }))._meta).toEqual({ 'holon/units': 1 });
    fake.usage = { input_tokens: 1000, output_tokens: 1 };
    expect((await call(client, 'summarize', { text: 'abc' }))._meta).toEqual({ 'holon/units': 2 });
  });

  it('maps a 500 from Anthropic to upstream_error', async () => {
    fake.mode = 'error';
    const result = await call(client, 'summarize', { text: 'abc' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: 'upstream_error', message: 'the Anthropic API answered 500: api_error: Internal server error' },
    });
  });

  it('maps an answer that is not a message to upstream_error', async () => {
    fake.mode = 'garbage';
    const result = await call(client, 'summarize', { text: 'abc' });
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('upstream_error');
  });

  it('without an API key: not_configured, Anthropic is not called', async () => {
    const bare = await startHost({ ANTHROPIC_BASE_URL: fake.url });
    const c = await connect(bare.url);
    const result = await call(c, 'summarize', { text: 'abc' });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('not_configured');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses with over_budget when the estimate is above max_cost, before calling Anthropic', async () => {
    // 40000 characters ≈ 10000 tokens + 400 for the output: 11 units = 0.044 EUR.
    const text = 'word '.repeat(8000);
    const small = await call(client, 'summarize', { text, max_words: 100 }, { 'holon/max_cost': { amount: '0.01', currency: 'EUR' } });
    expect(small.isError).toBe(true);
    expect(small.structuredContent).toEqual({
      error: { code: 'over_budget', message: expect.stringMatching(/up to 0\.044 EUR, above the max_cost of 0\.01 EUR/) },
    });
    expect(fake.requests).toHaveLength(0);
    expect(SUMMARIZE.interface.errors.over_budget?.billed).toBe(false);

    const enough = await call(client, 'summarize', { text, max_words: 100 }, { 'holon/max_cost': { amount: '0.05', currency: 'EUR' } });
    expect(enough.isError).toBeFalsy();
    expect(fake.requests).toHaveLength(1);
  });

  it('a cancellation from the client reaches the fetch to Anthropic', async () => {
    fake.mode = 'hang';
    const controller = new AbortController();
    const pending = client.callTool({ name: 'summarize', arguments: { text: 'abc' } }, undefined, { signal: controller.signal });
    await fake.arrived.promise;
    controller.abort();
    await expect(pending).rejects.toThrow();
    await fake.aborted.promise; // the upstream request was aborted: the signal reached fetch
    // The session still works afterwards.
    fake.mode = 'ok';
    expect((await call(client, 'summarize', { text: 'abc' })).isError).toBeFalsy();
  }, 10_000);
});

describe('the tool contract', () => {
  const TOOL_KIT = new URL('../../agents/tool-kit.mjs', import.meta.url).href;
  const CONTRACT_YAML = `id: test/contract
version: 1.0.0
summary: Exercises the host's tool contract
capabilities: [test.contract]
license: MIT
interface:
  input: { type: object, required: [mode], properties: { mode: { type: string } } }
  output: { type: object }
  errors:
    partial: { description: Some of it, billed: true }
pricing: { model: quote, currency: EUR, max: "1.00" }
runtime: { kind: mcp, endpoint: "http://127.0.0.1:7474/mcp", tool: contract }
`;
  const CONTRACT_MJS = `import { toolError } from ${JSON.stringify(TOOL_KIT)};
export default async function run(input, ctx) {
  switch (input.mode) {
    case 'echo-context': return { output: { maxCost: ctx.maxCost ?? null, signal: ctx.signal instanceof AbortSignal, key: ctx.env.SOME_KEY ?? null } };
    case 'billing': return { output: { ok: true }, units: 2, quote: '0.25' };
    case 'declared-with-units': throw toolError('partial', 'half done', { units: 1, quote: '0.1' });
    case 'undeclared': throw toolError('mystery', 'who knows');
    case 'crash': throw new Error('secret text in a crash');
    case 'bad-units': return { output: {}, units: -1 };
    case 'bad-quote': return { output: {}, quote: 0.5 };
    case 'bigint': return { output: { n: 1n } };
    case 'no-output': return { summary: 'forgot the wrapper' };
    case 'array': return { output: [1, 2] };
    default: return { output: { mode: input.mode } };
  }
}
`;
  let dir: string;
  let contract: Client;
  let contractUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'holon-agent-host-'));
    await mkdir(join(dir, 'contract'));
    await writeFile(join(dir, 'contract', 'holon.yaml'), CONTRACT_YAML);
    await writeFile(join(dir, 'contract', 'tool.mjs'), CONTRACT_MJS);
    await mkdir(join(dir, 'webhook'));
    await writeFile(join(dir, 'webhook', 'holon.yaml'), CONTRACT_YAML.replace('kind: mcp', 'kind: webhook'));
    await writeFile(join(dir, 'webhook', 'tool.mjs'), 'export default async () => ({ output: {} });\n');
    await mkdir(join(dir, 'manifest-only'));
    await writeFile(join(dir, 'manifest-only', 'holon.yaml'), CONTRACT_YAML.replace('tool: contract', 'tool: other'));
    const h = await startAgentHost({ port: 0, dir, env: { SOME_KEY: 'k' }, log });
    hosts.push(h);
    expect(h.tools).toEqual(['contract']);
    contract = await connect(h.url);
    contractUrl = h.url;
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const code = (r: CallToolResult) => (r.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;

  it('skips, with a warning, an agent that is not an mcp agent; ignores a directory without tool.mjs', () => {
    expect(logs.some((l) => l.level === 'warn' && l.message.includes('webhook') && l.message.includes('runtime.kind'))).toBe(true);
    expect(logs.some((l) => l.message.includes('manifest-only'))).toBe(false);
  });

  it('hands the tool the signal, the max_cost from _meta and the env', async () => {
    const r = await call(contract, 'contract', { mode: 'echo-context' }, { 'holon/max_cost': { amount: '0.30', currency: 'EUR' }, 'holon/delegation': 'tok' });
    expect(r.structuredContent).toEqual({ maxCost: { amount: '0.30', currency: 'EUR' }, signal: true, key: 'k' });
    const none = await call(contract, 'contract', { mode: 'echo-context' }, { 'holon/max_cost': { amount: 0.3, currency: 'EUR' } });
    expect((none.structuredContent as { maxCost: unknown }).maxCost).toBeNull(); // malformed: ignored
  });

  it('reports units and quote in _meta', async () => {
    const r = await call(contract, 'contract', { mode: 'billing' });
    expect(r._meta).toEqual({ 'holon/units': 2, 'holon/quote': '0.25' });
    expect(r.structuredContent).toEqual({ ok: true });
  });

  it('2026-07-28: a v2 client negotiates the era and gets the same profile (max_cost in, units and quote out, declared errors)', async () => {
    const modern = new ModernClient({ name: 'host-2026', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernTransport(new URL(contractUrl)));
    try {
      expect(modern.getProtocolEra()).toBe('modern');
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(['contract']);
      const meta = { 'holon/max_cost': { amount: '0.30', currency: 'EUR' } };
      const echo = await modern.callTool({ name: 'contract', arguments: { mode: 'echo-context' }, _meta: meta });
      expect(echo.structuredContent).toEqual({ maxCost: { amount: '0.30', currency: 'EUR' }, signal: true, key: 'k' });
      const billed = await modern.callTool({ name: 'contract', arguments: { mode: 'billing' } });
      expect(billed._meta).toMatchObject({ 'holon/units': 2, 'holon/quote': '0.25' });
      const declared = await modern.callTool({ name: 'contract', arguments: { mode: 'declared-with-units' } });
      expect(declared).toMatchObject({ isError: true, structuredContent: { error: { code: 'partial' } }, _meta: { 'holon/units': 1 } });
      const invalid = await modern.callTool({ name: 'contract', arguments: {} });
      expect(invalid.isError).toBe(true);
      await expect(modern.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: no_such_tool/);
    } finally {
      await modern.close();
    }
    // The wire: no session, the result's kind and the server's identity in _meta.
    const raw = await fetch(contractUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'contract' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: {
          name: 'contract',
          arguments: { mode: 'billing' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    expect(raw.headers.get('mcp-session-id')).toBeNull();
    const text = await raw.text();
    const body = JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]!);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { ok: true },
      _meta: { 'holon/units': 2, 'io.modelcontextprotocol/serverInfo': { name: 'holon-agent-host' } },
    });
  });

  it('a declared error carries the units and quote reported with it', async () => {
    const r = await call(contract, 'contract', { mode: 'declared-with-units' });
    expect(r).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'partial', message: 'half done' } },
      _meta: { 'holon/units': 1, 'holon/quote': '0.1' },
    });
  });

  it('passes an undeclared code through (the gateway never bills it), with a warning', async () => {
    const before = logs.length;
    const r = await call(contract, 'contract', { mode: 'undeclared' });
    expect(r.isError).toBe(true);
    expect(code(r)).toBe('mystery');
    expect(logs.slice(before).some((l) => l.level === 'warn' && l.message.includes('undeclared error code mystery'))).toBe(true);
  });

  it.each(['crash', 'bad-units', 'bad-quote', 'bigint', 'no-output'])('%s: isError without a code (never a declared, billed error)', async (mode) => {
    const before = logs.length;
    const r = await call(contract, 'contract', { mode });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(r._meta).toBeUndefined();
    expect(firstText(r)).toBe('the tool failed unexpectedly');
    expect(logs.slice(before).some((l) => l.level === 'error' && l.message.startsWith('tool contract'))).toBe(true);
  });

  it('an output that is not an object travels in the text block only', async () => {
    const r = await call(contract, 'contract', { mode: 'array' });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toBeUndefined();
    expect(JSON.parse(firstText(r))).toEqual([1, 2]);
  });
});
