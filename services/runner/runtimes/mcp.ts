/**
 * MCP agents (gateway.md §6 "MCP agents", the Holon MCP agent profile): call the tool `runtime.tool` of the MCP
 * server at `runtime.endpoint`, over Streamable HTTP, with the SDK's Client.
 *
 *   request   arguments = the input; _meta["holon/max_cost"] = {amount, currency} and _meta["holon/delegation"] = <token>,
 *             each only when set; plus the `headers` option's HTTP headers (the hosted gateway's Authorization)
 *   result    structuredContent, else the first text block parsed as JSON   → output
 *             isError + structuredContent.error.code (a string)              → the agent's error code (billing decides)
 *             _meta["holon/units"] (whole number) / _meta["holon/quote"] (decimal string) → units / quote
 *             isError without a string code, no output channel, text that is not JSON, an invalid units or quote,
 *             a JSON-RPC error (unknown tool…), a result that is not a CallToolResult, an HTTP error status,
 *             an answer larger than the limit, the connection dropped while the call runs     → agent_error
 *             connection refused / DNS failure / unreachable                  → runtime_unavailable
 *             the signal fires (hard timeout or cancellation)                 → timeout, or cancelled; the SDK sends
 *                                                                               notifications/cancelled to the agent
 *
 * Connections. One connected Client per (endpoint, extra headers), opened by the first call and shared by every call
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
 *     after the answer (the gateway's signal is an AbortSignal.timeout): it gets a signal detached once the call ends;
 *   - the handshake (initialize, then the `initialized` notification, which has no timeout of its own) is bounded by
 *     `connectTimeoutMs`, so a server that hangs there cannot hold a pool entry;
 *   - no standalone GET stream is opened: Holon declares no client capabilities and needs nothing outside a request's
 *     own stream, so the GET is answered locally with 405, which the SDK reads as "this server has no such stream".
 * Nothing is logged.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { tryParseAmount } from '../../../shared/core/money.js';
import { abortedResult, raceSignal, truncate } from './node.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from './types.js';
import { endpointOf, extraHeaders, maxResponseBytesOf, type HeadersOption } from './remote.js';
import { describeLimit, errorCodes, networkFailure } from './webhook.js';

export interface McpRuntimeOptions {
  /** The largest HTTP answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** Extra request headers for an agent, e.g. `{ authorization: 'Bearer …' }`. They never replace the transport's own headers. */
  headers?: HeadersOption;
  /** Keep one MCP session per (endpoint, headers) and share it between calls. Default true; false = connect, call, close per call. */
  reuseConnections?: boolean;
  /** The fetch to send through (e.g. one bound to the guarded client for published agents). Default: the global fetch. */
  fetch?: FetchLike;
  /** A pooled session without calls for this long is ended. Default 5 minutes; 0 = never. */
  idleTimeoutMs?: number;
  /** The most an MCP handshake (initialize + initialized) may take before the session is given up. Default 30 s. */
  connectTimeoutMs?: number;
}

type Failure = Extract<RunResult, { kind: 'failure' }>;

const CLIENT_INFO = { name: 'holon-gateway', version: '0.1.0' };
const MAX_FAILURE_MESSAGE = 200;
const MAX_DECLARED_MESSAGE = 1000;
/** The SDK's own request timer is only a safety net behind the signal. */
const SDK_TIMER_MARGIN_MS = 5_000;
/** setTimeout fires at once for delays past 2^31 - 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** A session's handshake, shared by the calls waiting on it (each call is still bounded by its own signal). */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Ending a session (DELETE) never holds a close for longer than this. */
const TERMINATE_TIMEOUT_MS = 2_000;
/** A stream failure is reported after this grace, so an answer the SDK already holds still wins. */
const FAIL_GRACE_MS = 20;
const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Headers the transport owns: the `headers` option cannot replace them. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set(['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function failure(code: Failure['code'], message: string): Failure {
  return { kind: 'failure', code, message };
}

function agentError(message: string): Failure {
  return failure('agent_error', truncate(message, MAX_FAILURE_MESSAGE));
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : `a thrown ${err === null ? 'null' : typeof err}`;
}

function describeValue(v: unknown): string {
  if (typeof v === 'number') return `the number ${String(v)}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(truncate(v, 40))}`;
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly limit: number) {
    super(`answer larger than ${describeLimit(limit)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Exchanges: one JSON-RPC request (a tool call, or a session's initialize) and the HTTP traffic carrying it.
// ---------------------------------------------------------------------------------------------

class Exchange {
  /** Aborted when the request is over: closes its HTTP request and response stream if they are still open. */
  readonly controller = new AbortController();
  /** Resolves when the HTTP side says the SDK will never deliver the answer. */
  readonly failed: Promise<Failure>;
  /** The JSON-RPC response reached the SDK (the exchange may still be running: connect sends `initialized` after it). */
  answered = false;
  private report!: (f: Failure) => void;
  private reported = false;

  constructor() {
    this.failed = new Promise<Failure>((resolve) => (this.report = resolve));
  }

  get ended(): boolean {
    return this.controller.signal.aborted;
  }

  /** The answer cannot come any more, unless it is already on its way to the SDK: decided after a short grace. */
  fail(f: Failure): void {
    if (this.reported || this.ended || this.answered) return;
    this.reported = true;
    setTimeout(() => {
      if (!this.answered) this.report(f);
    }, FAIL_GRACE_MS);
  }

  end(): void {
    this.controller.abort();
  }
}

/** The exchange whose request is being sent: set around client.callTool / client.connect, read by the transport's fetch. */
const exchanges = new AsyncLocalStorage<Exchange | undefined>();

/**
 * Ties each HTTP request to the exchange of the JSON-RPC request it carries, and to nothing else (notifications,
 * replies), and tells the exchange when its response arrives.
 */
class ExchangeTransport extends StreamableHTTPClientTransport {
  private readonly waiting = new Map<string | number, Exchange>();

  override send(message: JSONRPCMessage | JSONRPCMessage[], options?: Parameters<StreamableHTTPClientTransport['send']>[1]): Promise<void> {
    const exchange = exchanges.getStore();
    if (!exchange || Array.isArray(message) || !isJSONRPCRequest(message)) {
      return exchanges.run(undefined, () => super.send(message, options));
    }
    const id = message.id;
    this.waiting.set(id, exchange);
    exchange.controller.signal.addEventListener('abort', () => this.waiting.get(id) === exchange && this.waiting.delete(id), { once: true });
    return exchanges.run(exchange, () => super.send(message, options));
  }

  /** Installed as `onmessage` before the Client connects: Protocol.connect calls it before its own handler. */
  noteAnswer(message: JSONRPCMessage): void {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = message.id;
    if (id === undefined) return;
    const exchange = this.waiting.get(id);
    if (!exchange) return;
    exchange.answered = true;
    this.waiting.delete(id);
  }
}

class HandshakeTimeout extends Error {
  constructor(ms: number) {
    super(`the endpoint did not complete the MCP handshake within ${ms} ms`);
  }
}

class ExchangeFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

/** `work`, unless the exchange fails first. The exchange ends either way. */
async function within<T>(exchange: Exchange, work: () => Promise<T>): Promise<T> {
  try {
    const running = exchanges.run(exchange, work);
    return await Promise.race([
      running,
      exchange.failed.then((f): never => {
        throw new ExchangeFailed(f);
      }),
    ]);
  } finally {
    exchange.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Response bodies: the size cap, and what the end of a stream means.
// ---------------------------------------------------------------------------------------------

interface BodyWatch {
  sse: boolean;
  tooLarge(): void;
  broken(err: unknown): void;
  ended(primed: boolean): void;
}

const ID_FIELD = [0x69, 0x64, 0x3a]; // "id:"

/** Pass `source` through, at most `limit` bytes; for an event stream, notice an `id:` field (the SDK may resume from it). */
function watchBody(source: ReadableStream<Uint8Array>, limit: number, watch: BodyWatch): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  let primed = false;
  /** How much of "id:" the current line starts with; -1 once the line cannot be an id field. */
  let matched = 0;
  const scan = (bytes: Uint8Array): void => {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x0a || b === 0x0d) {
        matched = 0;
      } else if (matched < 0) {
        const next = bytes.indexOf(0x0a, i);
        if (next < 0) return;
        i = next - 1;
      } else if (b === ID_FIELD[matched]) {
        matched += 1;
        if (matched === ID_FIELD.length) {
          primed = true;
          return;
        }
      } else {
        matched = -1;
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        watch.broken(err);
        controller.error(err);
        return;
      }
      if (chunk.done) {
        watch.ended(primed);
        controller.close();
        return;
      }
      total += chunk.value.byteLength;
      if (total > limit) {
        const err = new ResponseTooLargeError(limit);
        watch.tooLarge();
        reader.cancel(err).catch(() => undefined);
        controller.error(err);
        return;
      }
      if (watch.sse && !primed) scan(chunk.value);
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * A signal that follows `signal` until released. The SDK listens to a request's signal for good (and sends
 * notifications/cancelled whenever it fires), while the gateway's signal fires at the hard timeout even after the
 * run ended: the SDK only ever sees this one.
 */
function follow(signal: AbortSignal): { signal: AbortSignal; release(): void } {
  const local = new AbortController();
  const forward = (): void => local.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  return { signal: local.signal, release: () => signal.removeEventListener('abort', forward) };
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function readUnits(value: unknown): Parsed<bigint> {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return { ok: true, value: BigInt(value) };
  if (typeof value === 'string' && /^(0|[1-9][0-9]{0,29})$/.test(value)) return { ok: true, value: BigInt(value) };
  return { ok: false, message: `_meta["holon/units"] must be a whole number of units (a non-negative integer or a string of digits), not ${describeValue(value)}` };
}

function readBilling(meta: unknown): Parsed<{ units?: bigint; quote?: bigint }> {
  if (typeof meta !== 'object' || meta === null) return { ok: true, value: {} };
  const value: { units?: bigint; quote?: bigint } = {};
  if (Object.hasOwn(meta, 'holon/units')) {
    const units = readUnits((meta as Record<string, unknown>)['holon/units']);
    if (!units.ok) return units;
    value.units = units.value;
  }
  if (Object.hasOwn(meta, 'holon/quote')) {
    const quote = tryParseAmount((meta as Record<string, unknown>)['holon/quote']);
    if (!quote.ok) return { ok: false, message: `_meta["holon/quote"] ${quote.message}` };
    value.quote = quote.value;
  }
  return { ok: true, value };
}

/** `structuredContent.error` = `{code: "<string>", message?}`, if the result has it. */
function declaredError(structured: unknown): { code: string; message?: string } | undefined {
  if (typeof structured !== 'object' || structured === null) return undefined;
  const error = (structured as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || code === '') return undefined;
  return { code, ...(typeof message === 'string' ? { message: truncate(message, MAX_DECLARED_MESSAGE) } : {}) };
}

function firstText(result: CallToolResult): string | undefined {
  const content: unknown = result.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    if (typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text') {
      const text = (block as { text?: unknown }).text;
      return typeof text === 'string' ? text : undefined;
    }
  }
  return undefined;
}

function readResult(result: CallToolResult): RunResult {
  const billing = readBilling(result._meta);
  if (!billing.ok) return agentError(billing.message);
  const extra = billing.value;
  const structured: unknown = result.structuredContent;
  if (result.isError === true) {
    const declared = declaredError(structured);
    if (declared) return { kind: 'error', ...declared, ...extra };
    const text = firstText(result);
    return agentError(text ? `the tool reported an error without a code (structuredContent.error.code): ${text}` : 'the tool reported an error without a code (structuredContent.error.code)');
  }
  if (structured !== undefined) {
    if (typeof structured !== 'object' || structured === null || Array.isArray(structured)) {
      return agentError('the tool result\'s structuredContent is not a JSON object');
    }
    return { kind: 'output', output: structured, ...extra };
  }
  const text = firstText(result);
  if (text === undefined) return agentError('the tool result has neither structuredContent nor a text block');
  try {
    return { kind: 'output', output: JSON.parse(text) as unknown, ...extra };
  } catch {
    return agentError('the tool result\'s text block is not JSON');
  }
}

// ---------------------------------------------------------------------------------------------
// The runtime
// ---------------------------------------------------------------------------------------------

interface Connection {
  key: string;
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
          await Promise.race([
            conn.transport.terminateSession(),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_TIMEOUT_MS))),
          ]);
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
      conn.idleTimer = setTimeout(() => {
        if (conn.inFlight > 0 || conn.retired) return;
        conn.retired = true;
        if (pool.get(conn.key) === conn) pool.delete(conn.key);
        void shut(conn, true);
      }, Math.min(idleTimeoutMs, MAX_TIMER_MS));
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
        response = await baseFetch(url, { ...init, ...(signal ? { signal } : {}) });
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

  function newConnection(key: string, url: URL, headers: Record<string, string>): Connection {
    const conn = {
      key,
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
    const handshake = within(new Exchange(), () =>
      conn.client.connect(conn.transport, { timeout: connectTimeoutMs, ...(signal ? { signal } : {}) }),
    );
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

  function acquire(key: string, url: URL, headers: Record<string, string>): { conn: Connection; reused: boolean } {
    const pooled = pool.get(key);
    if (pooled && !pooled.retired) return { conn: pooled, reused: pooled.open };
    const conn = newConnection(key, url, headers);
    pool.set(key, conn);
    void connect(conn).catch(() => undefined);
    return { conn, reused: false };
  }

  // ------------------------------------------------------------------ outcomes

  function connectFailure(err: unknown, run: RunContext): RunResult {
    if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
    if (closed) return failure('runtime_unavailable', 'the MCP runtime is closed');
    if (err instanceof ExchangeFailed) return err.failure;
    if (err instanceof ResponseTooLargeError || err instanceof HandshakeTimeout) return agentError(err.message);
    if (errorCodes(err).length > 0) return networkFailure(err, run.timeoutMs);
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      return agentError('the endpoint did not answer the MCP initialize request');
    }
    return agentError(`the endpoint did not open an MCP session (${describeError(err)})`);
  }

  function callFailure(err: unknown, conn: Connection, reused: boolean, run: RunContext): { result: RunResult; retry?: boolean } {
    if (run.signal.aborted) return { result: abortedResult(run.signal.reason, run.timeoutMs) };
    if (closed) return { result: failure('runtime_unavailable', 'the MCP runtime is closed') };
    if (err instanceof ExchangeFailed) return { result: err.failure };
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
    if (errorCodes(err).length > 0) return { result: networkFailure(err, run.timeoutMs) };
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
    const endpoint = endpointOf(agent);
    if ('failure' in endpoint) return endpoint.failure;
    const { url } = endpoint;
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
    const params = { name: tool, arguments: input as Record<string, unknown>, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
    const key = `${url.href}\n${JSON.stringify(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;

    if (!reuse) {
      const conn = newConnection(key, url, headers);
      conn.retired = true;
      conn.inFlight = 1;
      try {
        try {
          await connect(conn, run.signal);
        } catch (err) {
          return connectFailure(err, run);
        }
        return (await invoke(conn, false, params, run)).result;
      } finally {
        release(conn);
      }
    }

    for (let attempt = 0; ; attempt++) {
      const { conn, reused } = acquire(key, url, headers);
      conn.inFlight += 1;
      clearTimeout(conn.idleTimer);
      try {
        try {
          await conn.ready;
        } catch (err) {
          return connectFailure(err, run);
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
