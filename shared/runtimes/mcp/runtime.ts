/**
 * MCP agents (gateway.md §6 "MCP agents", the Holon MCP agent profile): call the tool `runtime.tool` of the MCP
 * server at `runtime.endpoint`, over Streamable HTTP, with the SDK v2's Client, which negotiates the era
 * (`server/discover`, else the 2025 handshake). A 2026 server's input request is the run's question (pool.ts
 * `askCaller`, through the SDK's own retry); a task it answers with is followed to its end (task.ts).
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
 * client, ../published.ts; the runner always gives it): an http:// endpoint without allowPrivateEndpoints, a refused
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
 * What the SDK does not do by itself, and this module does around it (mostly through the transport's `fetch`,
 * in ./pool.ts with the connections):
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
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, type CallToolResult, type FetchLike, type Progress } from '@modelcontextprotocol/client';
import { guardRefusal } from '../../platform/guarded-net.js';
import { abortedResult, raceSignal } from '../abort.js';
import { agentError, failure, type Failure } from '../messages.js';
import { errorCodes, extraHeaders, maxResponseBytesOf, networkFailure, type HeadersOption } from '../remote.js';
import { routeOf } from '../published.js';
import type { AgentVersion, RunContext, RunResult, RunStream, Runtime } from '../types.js';
import { ResponseTooLargeError } from './body-watch.js';
import { Exchange, ExchangeFailed, follow, within } from './exchange.js';
import { ConnectionPool, HandshakeTimeout, MAX_TIMER_MS, type Lease, type PoolSettings, type Target } from './pool.js';
import { describeValue, readResult } from './tool-result.js';
import { followTask } from './task.js';
import type { JsonObject } from '../../core/json.js';

export interface McpRuntimeOptions {
  /** The largest HTTP answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** Extra request headers for an agent, e.g. `{ authorization: 'Bearer …' }`. They never replace the transport's own headers. */
  headers?: HeadersOption;
  /** Keep one MCP session per (endpoint, headers) and share it between calls. Default true; false = connect, call, close per call. */
  reuseConnections?: boolean;
  /** The fetch to send through for shipped agents (and every agent without `published`). Default: the global fetch. */
  fetch?: FetchLike;
  /** The guarded client for published agents (../published.ts); without it they use `fetch` like shipped ones. */
  published?: { fetch: FetchLike; allowHttp: boolean };
  /** A pooled session without calls for this long is ended. Default 5 minutes; 0 = never. */
  idleTimeoutMs?: number;
  /** The most an MCP handshake (initialize + initialized) may take before the session is given up. Default 30 s. */
  connectTimeoutMs?: number;
}

/** The SDK's own request timer is only a safety net behind the signal. */
const SDK_TIMER_MARGIN_MS = 5_000;
/** A session's handshake, shared by the calls waiting on it (each call is still bounded by its own signal). */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** Headers the transport owns: the `headers` option cannot replace them. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set(['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

/** A thrown value's message alone (no name, untruncated): the messages that quote it are truncated by agentError. */
function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : `a thrown ${err === null ? 'null' : typeof err}`;
}

/** The options, checked once when the runtime is made. */
function poolSettingsOf(options: McpRuntimeOptions): PoolSettings {
  const maxResponseBytes = maxResponseBytesOf(options.maxResponseBytes);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (typeof idleTimeoutMs !== 'number' || Number.isNaN(idleTimeoutMs) || idleTimeoutMs < 0) {
    throw new TypeError('idleTimeoutMs must be a non-negative number of milliseconds');
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (!Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0 || connectTimeoutMs > MAX_TIMER_MS) {
    throw new TypeError('connectTimeoutMs must be a positive number of milliseconds');
  }
  return { reuse: options.reuseConnections ?? true, idleTimeoutMs, connectTimeoutMs, maxResponseBytes };
}

export function createMcpRuntime(options: McpRuntimeOptions = {}): Runtime & { close(): Promise<void> } {
  const caller: Caller = {
    pool: new ConnectionPool(poolSettingsOf(options)),
    options,
    baseFetch: options.fetch ?? ((url, init) => fetch(url, init)),
  };
  return {
    run(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
      if (run.signal.aborted) return Promise.resolve(abortedResult(run.signal.reason, run.timeoutMs));
      return raceSignal(
        run.signal,
        () => callAgent(caller, agent, input, run),
        () => abortedResult(run.signal.reason, run.timeoutMs),
      );
    },
    close(): Promise<void> {
      return caller.pool.close();
    },
  };
}

// ------------------------------------------------------------------ a call

/** What every call of one runtime shares. */
interface Caller {
  pool: ConnectionPool;
  options: McpRuntimeOptions;
  /** The fetch of shipped agents (and of every agent without `published`). */
  baseFetch: FetchLike;
}

/** Holon's entries in tools/call's `_meta` (spec/mcp.md), each only when set. */
type HolonMeta = {
  'holon/max_cost'?: { amount: string; currency: string };
  'holon/delegation'?: string;
  'holon/files'?: NonNullable<RunContext['files']>;
};

interface ToolParams {
  name: string;
  /** The input: any JSON object the agent's schema admits. */
  arguments: JsonObject;
  _meta?: HolonMeta;
}

/** A call ready to send: where to (and through what), and the tools/call params. */
interface ToolCall {
  target: Target;
  params: ToolParams;
}

/** One tool call's result; `retry` when a pooled session the server no longer knows refused it without running it. */
interface Outcome {
  result: RunResult;
  retry?: boolean;
}

function runtimeClosed(): Failure {
  return failure('runtime_unavailable', 'the MCP runtime is closed');
}

async function callAgent(caller: Caller, agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
  if (caller.pool.closed) return runtimeClosed();
  const prepared = await prepareCall(caller, agent, input, run);
  if ('failure' in prepared) return prepared.failure;
  return caller.pool.settings.reuse ? callPooled(caller.pool, prepared, run) : callOnce(caller.pool, prepared, run);
}

/** The endpoint, the tool and its arguments, the extra headers: the call to send, or why it cannot be sent. */
async function prepareCall(caller: Caller, agent: AgentVersion, input: unknown, run: RunContext): Promise<ToolCall | { failure: RunResult }> {
  const route = routeOf(agent, caller.options.published);
  if ('failure' in route) return route;
  const { url, guarded } = route;
  const params = toolParams(agent, input, run);
  if ('failure' in params) return params;
  const prepared = await extraHeaders(caller.options.headers, agent, TRANSPORT_HEADERS);
  if ('failure' in prepared) return prepared;
  const { headers } = prepared;
  if (run.signal.aborted) return { failure: abortedResult(run.signal.reason, run.timeoutMs) };
  const target = { key: poolKey(guarded !== undefined, url, headers), url, headers, fetch: guarded ? guarded.fetch : caller.baseFetch };
  return { target, params };
}

/** tools/call's params: the tool, the input as its arguments, and Holon's `_meta` (each entry only when set). */
function toolParams(agent: AgentVersion, input: unknown, run: RunContext): ToolParams | { failure: RunResult } {
  const tool = agent.manifest.runtime.tool;
  if (typeof tool !== 'string' || tool === '') return { failure: failure('runtime_unavailable', 'the agent names no runtime.tool to call') };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { failure: agentError(`an MCP tool takes a JSON object as arguments, and the input is ${describeValue(input)}`) };
  }
  const meta: HolonMeta = {};
  if (run.maxCost) meta['holon/max_cost'] = { amount: run.maxCost.amount, currency: run.maxCost.currency };
  if (run.delegationToken) meta['holon/delegation'] = run.delegationToken;
  if (run.files && Object.keys(run.files).length > 0) meta['holon/files'] = run.files;
  return { name: tool, arguments: input as JsonObject, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
}

/** Sessions through the guard and sessions without it never share a pool entry; nor do different extra headers. */
function poolKey(guarded: boolean, url: URL, headers: Record<string, string>): string {
  return `${guarded ? 'guarded' : 'direct'}\n${url.href}\n${JSON.stringify(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;
}

/** reuseConnections: false: a session of the call's own, opened, used and ended. */
async function callOnce(pool: ConnectionPool, call: ToolCall, run: RunContext): Promise<RunResult> {
  const conn = pool.single(call.target);
  try {
    try {
      await pool.connect(conn, run.signal);
    } catch (err) {
      return interrupted(pool, run) ?? connectFailure(err, run, call.target.url);
    }
    return (await invoke(pool, { conn, reused: false }, call.params, run)).result;
  } finally {
    pool.release(conn);
  }
}

/** The pooled session (opened by the first call); sent once more on a new session when the pooled one was gone. */
async function callPooled(pool: ConnectionPool, call: ToolCall, run: RunContext): Promise<RunResult> {
  for (let attempt = 0; ; attempt++) {
    const lease = pool.lease(call.target);
    try {
      try {
        await lease.conn.ready;
      } catch (err) {
        return interrupted(pool, run) ?? connectFailure(err, run, call.target.url);
      }
      const { result, retry } = await invoke(pool, lease, call.params, run);
      if (retry && attempt === 0 && !run.signal.aborted && !pool.closed) {
        pool.retire(lease.conn);
        continue;
      }
      return result;
    } finally {
      pool.release(lease.conn);
    }
  }
}

/** tools/call on the leased session, within the run's signal; its answer read as a result. */
async function invoke(pool: ConnectionPool, lease: Lease, params: ToolParams, run: RunContext): Promise<Outcome> {
  if (run.signal.aborted) return { result: abortedResult(run.signal.reason, run.timeoutMs) };
  const timeout = Math.min(Math.max(run.timeoutMs, 0) + SDK_TIMER_MARGIN_MS, MAX_TIMER_MS);
  const scoped = follow(run.signal);
  let result: unknown;
  const exchange = new Exchange(run.stream);
  try {
    result = await within(exchange, () =>
      lease.conn.client.callTool(params, {
        signal: scoped.signal,
        timeout: Number.isFinite(timeout) ? timeout : MAX_TIMER_MS,
        resetTimeoutOnProgress: false,
        // The agent's progress notifications become the call's `progress` events (docs/mcp.md).
        ...(run.stream ? { onprogress: progressTo(run.stream) } : {}),
      }),
    );
  } catch (err) {
    const stopped = interrupted(pool, run);
    if (stopped) return { result: stopped };
    // A 2026-07-28 server answered with a task (the SDK refuses the result kind): it is followed to its end.
    if (exchange.task && err instanceof SdkError && err.code === SdkErrorCode.UnsupportedResultType) return followed(pool, lease, exchange.task, run);
    return callFailure(err, lease, run);
  } finally {
    scoped.release();
  }
  return { result: readResult(result as CallToolResult) };
}

/** The task a server answered with, followed under the run's signal; its result read as any tool result. */
async function followed(pool: ConnectionPool, lease: Lease, task: { taskId: string; pollIntervalMs?: number }, run: RunContext): Promise<Outcome> {
  try {
    const end = await followTask(lease.conn.client, task, run);
    return { result: end.kind === 'result' ? readResult(end.result as CallToolResult) : end.result };
  } catch (err) {
    const stopped = interrupted(pool, run);
    return stopped ? { result: stopped } : callFailure(err, lease, run);
  }
}

/** An MCP progress notification as a `progress` event: its message, and progress/total as a fraction when it has a total. */
function progressTo(stream: RunStream): (p: Progress) => void {
  return (p) => {
    const fraction = typeof p.total === 'number' && p.total > 0 ? Math.min(1, Math.max(0, p.progress / p.total)) : undefined;
    stream
      .progress({ ...(typeof p.message === 'string' ? { message: p.message } : {}), ...(fraction !== undefined ? { fraction } : {}) })
      .catch(() => undefined);
  };
}

// ------------------------------------------------------------------ failures

/** What any failure of a call is when the signal fired (timeout, cancelled) or the runtime closed under it. */
function interrupted(pool: ConnectionPool, run: RunContext): RunResult | undefined {
  if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
  if (pool.closed) return runtimeClosed();
  return undefined;
}

/** The network's error codes of a failure (ECONNREFUSED…): the SDK's own errors carry codes of theirs, not the network's. */
const networkCodes = (err: unknown): string[] => errorCodes(err instanceof SdkError ? err.cause : err);

/** The session could not be opened. */
function connectFailure(err: unknown, run: RunContext, url: URL): RunResult {
  if (err instanceof ExchangeFailed) return err.failure;
  if (guardRefusal(err)) return networkFailure(err, run.timeoutMs, url);
  if (err instanceof ResponseTooLargeError || err instanceof HandshakeTimeout) return agentError(err.message);
  if (networkCodes(err).length > 0) return networkFailure(err, run.timeoutMs, url);
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) {
    return agentError('the endpoint did not answer the MCP initialize request');
  }
  return agentError(`the endpoint did not open an MCP session (${describeError(err)})`);
}

/** The tool call failed on an open session. */
function callFailure(err: unknown, { conn, reused }: Lease, run: RunContext): Outcome {
  const { url } = conn.target;
  if (err instanceof ExchangeFailed) return { result: err.failure };
  if (guardRefusal(err)) return { result: networkFailure(err, run.timeoutMs, url) };
  if (err instanceof ResponseTooLargeError) return { result: agentError(err.message) };
  if (err instanceof SdkHttpError) {
    const { status } = err;
    const result = agentError(`the endpoint answered HTTP ${String(status)} to the tool call (${describeError(err)})`);
    // A pooled session the server no longer knows: it refused the call without running it.
    const gone = (status === 404 || status === 400) && reused && conn.transport.sessionId !== undefined;
    return gone ? { result, retry: true } : { result };
  }
  if (conn.closed) return { result: agentError('the connection to the agent closed during the call') };
  // The SDK's own timer: only a safety net behind the signal.
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return { result: abortedResult(undefined, run.timeoutMs) };
  if (err instanceof ProtocolError) return { result: agentError(`the agent answered with a JSON-RPC error: ${err.message}`) };
  if (err instanceof SdkError && (err.code === SdkErrorCode.InvalidResult || err.code === SdkErrorCode.UnsupportedResultType)) {
    return { result: agentError('the tool result is not a valid MCP CallToolResult') };
  }
  if (networkCodes(err).length > 0) return { result: networkFailure(err, run.timeoutMs, url) };
  const issues = (err as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) || (err instanceof Error && err.name === 'ZodError')) {
    return { result: agentError('the tool result is not a valid MCP CallToolResult') };
  }
  return { result: agentError(`the tool call failed: ${describeError(err)}`) };
}
