/**
 * Real MCP servers on 127.0.0.1 for the MCP runtime's tests (tests/unit/runtime-mcp-*.test.ts): the SDK's low-level
 * Server behind StreamableHTTPServerTransport with stateful sessions (`startMcpServer`, counting sessions, deletes,
 * resumptions, calls, aborts and cancellations), raw HTTP servers for the broken ones (`startRawServer`, `scripted`
 * for a hand-written stateless one), and the agent, run context and runtime a test runs them with.
 *
 *   const { defer } = perTestCleanups();
 *   const { startMcpServer, runtime } = mcpHarness(defer);   // everything started is closed after each test
 *   const s = await startMcpServer({ run: echo });
 *   expect(await runtime().run(agent(s.url), { a: 1 }, context())).toEqual({ kind: 'output', output: { echo: { a: 1 } } });
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { createMcpRuntime, type McpRuntimeOptions } from '../../shared/runtimes/mcp/runtime.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from '../../shared/runtimes/types.js';
import { buildManifest } from './manifest-builder.js';

/** Registers what to close after the test (perTestCleanups' `defer`). */
type Defer = (fn: () => Promise<void>) => void;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type Tool = (args: Record<string, unknown>, extra: Extra) => CallToolResult | Promise<CallToolResult>;

interface SeenCall {
  name: string;
  arguments: unknown;
  meta: Record<string, unknown> | undefined;
  authorization: string | undefined;
}

export interface McpServer {
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

/** A stateful MCP server (session id → transport), one SDK Server per session, serving `tools`; closed by `defer`. */
async function startMcpServer(
  defer: Defer,
  tools: Record<string, Tool>,
  options: { json?: boolean; port?: number; resumable?: boolean } = {},
): Promise<McpServer> {
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
  defer(close);
  return Object.assign(state, { url: `http://127.0.0.1:${port}/mcp`, port, close });
}

/** A plain HTTP server answering every request with `handler` (servers that are broken or not MCP at all). */
async function startRawServer(defer: Defer, handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  const port = await listen(server);
  defer(() => closeServer(server));
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * A stateless 2025 MCP server written by hand (JSON responses): answers `server/discover` as a 2025 server does
 * (Method not found, so a client that negotiates falls back to initialize), initialize and notifications properly,
 * and tools/call with `onCall`, so a test can send what the SDK's Server would refuse to.
 */
export function scripted(onCall: (res: http.ServerResponse, id: unknown) => void) {
  return (_req: http.IncomingMessage, res: http.ServerResponse, body: string): void => {
    const message = JSON.parse(body) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
    if (message.method === 'server/discover') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
    } else if (message.method === 'initialize') {
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

/** An MCP agent (acme/mcp-agent@1.4.0, published) at `endpoint`, whose tool is `tool`. */
export function agent(endpoint: string, tool = 'run'): AgentVersion {
  return {
    manifest: buildManifest({ id: 'acme/mcp-agent', version: '1.4.0', runtime: { kind: 'mcp', endpoint, tool, timeoutS: 60 } }),
    origin: 'published',
  };
}

/** A run's context: call r21, a 10 s hard timeout. */
export function context(overrides: Partial<RunContext> = {}): RunContext {
  return { callId: 'r21', signal: AbortSignal.timeout(10_000), timeoutMs: 10_000, ...overrides };
}

/** A failure's or an error's message ('' when it has none). */
export function messageOf(r: RunResult): string {
  return 'message' in r && typeof r.message === 'string' ? r.message : '';
}

/** A tool result whose output is `value` (structuredContent, and the same as text), with `_meta` when given. */
export const structured = (value: Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
  ...(meta ? { _meta: meta } : {}),
});

/** A tool answering its arguments back: `{echo: args}`. */
export const echo: Tool = (args) => structured({ echo: args });

/** The servers and runtimes of one test file, each closed by `defer` after its test. */
export function mcpHarness(defer: Defer) {
  return {
    startMcpServer: (tools: Record<string, Tool>, options: { json?: boolean; port?: number; resumable?: boolean } = {}) =>
      startMcpServer(defer, tools, options),
    startRawServer: (handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) => startRawServer(defer, handler),
    /** An MCP runtime, closed after the test. */
    runtime(options: McpRuntimeOptions = {}): Runtime & { close(): Promise<void> } {
      const rt = createMcpRuntime(options);
      defer(() => rt.close());
      return rt;
    },
  };
}
