/**
 * The MCP runtime (gateway.md §6 "MCP agents") against real MCP servers on 127.0.0.1: the SDK's low-level Server
 * behind StreamableHTTPServerTransport (stateful sessions), raw HTTP servers for the broken ones, and a server in a
 * child process for the one that gets killed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { createRuntimes } from '../../shared/runtimes/index.js';
import { createMcpRuntime, type McpRuntimeOptions } from '../../shared/runtimes/mcp/runtime.js';
import { cancelReason } from '../../shared/runtimes/abort.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from '../../shared/runtimes/types.js';
import { buildManifest } from '../support/manifest-builder.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp');

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Tool = (args: Record<string, unknown>, extra: Extra) => CallToolResult | Promise<CallToolResult>;

interface SeenCall {
  name: string;
  arguments: unknown;
  meta: Record<string, unknown> | undefined;
  authorization: string | undefined;
}

interface McpServer {
  url: string;
  port: number;
  /** Sessions opened (initialize requests answered). */
  initializes: number;
  /** DELETE requests (sessions ended by the client). */
  deletes: number;
  /** Requests naming a session this server does not know (answered 404). */
  unknownSessions: number;
  /** GET requests: resumptions (with Last-Event-ID) and standalone streams (without). */
  gets: { resume: number; standalone: number };
  calls: SeenCall[];
  /** The abort reasons the tool handlers observed on extra.signal. */
  aborted: unknown[];
  /** The notifications/cancelled the server received (their params). */
  cancellations: unknown[];
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function listen(server: http.Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

function jsonRpcError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

/** A stateful MCP server (session id → transport), one SDK Server per session, serving `tools`. */
async function startMcpServer(tools: Record<string, Tool>, options: { json?: boolean; port?: number; resumable?: boolean } = {}): Promise<McpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state = {
    initializes: 0,
    deletes: 0,
    unknownSessions: 0,
    gets: { resume: 0, standalone: 0 },
    calls: [] as SeenCall[],
    aborted: [] as unknown[],
    cancellations: [] as unknown[],
  };
  const httpServer = http.createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      if (typeof sid === 'string') {
        const transport = sessions.get(sid);
        if (!transport) {
          state.unknownSessions += 1;
          return jsonRpcError(res, 404, 'Session not found');
        }
        if (req.method === 'DELETE') state.deletes += 1;
        if (req.method === 'GET') state.gets[req.headers['last-event-id'] ? 'resume' : 'standalone'] += 1;
        return transport.handleRequest(req, res);
      }
      if (req.method !== 'POST') return jsonRpcError(res, 405, 'Method not allowed');
      const server = new Server({ name: 'test-agent', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const { name, arguments: args, _meta } = request.params;
        state.calls.push({ name, arguments: args, meta: _meta, authorization: extra.requestInfo?.headers.authorization as string | undefined });
        extra.signal.addEventListener('abort', () => state.aborted.push(extra.signal.reason), { once: true });
        const tool = tools[name];
        if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
        return tool(args ?? {}, extra);
      });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.json ?? false,
        // Resumable streams: a priming event with an id, and a short retry for the client's resumption.
        ...(options.resumable ? { eventStore: new InMemoryEventStore(), retryInterval: 20 } : {}),
        onsessioninitialized: (id) => {
          state.initializes += 1;
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      // Protocol.connect keeps this handler and calls it before its own.
      transport.onmessage = (message) => {
        if ('method' in message && message.method === 'notifications/cancelled') state.cancellations.push(message.params);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const port = await listen(httpServer, options.port);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
    await closeServer(httpServer);
  };
  cleanups.push(close);
  return Object.assign(state, { url: `http://127.0.0.1:${port}/mcp`, port, close });
}

/** A plain HTTP server answering every request with `handler` (servers that are broken or not MCP at all). */
async function startRawServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  const port = await listen(server);
  cleanups.push(() => closeServer(server));
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * A stateless MCP server written by hand (JSON responses): answers initialize and notifications properly, and
 * tools/call with `onCall`, so a test can send what the SDK's Server would refuse to.
 */
function scripted(onCall: (res: http.ServerResponse, id: unknown) => void) {
  return (_req: http.IncomingMessage, res: http.ServerResponse, body: string): void => {
    const message = JSON.parse(body) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
    if (message.method === 'initialize') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1' } },
        }),
      );
    } else if (message.id === undefined) {
      res.writeHead(202).end();
    } else {
      onCall(res, message.id);
    }
  };
}

function agent(endpoint: string, tool = 'run'): AgentVersion {
  return {
    manifest: buildManifest({ id: 'acme/mcp-agent', version: '1.4.0', runtime: { kind: 'mcp', endpoint, tool, timeoutS: 60 } }),
    origin: 'published',
  };
}

function context(overrides: Partial<RunContext> = {}): RunContext {
  return { callId: 'r21', signal: AbortSignal.timeout(10_000), timeoutMs: 10_000, ...overrides };
}

function runtime(options: McpRuntimeOptions = {}): Runtime & { close(): Promise<void> } {
  const rt = createMcpRuntime(options);
  cleanups.push(() => rt.close());
  return rt;
}

function messageOf(r: RunResult): string {
  return 'message' in r && typeof r.message === 'string' ? r.message : '';
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  const port = await listen(s);
  await closeServer(s);
  return port;
}

const structured = (value: Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
  ...(meta ? { _meta: meta } : {}),
});

const echo: Tool = (args) => structured({ echo: args });

describe('mcp runtime: the result', () => {
  for (const json of [false, true]) {
    it(`takes the output from structuredContent (${json ? 'JSON' : 'SSE'} responses)`, async () => {
      const s = await startMcpServer({ run: () => ({ content: [{ type: 'text', text: 'not the output' }], structuredContent: { rows: [1, 2] } }) }, { json });
      expect(await runtime().run(agent(s.url), { file: 'a.pdf' }, context())).toEqual({ kind: 'output', output: { rows: [1, 2] } });
    });
  }

  it('else parses the first text block as JSON', async () => {
    const s = await startMcpServer({
      run: () => ({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: '{"rows":[3]}' },
          { type: 'text', text: '"second"' },
        ],
      }),
      scalar: () => ({ content: [{ type: 'text', text: '42' }] }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { rows: [3] } });
    expect(await rt.run(agent(s.url, 'scalar'), {}, context())).toEqual({ kind: 'output', output: 42 });
  });

  it('is agent_error when the text is not JSON, or when there is neither structuredContent nor text', async () => {
    const s = await startMcpServer({
      prose: () => ({ content: [{ type: 'text', text: 'Here are your rows: 1, 2' }] }),
      image: () => ({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }),
      empty: () => ({ content: [] }),
    });
    const rt = runtime();
    const prose = await rt.run(agent(s.url, 'prose'), {}, context());
    expect(prose).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(prose)).toMatch(/not JSON/);
    for (const tool of ['image', 'empty']) {
      const r = await rt.run(agent(s.url, tool), {}, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect(messageOf(r)).toMatch(/neither structuredContent nor a text block/);
    }
  });

  it('turns isError + structuredContent.error.code into an error result, with its message and units', async () => {
    const s = await startMcpServer({
      run: () => ({
        isError: true,
        content: [{ type: 'text', text: 'no table on page 1' }],
        structuredContent: { error: { code: 'no_table_found', message: 'no table on page 1' } },
        _meta: { 'holon/units': 2 },
      }),
      bare: () => ({ isError: true, content: [], structuredContent: { error: { code: 'rate_limited' } } }),
      long: () => ({ isError: true, content: [], structuredContent: { error: { code: 'x', message: 'm'.repeat(5000) } } }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'error', code: 'no_table_found', message: 'no table on page 1', units: 2n });
    expect(await rt.run(agent(s.url, 'bare'), {}, context())).toEqual({ kind: 'error', code: 'rate_limited' });
    const long = await rt.run(agent(s.url, 'long'), {}, context());
    expect(long).toMatchObject({ kind: 'error', code: 'x' });
    expect(messageOf(long).length).toBeLessThanOrEqual(1000);
  });

  it('is agent_error for isError without a string code', async () => {
    const s = await startMcpServer({
      text: () => ({ isError: true, content: [{ type: 'text', text: 'something broke' }] }),
      numeric: () => ({ isError: true, content: [], structuredContent: { error: { code: 42 } } }),
      flat: () => ({ isError: true, content: [], structuredContent: { code: 'no_table_found' } }),
    });
    const rt = runtime();
    const text = await rt.run(agent(s.url, 'text'), {}, context());
    expect(text).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(text)).toMatch(/without a code.*something broke/);
    for (const tool of ['numeric', 'flat']) {
      expect(await rt.run(agent(s.url, tool), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
  });

  it('reads units and a quote from _meta', async () => {
    const s = await startMcpServer({
      units: () => structured({ pages: 3 }, { 'holon/units': 3 }),
      digits: () => structured({ pages: 12 }, { 'holon/units': '12000000000000000000' }),
      zero: () => structured({}, { 'holon/units': 0 }),
      quote: () => structured({ quoted: true }, { 'holon/quote': '0.25' }),
      both: () => structured({}, { 'holon/units': 7, 'holon/quote': '12.000001', other: 'ignored' }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url, 'units'), {}, context())).toEqual({ kind: 'output', output: { pages: 3 }, units: 3n });
    expect(await rt.run(agent(s.url, 'digits'), {}, context())).toEqual({ kind: 'output', output: { pages: 12 }, units: 12_000_000_000_000_000_000n });
    expect(await rt.run(agent(s.url, 'zero'), {}, context())).toEqual({ kind: 'output', output: {}, units: 0n });
    expect(await rt.run(agent(s.url, 'quote'), {}, context())).toEqual({ kind: 'output', output: { quoted: true }, quote: 250_000n });
    expect(await rt.run(agent(s.url, 'both'), {}, context())).toEqual({ kind: 'output', output: {}, units: 7n, quote: 12_000_001n });
  });

  it('is agent_error for invalid units or quotes, even on an error result', async () => {
    const bad: Array<Record<string, unknown>> = [
      { 'holon/units': -1 },
      { 'holon/units': 1.5 },
      { 'holon/units': '1.5' },
      { 'holon/units': '007' },
      { 'holon/units': 'three' },
      { 'holon/units': null },
      { 'holon/units': 2 ** 53 },
      { 'holon/quote': 0.25 },
      { 'holon/quote': '0.1234567' },
      { 'holon/quote': '-1' },
      { 'holon/quote': '1e3' },
    ];
    const tools: Record<string, Tool> = {};
    bad.forEach((meta, i) => (tools[`t${i}`] = () => structured({ ok: true }, meta)));
    tools.err = () => ({ isError: true, content: [], structuredContent: { error: { code: 'declared' } }, _meta: { 'holon/units': 'many' } });
    const s = await startMcpServer(tools);
    const rt = runtime();
    for (const name of Object.keys(tools)) {
      const r = await rt.run(agent(s.url, name), {}, context());
      expect(r, name).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect(messageOf(r), name).toMatch(/holon\/(units|quote)/);
    }
  });

  it('is agent_error, with a short message, for a JSON-RPC error (unknown tool, a tool that throws)', async () => {
    const s = await startMcpServer({
      throws: () => {
        throw new Error(`database exploded ${'!'.repeat(2000)}`);
      },
    });
    const rt = runtime();
    const unknown = await rt.run(agent(s.url, 'nope'), {}, context());
    expect(unknown).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(unknown)).toMatch(/JSON-RPC error.*Unknown tool: nope/);
    const throws = await rt.run(agent(s.url, 'throws'), {}, context());
    expect(throws).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(throws)).toMatch(/database exploded/);
    expect(messageOf(throws).length).toBeLessThanOrEqual(200);
  });

  it('is agent_error for a result that is not a CallToolResult', async () => {
    const url = await startRawServer(
      scripted((res, id) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: 'not an array', structuredContent: 'not an object' } }));
      }),
    );
    const r = await runtime().run(agent(url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });
});

describe('mcp runtime: resumable streams', () => {
  it('works with a server that primes its streams with event ids', async () => {
    const s = await startMcpServer({ run: echo }, { resumable: true });
    const rt = runtime();
    for (let i = 0; i < 3; i++) expect(await rt.run(agent(s.url), { i }, context())).toEqual({ kind: 'output', output: { echo: { i } } });
    expect(s.initializes).toBe(1);
  });

  it('lets the SDK resume a stream the server closed on purpose after an event id (polling)', async () => {
    const s = await startMcpServer(
      {
        slow: async (args, extra) => {
          extra.closeSSEStream?.(); // the answer then comes through GET + Last-Event-ID
          await new Promise((resolve) => setTimeout(resolve, 100));
          return structured({ late: args });
        },
      },
      { resumable: true },
    );
    const signal = AbortSignal.timeout(30_000);
    const r = await runtime().run(agent(s.url, 'slow'), { n: 1 }, context({ signal, timeoutMs: 30_000 }));
    expect(r).toEqual({ kind: 'output', output: { late: { n: 1 } } });
    expect(s.gets.resume).toBeGreaterThanOrEqual(1);
  });
});

describe('mcp runtime: the request', () => {
  it('sends the input as arguments, and holon/max_cost and holon/delegation in _meta only when set', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    const input = { file: 'a.pdf', pages: [1, 2], note: 'ünïcode', nested: { deep: [null, true] } };
    expect(await rt.run(agent(s.url), input, context())).toEqual({ kind: 'output', output: { echo: input } });
    await rt.run(agent(s.url), { n: 1 }, context({ maxCost: { amount: '0.20', currency: 'EUR' } }));
    await rt.run(agent(s.url), { n: 2 }, context({ delegationToken: 'hdt_abc' }));
    await rt.run(agent(s.url), { n: 3 }, context({ maxCost: { amount: '1.5', currency: 'USD' }, delegationToken: 'hdt_xyz' }));
    expect(s.calls.map((c) => c.name)).toEqual(['run', 'run', 'run', 'run']);
    expect(s.calls[0]!.arguments).toEqual(input);
    expect(s.calls[0]!.meta).toBeUndefined();
    expect(s.calls[1]!.meta).toEqual({ 'holon/max_cost': { amount: '0.20', currency: 'EUR' } });
    expect(s.calls[2]!.meta).toEqual({ 'holon/delegation': 'hdt_abc' });
    expect(s.calls[3]!.meta).toEqual({ 'holon/max_cost': { amount: '1.5', currency: 'USD' }, 'holon/delegation': 'hdt_xyz' });
  });

  it('adds the extra headers (Authorization) without letting them replace the transport headers', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ headers: (a) => ({ Authorization: `Bearer tok-${a.manifest.name}`, 'Mcp-Session-Id': 'forged', Accept: 'text/plain' }) });
    expect(await rt.run(agent(s.url), { a: 1 }, context())).toEqual({ kind: 'output', output: { echo: { a: 1 } } });
    expect(s.calls[0]!.authorization).toBe('Bearer tok-mcp-agent');
    expect(s.unknownSessions).toBe(0);
  });

  it('is runtime_unavailable when the headers cannot be prepared, the endpoint or tool is missing', async () => {
    const s = await startMcpServer({ run: echo });
    const failing = runtime({ headers: () => Promise.reject(new Error('vault sealed')) });
    expect(await failing.run(agent(s.url), {}, context())).toMatchObject({ code: 'runtime_unavailable', message: expect.stringMatching(/vault sealed/) });
    const rt = runtime();
    const noEndpoint = { ...agent(s.url), manifest: buildManifest({ runtime: { kind: 'mcp', tool: 'run', timeoutS: 60 } }) };
    expect(await rt.run(noEndpoint, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    const ftp = agent('ftp://127.0.0.1/mcp');
    expect(await rt.run(ftp, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    const noTool = { ...agent(s.url), manifest: buildManifest({ runtime: { kind: 'mcp', endpoint: s.url, timeoutS: 60 } }) };
    expect(await rt.run(noTool, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    expect(s.initializes).toBe(0);
  });

  it('is agent_error for an input that cannot be MCP arguments (not an object)', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    for (const input of [[1, 2], 'text', 3, null]) {
      expect(await rt.run(agent(s.url), input, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
    expect(s.calls).toHaveLength(0);
  });
});

describe('mcp runtime: timeouts and cancellation', () => {
  const hang: Tool = (_args, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true }));

  it('ends a hanging call at the hard timeout, and the agent sees the cancellation', async () => {
    const s = await startMcpServer({ hang });
    const rt = runtime();
    const r = await rt.run(agent(s.url, 'hang'), {}, context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }));
    expect(r).toEqual({ kind: 'failure', code: 'timeout', message: 'the agent did not answer within its hard timeout (300 ms)' });
    await until(() => s.aborted.length === 1, 'the server to see the cancellation');
    expect(s.calls).toHaveLength(1);
    expect(s.cancellations).toHaveLength(1);
    // The pooled session is still good for the next call.
    const next = await startMcpServer({ run: echo });
    expect(await rt.run(agent(next.url), { after: true }, context())).toMatchObject({ kind: 'output' });
  });

  it('ends a call cancelled with cancelReason() as cancelled, and the agent sees it', async () => {
    const s = await startMcpServer({ hang, run: echo });
    const rt = runtime();
    const controller = new AbortController();
    const running = rt.run(agent(s.url, 'hang'), {}, context({ signal: controller.signal }));
    await until(() => s.calls.length === 1, 'the tool call to reach the server');
    controller.abort(cancelReason());
    expect(await running).toEqual({ kind: 'failure', code: 'cancelled', message: 'the call was cancelled' });
    await until(() => s.aborted.length === 1, 'the server to see the cancellation');
    expect(String(s.aborted[0])).toMatch(/cancel/i);
    expect(await rt.run(agent(s.url), { again: 1 }, context())).toEqual({ kind: 'output', output: { echo: { again: 1 } } });
    expect(s.initializes).toBe(1);
  });

  it('sends no cancellation for a call that ended before its signal fired', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    for (const reuseConnections of [true, false]) {
      const r = await runtime({ reuseConnections }).run(agent(s.url), {}, context({ signal: AbortSignal.timeout(100), timeoutMs: 100 }));
      expect(r).toMatchObject({ kind: 'output' });
    }
    expect(await rt.run(agent(s.url), {}, context({ signal: AbortSignal.timeout(100), timeoutMs: 100 }))).toMatchObject({ kind: 'output' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // every signal has fired by now
    expect(await rt.run(agent(s.url), {}, context())).toMatchObject({ kind: 'output' }); // the pooled session is still there
    expect(s.cancellations).toEqual([]);
  });

  it('does not call the agent when the signal has already fired', async () => {
    const s = await startMcpServer({ run: echo });
    const controller = new AbortController();
    controller.abort(cancelReason());
    expect(await runtime().run(agent(s.url), {}, context({ signal: controller.signal }))).toMatchObject({ code: 'cancelled' });
    expect(s.initializes).toBe(0);
  });
});

describe('mcp runtime: unreachable, killed and broken servers', () => {
  it('is runtime_unavailable when nothing listens on the port', async () => {
    const port = await freePort();
    const r = await runtime().run(agent(`http://127.0.0.1:${port}/mcp`), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(messageOf(r)).toMatch(/ECONNREFUSED/);
  });

  it('fails a call at once, as agent_error, when the server process is killed while the tool runs', async () => {
    const child: ChildProcess = fork(path.join(fixtures, 'hanging-server.mjs'), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    const messages: Array<{ type: string; port?: number; tool?: string }> = [];
    child.on('message', (m) => messages.push(m as { type: string }));
    await until(() => messages.some((m) => m.type === 'listening'), 'the child server to listen', 15_000);
    const port = messages.find((m) => m.type === 'listening')!.port!;
    const url = `http://127.0.0.1:${port}/mcp`;
    const rt = runtime();
    expect(await rt.run(agent(url, 'echo'), { warm: 1 }, context())).toMatchObject({ kind: 'output' });

    const signal = AbortSignal.timeout(30_000);
    const running = rt.run(agent(url, 'hang'), {}, context({ signal, timeoutMs: 30_000 }));
    await until(() => messages.some((m) => m.type === 'called' && m.tool === 'hang'), 'the tool call to reach the child');
    child.kill('SIGKILL');
    const r = await running;
    expect(signal.aborted).toBe(false); // it returned before the hard timeout fired
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(/connection/);

    // The broken session left the pool: the next call tries to connect again, and nothing listens any more.
    expect(await rt.run(agent(url, 'echo'), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it('reconnects after the server restarts on the same port', async () => {
    const first = await startMcpServer({ run: echo });
    const rt = runtime();
    expect(await rt.run(agent(first.url), { n: 1 }, context())).toEqual({ kind: 'output', output: { echo: { n: 1 } } });
    await first.close();
    // A restart takes a moment, long enough for the client to see its idle keep-alive sockets closed. (A call sent on
    // a socket in the very instant the server closes it fails once with agent_error: a tool call that may have
    // reached the old server is never sent twice.)
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await startMcpServer({ run: echo }, { port: first.port });
    expect(await rt.run(agent(second.url), { n: 2 }, context())).toEqual({ kind: 'output', output: { echo: { n: 2 } } });
    expect(second.unknownSessions).toBe(1); // the pooled session was refused (404), without running the tool
    expect(second.initializes).toBe(1);
    expect(second.calls).toHaveLength(1);
    expect(await rt.run(agent(second.url), { n: 3 }, context())).toMatchObject({ kind: 'output' });
    expect(second.initializes).toBe(1);
  });

  for (const json of [false, true]) {
    it(`is agent_error for an answer over maxResponseBytes, and the session stays usable (${json ? 'JSON' : 'SSE'})`, async () => {
      const s = await startMcpServer({ big: () => structured({ blob: 'x'.repeat(5_000) }), run: echo }, { json });
      const rt = runtime({ maxResponseBytes: 2_000 });
      const r = await rt.run(agent(s.url, 'big'), {}, context());
      expect(r).toEqual({ kind: 'failure', code: 'agent_error', message: 'answer larger than 2000 bytes' });
      expect(await rt.run(agent(s.url), { small: true }, context())).toEqual({ kind: 'output', output: { echo: { small: true } } });
    });
  }

  const garbage: Array<[string, (req: http.IncomingMessage, res: http.ServerResponse) => void]> = [
    ['plain text 200', (_q, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')],
    ['non-JSON labelled JSON', (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": nope')],
    ['an event stream of junk', (_q, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {junk\n\n')],
    ['500', (_q, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>')],
    ['404', (_q, res) => res.writeHead(404).end()],
    ['a redirect elsewhere', (_q, res) => res.writeHead(302, { location: 'http://example.org/' }).end()],
    ['a dropped connection', (q) => q.socket.destroy()],
  ];
  for (const [name, handler] of garbage) {
    it(`never throws on a server answering ${name}`, async () => {
      const url = await startRawServer(handler);
      const r = await runtime().run(agent(url), {}, context());
      expect(r.kind).toBe('failure');
      expect(['agent_error', 'runtime_unavailable']).toContain((r as { code: string }).code);
    });
  }

  it('gives up a handshake that never completes, and tries a new one on the next call', async () => {
    let initializes = 0;
    const url = await startRawServer((req, res, body) => {
      const message = JSON.parse(body) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
      if (message.method === 'initialize') {
        initializes += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stuck', version: '1' } },
          }),
        );
      }
      // `notifications/initialized` is never answered.
      req.socket.setTimeout(0);
    });
    const rt = runtime({ connectTimeoutMs: 200 });
    for (let i = 1; i <= 2; i++) {
      const r = await rt.run(agent(url), {}, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/handshake/) });
      expect(initializes).toBe(i);
    }
  });

  it('is agent_error at once when the tool call answer is garbage, a 202, or a stream closed without the answer', async () => {
    const answers: Array<(res: http.ServerResponse, id: unknown) => void> = [
      (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('not json'),
      (res) => res.writeHead(202).end(),
      (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': nothing to say\n\n'),
      (res) => res.writeHead(503).end('busy'),
    ];
    for (const [i, answer] of answers.entries()) {
      const url = await startRawServer(scripted(answer));
      const signal = AbortSignal.timeout(30_000);
      const r = await runtime().run(agent(url), {}, context({ signal, timeoutMs: 30_000 }));
      expect(signal.aborted, `answer ${i}`).toBe(false);
      expect(r, `answer ${i}`).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
  });
});

describe('mcp runtime: connections', () => {
  it('opens one session for 20 concurrent then 20 sequential calls', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => rt.run(agent(s.url), { i }, context())));
    concurrent.forEach((r, i) => expect(r).toEqual({ kind: 'output', output: { echo: { i } } }));
    for (let i = 0; i < 20; i++) expect(await rt.run(agent(s.url), { i }, context())).toEqual({ kind: 'output', output: { echo: { i } } });
    expect(s.initializes).toBe(1);
    expect(s.calls).toHaveLength(40);
    expect(s.gets.standalone).toBe(0); // no standalone GET stream is opened
    await rt.close();
    expect(s.deletes).toBe(1); // close() ends the session
    expect(await rt.run(agent(s.url), {}, context())).toMatchObject({ code: 'runtime_unavailable', message: 'the MCP runtime is closed' });
  });

  it('keeps one session per endpoint and extra headers', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ headers: (a) => ({ authorization: `Bearer ${a.manifest.version}` }) });
    const v1 = agent(s.url);
    const v2 = { ...v1, manifest: { ...v1.manifest, version: '2.0.0' } };
    for (let i = 0; i < 3; i++) {
      await rt.run(v1, {}, context());
      await rt.run(v2, {}, context());
    }
    expect(s.initializes).toBe(2);
    expect(s.calls.map((c) => c.authorization)).toEqual(['Bearer 1.4.0', 'Bearer 2.0.0', 'Bearer 1.4.0', 'Bearer 2.0.0', 'Bearer 1.4.0', 'Bearer 2.0.0']);
  });

  it('opens and ends one session per call with reuseConnections: false', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ reuseConnections: false });
    for (let i = 0; i < 5; i++) expect(await rt.run(agent(s.url), { i }, context())).toMatchObject({ kind: 'output' });
    await Promise.all(Array.from({ length: 5 }, (_, i) => rt.run(agent(s.url), { i }, context())));
    expect(s.initializes).toBe(10);
    await rt.close();
    expect(s.deletes).toBe(10);
  });

  it('ends a session left idle, and opens a new one for the next call', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ idleTimeoutMs: 50 });
    await rt.run(agent(s.url), {}, context());
    await until(() => s.deletes === 1, 'the idle session to be ended');
    expect(await rt.run(agent(s.url), { n: 2 }, context())).toMatchObject({ kind: 'output' });
    expect(s.initializes).toBe(2);
  });

  it('close() fails the calls still running and ends their session', async () => {
    const s = await startMcpServer({ hang: (_a, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }))) });
    const rt = runtime();
    const running = rt.run(agent(s.url, 'hang'), {}, context());
    await until(() => s.calls.length === 1, 'the tool call to reach the server');
    await rt.close();
    expect(await running).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(s.deletes).toBe(1);
  });

  it('createRuntimes dispatches MCP agents and forwards close()', async () => {
    const s = await startMcpServer({ run: echo });
    const runtimes = createRuntimes({ mcp: { maxResponseBytes: 100_000 } });
    expect(await runtimes.run(agent(s.url), { via: 'index' }, context())).toEqual({ kind: 'output', output: { echo: { via: 'index' } } });
    await runtimes.close();
    expect(s.deletes).toBe(1);
  });
});
