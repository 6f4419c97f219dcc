/**
 * MCP agents (gateway.md §6 "MCP agents", the Holon MCP agent profile): call the tool `runtime.tool` of the MCP
 * server at `runtime.endpoint`, over Streamable HTTP, with the SDK's Client.
 *
 *   request   arguments = the input; _meta["holon/max_cost"] = {amount, currency}, _meta["holon/delegation"] = <token> and
 *             _meta["holon/files"] = {<handle>: {url, content_type, size, sha256, expires}}, each only when set; plus the
 *             `headers` option's HTTP headers (the hosted gateway's Authorization)
 *   result    structuredContent, else the first text block parsed as JSON   → output
 *             isError + structuredContent.error.code (a string)              → the agent's error code (billing decides)
 *             _meta["holon/units"] (whole number) / _meta["holon/quote"] (decimal string) → units / quote
 *             isError without a string code, no output channel, text that is not JSON, an invalid units or quote,
 *             a JSON-RPC error (unknown tool…), a result that is not a CallToolResult, an HTTP error status,
 *             an answer larger than the limit, the connection dropped while the call runs     → agent_error
 *             connection refused / DNS failure / TLS / unreachable            → runtime_unavailable (naming the endpoint and why)
 *             the signal fires (hard timeout or cancellation)                 → timeout, or cancelled; the SDK sends
 *                                                                               notifications/cancelled to the agent
 *
 * Published agents (any origin but `shipped`) go through the `published` option's fetch when it is given (the guarded
 * client, published.ts; the runner always gives it): an http:// endpoint without allowPrivateEndpoints, a refused
 * address and a redirect are then runtime_unavailable (never billed). Their sessions are pooled apart from shipped
 * agents' (the pool key names the client), so a published agent's session was always opened through the guard.
 *
 * Connections. One connected Client per (client, endpoint, extra headers), opened by the first call and shared by every call
 * after it, concurrent ones included (`reuseConnections: false` opens and closes one per call instead). An entry leaves
 * the pool when its transport closes, when the connection fails (network error, stream dropped mid-answer, an HTTP
 * error status on the session), and after `idleTimeoutMs` without calls (its session is then ended with DELETE).
 * A call that finds its pooled session gone (HTTP 404, or 400, on a session opened before the call) is sent once more
 * on a new session: the server refused it without running it.
 *
 * What the SDK (1.32) does not do by itself, and this module does around it (mostly through the transport's `fetch`):
 *   - a response stream that breaks (the server was killed) leaves the SDK's request pending until its timeout, and it
 *     may try to resume the stream: the call fails at once with agent_error instead;
 *   - a POST's response stream that ends without the answer and without an event id to resume from would also wait
 *     until the timeout: agent_error (with an event id, the SDK resumes it through GET + Last-Event-ID, as it should);
 *   - a 202 to a request would wait forever: agent_error;
 *   - answers are capped at `maxResponseBytes`;
 *   - a cancelled or timed-out call closes its own response stream (the server never answers a cancelled request);
 *   - the SDK listens to a request's signal for good and sends notifications/cancelled whenever it fires, even long
 *     after the answer (the run's signal outlives the request): it gets a signal detached once the call ends;
 *   - the handshake (initialize, then the `initialized` notification, which has no timeout of its own) is bounded by
 *     `connectTimeoutMs`, so a server that hangs there cannot hold a pool entry;
 *   - no standalone GET stream is opened: Holon declares no client capabilities and needs nothing outside a request's
 *     own stream, so the GET is answered locally with 405, which the SDK reads as "this server has no such stream".
 * Nothing is logged.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { guardRefusal } from '../../platform/guarded-net.js';
import { abortedResult, raceSignal } from '../abort.js';
import { agentError, failure } from '../messages.js';
import { describeLimit, errorCodes, extraHeaders, maxResponseBytesOf, networkFailure, type HeadersOption } from '../remote.js';
import { routeOf } from '../published.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from '../types.js';
import { ResponseTooLargeError, watchBody } from './body-watch.js';
import { abortError, Exchange, ExchangeFailed, exchanges, ExchangeTransport, follow, within } from './exchange.js';
import { describeValue, readResult } from './tool-result.js';

export interface McpRuntimeOptions {
  /** The largest HTTP answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** Extra request headers for an agent, e.g. `{ authorization: 'Bearer …' }`. They never replace the transport's own headers. */
  headers?: HeadersOption;
  /** Keep one MCP session per (endpoint, headers) and share it between calls. Default true; false = connect, call, close per call. */
  reuseConnections?: boolean;
  /** The fetch to send through for shipped agents (and every agent without `published`). Default: the global fetch. */
  fetch?: FetchLike;
  /** The guarded client for published agents (published.ts); without it they use `fetch` like shipped ones. */
  published?: { fetch: FetchLike; allowHttp: boolean };
  /** A pooled session without calls for this long is ended. Default 5 minutes; 0 = never. */
  idleTimeoutMs?: number;
  /** The most an MCP handshake (initialize + initialized) may take before the session is given up. Default 30 s. */
  connectTimeoutMs?: number;
}

const CLIENT_INFO = { name: 'holon-gateway', version: '0.1.0' };
/** The SDK's own request timer is only a safety net behind the signal. */
const SDK_TIMER_MARGIN_MS = 5_000;
/** setTimeout fires at once for delays past 2^31 - 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** A session's handshake, shared by the calls waiting on it (each call is still bounded by its own signal). */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Ending a session (DELETE) never holds a close for longer than this. */
const TERMINATE_TIMEOUT_MS = 2_000;
const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Headers the transport owns: the `headers` option cannot replace them. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set(['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A thrown value's message alone (no name, untruncated): the messages that quote it are truncated by agentError. */
function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : `a thrown ${err === null ? 'null' : typeof err}`;
}

class HandshakeTimeout extends Error {
  constructor(ms: number) {
    super(`the endpoint did not complete the MCP handshake within ${ms} ms`);
  }
}

interface Connection {
  key: string;
  /** The endpoint, for the messages of failures (remote.ts networkFailure names its origin and path). */
  url: URL;
  /** What its HTTP requests go through: the guarded fetch for published agents. */
  fetch: FetchLike;
  client: Client;
  transport: ExchangeTransport;
  /** Settles when initialize is answered (or fails). */
  ready: Promise<void>;
  /** The session is open. */
  open: boolean;
  /** Out of the pool: no new call uses it; closed once its calls are over. */
  retired: boolean;
  /** The transport closed. */
  closed: boolean;
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
  shutting: Promise<void> | undefined;
}

export function createMcpRuntime(options: McpRuntimeOptions = {}): Runtime & { close(): Promise<void> } {
  const maxResponseBytes = maxResponseBytesOf(options.maxResponseBytes);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (typeof idleTimeoutMs !== 'number' || Number.isNaN(idleTimeoutMs) || idleTimeoutMs < 0) {
    throw new TypeError('idleTimeoutMs must be a non-negative number of milliseconds');
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (!Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0 || connectTimeoutMs > MAX_TIMER_MS) {
    throw new TypeError('connectTimeoutMs must be a positive number of milliseconds');
  }
  const reuse = options.reuseConnections ?? true;
  const baseFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const pool = new Map<string, Connection>();
  /** Every connection not yet shut: pooled, retired with calls still running, or opened for one call. */
  const live = new Set<Connection>();
  const shutting = new Set<Promise<void>>();
  let closed = false;

  // ------------------------------------------------------------------ connections

  function shut(conn: Connection, terminate: boolean): Promise<void> {
    if (conn.shutting) return conn.shutting;
    clearTimeout(conn.idleTimer);
    const done = (async () => {
      if (terminate && conn.open && !conn.closed && conn.transport.sessionId !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([conn.transport.terminateSession(), new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_TIMEOUT_MS)))]);
        } catch {
          // The session ends with the server anyway.
        } finally {
          clearTimeout(timer);
        }
      }
      await conn.client.close().catch(() => undefined);
    })();
    conn.shutting = done;
    shutting.add(done);
    void done.finally(() => {
      shutting.delete(done);
      live.delete(conn);
    });
    return done;
  }

  /** Take the connection out of the pool; close it once no call uses it. */
  function retire(conn: Connection): void {
    if (!conn.retired) {
      conn.retired = true;
      if (pool.get(conn.key) === conn) pool.delete(conn.key);
    }
    clearTimeout(conn.idleTimer);
    if (conn.inFlight === 0) void shut(conn, false);
  }

  function release(conn: Connection): void {
    conn.inFlight -= 1;
    if (conn.inFlight > 0) return;
    if (conn.retired) {
      void shut(conn, !conn.closed && reuse === false);
      return;
    }
    if (idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs)) {
      clearTimeout(conn.idleTimer);
      conn.idleTimer = setTimeout(
        () => {
          if (conn.inFlight > 0 || conn.retired) return;
          conn.retired = true;
          if (pool.get(conn.key) === conn) pool.delete(conn.key);
          void shut(conn, true);
        },
        Math.min(idleTimeoutMs, MAX_TIMER_MS),
      );
      conn.idleTimer.unref();
    }
  }

  /** The transport's fetch for one connection: exchanges, the size cap, and the health of the connection. */
  function connectionFetch(conn: Connection): FetchLike {
    return async (url, init = {}) => {
      const exchange = exchanges.getStore();
      const method = (init.method ?? 'GET').toUpperCase();
      const sent = new Headers(init.headers);
      if (method === 'GET' && !sent.has('last-event-id')) {
        return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
      }
      if (exchange?.ended) throw abortError();
      const signal = exchange ? exchange.controller.signal : (init.signal ?? undefined);
      let response: Response;
      try {
        response = await conn.fetch(url, { ...init, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (!signal?.aborted) retire(conn);
        throw err;
      }
      // The session is gone or the server is failing: the next call opens a new one.
      if (response.status >= 400 && sent.has('mcp-session-id') && method !== 'DELETE') retire(conn);
      if (exchange && method === 'POST' && response.status === 202) {
        exchange.fail(agentError('the endpoint accepted the request (202) without answering it'));
      }
      const length = Number(response.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(length) && length > maxResponseBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw new ResponseTooLargeError(maxResponseBytes);
      }
      if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
      const sse = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
      const body = watchBody(response.body, maxResponseBytes, {
        sse,
        tooLarge: () => exchange?.fail(agentError(`answer larger than ${describeLimit(maxResponseBytes)}`)),
        broken: () => {
          if (signal?.aborted) return;
          retire(conn);
          exchange?.fail(agentError('the connection to the agent dropped before it answered'));
        },
        ended: (primed) => {
          // A POST's stream without an event id cannot be resumed: the SDK would wait for the answer until its timeout.
          // (A resumption GET that ends is reopened by the SDK itself, a bounded number of times.)
          if (method === 'POST' && sse && response.ok && !primed) exchange?.fail(agentError('the agent closed its response stream without answering'));
        },
      });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  }

  function newConnection(key: string, url: URL, headers: Record<string, string>, fetch: FetchLike): Connection {
    const conn = {
      key,
      url,
      fetch,
      open: false,
      retired: false,
      closed: false,
      inFlight: 0,
      idleTimer: undefined,
      shutting: undefined,
    } as unknown as Connection;
    conn.client = new Client(CLIENT_INFO, { capabilities: {} });
    conn.transport = new ExchangeTransport(url, { fetch: connectionFetch(conn), requestInit: { headers } });
    conn.transport.onmessage = (message) => conn.transport.noteAnswer(message);
    conn.client.onerror = () => undefined; // Failures reach the calls through their exchanges; nothing is logged.
    conn.client.onclose = () => {
      conn.closed = true;
      retire(conn);
    };
    live.add(conn);
    return conn;
  }

  /** initialize, then the `initialized` notification, all within connectTimeoutMs (a hung handshake must not hold the pool). */
  function connect(conn: Connection, callSignal?: AbortSignal): Promise<void> {
    const scoped = callSignal ? follow(callSignal) : undefined;
    const signal = scoped?.signal;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HandshakeTimeout(connectTimeoutMs)), connectTimeoutMs);
    });
    const handshake = within(new Exchange(), () => conn.client.connect(conn.transport, { timeout: connectTimeoutMs, ...(signal ? { signal } : {}) }));
    const opening = Promise.race([handshake, deadline])
      .then(() => {
        conn.open = true;
      })
      .finally(() => {
        clearTimeout(timer);
        scoped?.release();
      });
    conn.ready = opening;
    opening.catch(() => retire(conn));
    return opening;
  }

  function acquire(key: string, url: URL, headers: Record<string, string>, fetch: FetchLike): { conn: Connection; reused: boolean } {
    const pooled = pool.get(key);
    if (pooled && !pooled.retired) return { conn: pooled, reused: pooled.open };
    const conn = newConnection(key, url, headers, fetch);
    pool.set(key, conn);
    void connect(conn).catch(() => undefined);
    return { conn, reused: false };
  }

  // ------------------------------------------------------------------ outcomes

  function connectFailure(err: unknown, run: RunContext, url: URL): RunResult {
    if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
    if (closed) return failure('runtime_unavailable', 'the MCP runtime is closed');
    if (err instanceof ExchangeFailed) return err.failure;
    if (guardRefusal(err)) return networkFailure(err, run.timeoutMs, url);
    if (err instanceof ResponseTooLargeError || err instanceof HandshakeTimeout) return agentError(err.message);
    if (errorCodes(err).length > 0) return networkFailure(err, run.timeoutMs, url);
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      return agentError('the endpoint did not answer the MCP initialize request');
    }
    return agentError(`the endpoint did not open an MCP session (${describeError(err)})`);
  }

  function callFailure(err: unknown, conn: Connection, reused: boolean, run: RunContext): { result: RunResult; retry?: boolean } {
    if (run.signal.aborted) return { result: abortedResult(run.signal.reason, run.timeoutMs) };
    if (closed) return { result: failure('runtime_unavailable', 'the MCP runtime is closed') };
    if (err instanceof ExchangeFailed) return { result: err.failure };
    if (guardRefusal(err)) return { result: networkFailure(err, run.timeoutMs, conn.url) };
    if (err instanceof ResponseTooLargeError) return { result: agentError(err.message) };
    if (err instanceof StreamableHTTPError) {
      const status = err.code;
      const result = agentError(`the endpoint answered HTTP ${String(status)} to the tool call (${describeError(err)})`);
      // A pooled session the server no longer knows: it refused the call without running it.
      const gone = (status === 404 || status === 400) && reused && conn.transport.sessionId !== undefined;
      return gone ? { result, retry: true } : { result };
    }
    if (conn.closed) return { result: agentError('the connection to the agent closed during the call') };
    if (err instanceof McpError) {
      // The SDK's own timer: only a safety net behind the signal.
      if (err.code === ErrorCode.RequestTimeout) return { result: abortedResult(undefined, run.timeoutMs) };
      return { result: agentError(`the agent answered with a JSON-RPC error: ${err.message}`) };
    }
    if (errorCodes(err).length > 0) return { result: networkFailure(err, run.timeoutMs, conn.url) };
    const issues = (err as { issues?: unknown } | null)?.issues;
    if (Array.isArray(issues) || (err instanceof Error && err.name === 'ZodError')) {
      return { result: agentError('the tool result is not a valid MCP CallToolResult') };
    }
    return { result: agentError(`the tool call failed: ${describeError(err)}`) };
  }

  async function invoke(
    conn: Connection,
    reused: boolean,
    params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
    run: RunContext,
  ): Promise<{ result: RunResult; retry?: boolean }> {
    if (run.signal.aborted) return { result: abortedResult(run.signal.reason, run.timeoutMs) };
    const timeout = Math.min(Math.max(run.timeoutMs, 0) + SDK_TIMER_MARGIN_MS, MAX_TIMER_MS);
    const scoped = follow(run.signal);
    let result: unknown;
    try {
      result = await within(new Exchange(), () =>
        conn.client.callTool(params, undefined, {
          signal: scoped.signal,
          timeout: Number.isFinite(timeout) ? timeout : MAX_TIMER_MS,
          resetTimeoutOnProgress: false,
        }),
      );
    } catch (err) {
      return callFailure(err, conn, reused, run);
    } finally {
      scoped.release();
    }
    return { result: readResult(result as CallToolResult) };
  }

  async function call(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
    if (closed) return failure('runtime_unavailable', 'the MCP runtime is closed');
    const { manifest } = agent;
    const route = routeOf(agent, options.published);
    if ('failure' in route) return route.failure;
    const { url, guarded } = route;
    const via = guarded ? guarded.fetch : baseFetch;
    const tool = manifest.runtime.tool;
    if (typeof tool !== 'string' || tool === '') return failure('runtime_unavailable', 'the agent names no runtime.tool to call');
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return agentError(`an MCP tool takes a JSON object as arguments, and the input is ${describeValue(input)}`);
    }

    const prepared = await extraHeaders(options.headers, agent, TRANSPORT_HEADERS);
    if ('failure' in prepared) return prepared.failure;
    const { headers } = prepared;
    if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);

    const meta: Record<string, unknown> = {};
    if (run.maxCost) meta['holon/max_cost'] = { amount: run.maxCost.amount, currency: run.maxCost.currency };
    if (run.delegationToken) meta['holon/delegation'] = run.delegationToken;
    if (run.files && Object.keys(run.files).length > 0) meta['holon/files'] = run.files;
    const params = { name: tool, arguments: input as Record<string, unknown>, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
    // Sessions through the guard and sessions without it never share a pool entry.
    const key = `${guarded ? 'guarded' : 'direct'}\n${url.href}\n${JSON.stringify(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;

    if (!reuse) {
      const conn = newConnection(key, url, headers, via);
      conn.retired = true;
      conn.inFlight = 1;
      try {
        try {
          await connect(conn, run.signal);
        } catch (err) {
          return connectFailure(err, run, url);
        }
        return (await invoke(conn, false, params, run)).result;
      } finally {
        release(conn);
      }
    }

    for (let attempt = 0; ; attempt++) {
      const { conn, reused } = acquire(key, url, headers, via);
      conn.inFlight += 1;
      clearTimeout(conn.idleTimer);
      try {
        try {
          await conn.ready;
        } catch (err) {
          return connectFailure(err, run, url);
        }
        const { result, retry } = await invoke(conn, reused, params, run);
        if (retry && attempt === 0 && !run.signal.aborted && !closed) {
          retire(conn);
          continue;
        }
        return result;
      } finally {
        release(conn);
      }
    }
  }

  async function work(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
    try {
      return await call(agent, input, run);
    } catch (err) {
      // Defensive: everything above turns errors into results.
      return agentError(`the MCP runtime failed: ${describeError(err)}`);
    }
  }

  return {
    run(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
      if (run.signal.aborted) return Promise.resolve(abortedResult(run.signal.reason, run.timeoutMs));
      return raceSignal(run.signal, work(agent, input, run), () => abortedResult(run.signal.reason, run.timeoutMs));
    },
    async close(): Promise<void> {
      closed = true;
      pool.clear();
      for (const conn of live) {
        conn.retired = true;
        void shut(conn, true);
      }
      while (shutting.size > 0) await Promise.all([...shutting]);
    },
  };
}
