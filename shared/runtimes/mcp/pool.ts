/**
 * The MCP runtime's connections (runtime.ts, "Connections"): one connected Client per pool key, opened by the first
 * call and shared by the calls after it; the transport's fetch, which ends a call at once when the HTTP side says its
 * answer will never come, caps answers and takes a connection gone bad out of the pool; idle sessions ended (DELETE).
 */
import { Client, type ElicitRequest, type ElicitResult, type FetchLike } from '@modelcontextprotocol/client';
import { agentError } from '../messages.js';
import { describeLimit } from '../remote.js';
import { ResponseTooLargeError, watchBody } from './body-watch.js';
import { abortError, Exchange, exchanges, ExchangeTransport, follow, within } from './exchange.js';
import { TASKS_EXTENSION } from './task.js';

const CLIENT_INFO = { name: 'holon-gateway', version: '0.1.0' };

/**
 * An elicitation an MCP agent sends during a tool call: the run's question to its caller (docs/mcp.md). It arrives on
 * the tool call's response stream, so it runs in that call's exchange, which knows the run. Accepted with the
 * caller's answer; declined when nobody can answer (no run to ask: an evaluation's case, a URL-mode request), or
 * cancelled when the question went unanswered (the run then ends `no_answer`, whatever the agent does).
 */
async function askCaller(request: ElicitRequest): Promise<ElicitResult> {
  const stream = exchanges.getStore()?.stream;
  const params = request.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown> };
  if (!stream || params.mode === 'url') return { action: 'decline' };
  try {
    const answer = await stream.ask({ message: params.message, ...(params.requestedSchema ? { schema: params.requestedSchema } : {}) });
    return { action: 'accept', content: answer as ElicitResult['content'] };
  } catch {
    return { action: 'cancel' };
  }
}
/** setTimeout fires at once for delays past 2^31 - 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
/** Ending a session (DELETE) never holds a close for longer than this. */
const TERMINATE_TIMEOUT_MS = 2_000;
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export class HandshakeTimeout extends Error {
  constructor(ms: number) {
    super(`the endpoint did not complete the MCP handshake within ${ms} ms`);
  }
}

/** Where a connection goes: the pool key, the endpoint, its extra headers, and the fetch its requests go through. */
export interface Target {
  /** Names the client (guarded or direct), the endpoint and the extra headers: only calls with one key share a session. */
  key: string;
  /** The endpoint, for the messages of failures (remote.ts networkFailure names its origin and path). */
  url: URL;
  headers: Record<string, string>;
  /** What its HTTP requests go through: the guarded fetch for published agents. */
  fetch: FetchLike;
}

export interface PoolSettings {
  /** reuseConnections: share one session per key; false = a connection of its own for each call. */
  reuse: boolean;
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  maxResponseBytes: number;
}

/** Where a connection's session is. Whether it is pooled is the pool's to say (ConnectionPool.isPooled). */
enum ConnectionState {
  /** The handshake (initialize, then `initialized`) is under way: calls wait on `ready`. */
  Connecting = 'connecting',
  /** The handshake completed: the session is open. */
  Open = 'open',
  /** The handshake failed or timed out. */
  Failed = 'failed',
  /** The transport closed: the session is over, whatever it was before. */
  Closed = 'closed',
}

/** A connected Client (or one connecting) and its transport, the calls using it, its idle timer. */
class Connection {
  /**
   * It may elicit: a form an agent sends during a tool call (a 2025 server's request, or a 2026 server's input
   * request, which the SDK fulfils through the same handler) is that run's question to its caller (`askCaller`). It
   * negotiates the era (`server/discover`, else the 2025 handshake) and takes tasks (task.ts).
   */
  readonly client = new Client(CLIENT_INFO, {
    capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
    versionNegotiation: { mode: 'auto' },
  });
  readonly transport: ExchangeTransport;
  state = ConnectionState.Connecting;
  /** Settles when the handshake is over: resolves once the session is open, rejects when it failed. */
  ready!: Promise<void>;
  /** The calls using it now. */
  inFlight = 0;
  idleTimer: NodeJS.Timeout | undefined;
  /** Set once it is being shut: its session ended (when asked), then its Client closed. */
  shutting: Promise<void> | undefined;

  constructor(
    readonly target: Target,
    pool: ConnectionPool,
  ) {
    this.transport = new ExchangeTransport(target.url, { fetch: connectionFetch(this, pool), requestInit: { headers: target.headers } });
    this.transport.onmessage = (message) => this.transport.noteAnswer(message);
    this.client.setRequestHandler('elicitation/create', askCaller);
    this.client.onerror = () => undefined; // Failures reach the calls through their exchanges; nothing is logged.
    this.client.onclose = () => {
      this.state = ConnectionState.Closed;
      pool.retire(this);
    };
  }

  get closed(): boolean {
    return this.state === ConnectionState.Closed;
  }

  /** The handshake is over: the session is open, or it failed (a transport that closed meanwhile stays Closed). */
  handshakeEnded(ok: boolean): void {
    if (this.state === ConnectionState.Connecting) this.state = ok ? ConnectionState.Open : ConnectionState.Failed;
  }
}

/** A connection taken for one call, and whether its session was open already (a pooled session the call found). */
export interface Lease {
  conn: Connection;
  reused: boolean;
}

/** Open, or closed for good (close()): no call starts any more and every connection is shut. */
enum PoolState {
  Open = 'open',
  Closed = 'closed',
}

export class ConnectionPool {
  /** Each key's shared connection. A connection out of it is retired: no new call uses it; it is shut once its calls are over. */
  private readonly pooled = new Map<string, Connection>();
  /** Every connection not yet shut: pooled, retired with calls still running, or opened for one call. */
  private readonly live = new Set<Connection>();
  private readonly shutting = new Set<Promise<void>>();
  private state = PoolState.Open;

  constructor(readonly settings: PoolSettings) {}

  get closed(): boolean {
    return this.state === PoolState.Closed;
  }

  /** The key's pooled connection for one more call, opened (and its handshake started) when there is none. */
  lease(target: Target): Lease {
    const pooled = this.pooled.get(target.key);
    const lease = pooled ? { conn: pooled, reused: pooled.state === ConnectionState.Open } : this.openPooled(target);
    lease.conn.inFlight += 1;
    clearTimeout(lease.conn.idleTimer);
    return lease;
  }

  /** A connection for one call alone (reuseConnections: false), never pooled; the caller runs its handshake (connect). */
  single(target: Target): Connection {
    const conn = this.track(new Connection(target, this));
    conn.inFlight = 1;
    return conn;
  }

  /** initialize, then the `initialized` notification, all within connectTimeoutMs (a hung handshake must not hold the pool). */
  connect(conn: Connection, callSignal?: AbortSignal): Promise<void> {
    const { connectTimeoutMs } = this.settings;
    const scoped = callSignal ? follow(callSignal) : undefined;
    const signal = scoped?.signal;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HandshakeTimeout(connectTimeoutMs)), connectTimeoutMs);
    });
    const handshake = within(new Exchange(), () => conn.client.connect(conn.transport, { timeout: connectTimeoutMs, ...(signal ? { signal } : {}) }));
    const opening = Promise.race([handshake, deadline])
      .then(() => conn.handshakeEnded(true))
      .finally(() => {
        clearTimeout(timer);
        scoped?.release();
      });
    conn.ready = opening;
    opening.catch(() => {
      conn.handshakeEnded(false);
      this.retire(conn);
    });
    return opening;
  }

  /** Take the connection out of the pool; shut it once no call uses it. */
  retire(conn: Connection): void {
    if (this.isPooled(conn)) this.pooled.delete(conn.target.key);
    clearTimeout(conn.idleTimer);
    if (conn.inFlight === 0) void this.shut(conn, false);
  }

  /** A call is over with the connection: a retired one is shut once unused, a pooled one ends after idleTimeoutMs. */
  release(conn: Connection): void {
    conn.inFlight -= 1;
    if (conn.inFlight > 0) return;
    if (!this.isPooled(conn)) {
      // Retired, or opened for this call alone (reuse off): only the latter's session is ended with DELETE.
      void this.shut(conn, !conn.closed && this.settings.reuse === false);
      return;
    }
    this.endWhenIdle(conn);
  }

  /** Shut every connection, ending their sessions; no call starts after this. */
  async close(): Promise<void> {
    this.state = PoolState.Closed;
    this.pooled.clear();
    for (const conn of this.live) void this.shut(conn, true);
    while (this.shutting.size > 0) await Promise.all([...this.shutting]);
  }

  private isPooled(conn: Connection): boolean {
    return this.pooled.get(conn.target.key) === conn;
  }

  private track(conn: Connection): Connection {
    this.live.add(conn);
    return conn;
  }

  private openPooled(target: Target): Lease {
    const conn = this.track(new Connection(target, this));
    this.pooled.set(target.key, conn);
    void this.connect(conn).catch(() => undefined);
    return { conn, reused: false };
  }

  private endWhenIdle(conn: Connection): void {
    const { idleTimeoutMs } = this.settings;
    if (!(idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs))) return;
    clearTimeout(conn.idleTimer);
    conn.idleTimer = setTimeout(
      () => {
        if (conn.inFlight > 0 || !this.isPooled(conn)) return;
        this.pooled.delete(conn.target.key);
        void this.shut(conn, true);
      },
      Math.min(idleTimeoutMs, MAX_TIMER_MS),
    );
    conn.idleTimer.unref();
  }

  /** End the session (when `terminate`, and it is open), then close the Client. Once per connection. */
  private shut(conn: Connection, terminate: boolean): Promise<void> {
    if (conn.shutting) return conn.shutting;
    clearTimeout(conn.idleTimer);
    const done = (async () => {
      if (terminate && conn.state === ConnectionState.Open && conn.transport.sessionId !== undefined) await endSession(conn.transport);
      await conn.client.close().catch(() => undefined);
    })();
    conn.shutting = done;
    this.shutting.add(done);
    void done.finally(() => {
      this.shutting.delete(done);
      this.live.delete(conn);
    });
    return done;
  }
}

/** DELETE the session, waiting TERMINATE_TIMEOUT_MS at most; a failure is ignored (the session ends with the server anyway). */
async function endSession(transport: ExchangeTransport): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([transport.terminateSession(), new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_TIMEOUT_MS)))]);
  } catch {
    // The session ends with the server anyway.
  } finally {
    clearTimeout(timer);
  }
}

/** The transport's fetch for one connection: exchanges, the size cap, and the health of the connection. */
function connectionFetch(conn: Connection, pool: ConnectionPool): FetchLike {
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
      response = await conn.target.fetch(url, { ...init, ...(signal ? { signal } : {}) });
    } catch (err) {
      if (!signal?.aborted) pool.retire(conn);
      throw err;
    }
    // The session is gone or the server is failing: the next call opens a new one.
    if (response.status >= 400 && sent.has('mcp-session-id') && method !== 'DELETE') pool.retire(conn);
    if (exchange && method === 'POST' && response.status === 202) {
      exchange.fail(agentError('the endpoint accepted the request (202) without answering it'));
    }
    const { maxResponseBytes } = pool.settings;
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(length) && length > maxResponseBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(maxResponseBytes);
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    return watchedResponse(response, { conn, pool, exchange, signal, method });
  };
}

/** What watching a response's body needs to know about the request it answers. */
interface Answering {
  conn: Connection;
  pool: ConnectionPool;
  exchange: Exchange | undefined;
  signal: AbortSignal | undefined;
  method: string;
}

/** The response with its body watched: too large, broken, or an event stream that ended without the answer. */
function watchedResponse(response: Response, { conn, pool, exchange, signal, method }: Answering): Response {
  const { maxResponseBytes } = pool.settings;
  const sse = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
  const body = watchBody(response.body!, maxResponseBytes, {
    sse,
    tooLarge: () => exchange?.fail(agentError(`answer larger than ${describeLimit(maxResponseBytes)}`)),
    broken: () => {
      if (signal?.aborted) return;
      pool.retire(conn);
      exchange?.fail(agentError('the connection to the agent dropped before it answered'));
    },
    ended: (primed) => {
      // A POST's stream without an event id cannot be resumed: the SDK would wait for the answer until its timeout.
      // (A resumption GET that ends is reopened by the SDK itself, a bounded number of times.)
      if (method === 'POST' && sse && response.ok && !primed) exchange?.fail(agentError('the agent closed its response stream without answering'));
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
