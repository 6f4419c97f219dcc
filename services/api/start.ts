/**
 * The API service (`holon api`): REST /v0 and the MCP server at /mcp on one HTTP listener (app.ts).
 */
import type { Express } from 'express';
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { CallWaiter, WaitOptions } from '../../shared/calls/answer/waiter.js';
import type { StartedRole } from '../../shared/context.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import type { SuiteCatalog } from '../../shared/evaluation/suites.js';
import type { Config } from '../../shared/platform/config.js';
import { githubSettings } from '../../shared/accounts/github.js';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from '../../shared/platform/rate-limit.js';
import { MAX_FILE_BYTES } from '../../shared/files/store.js';
import { createApp, type ApiDeps } from './app.js';
import { createGatewayRuntimes } from '../../shared/runtimes/gateway-runtimes.js';
import { webhookSecrets } from '../../shared/webhooks/secrets.js';
import { createGuardedDispatcher, createGuardedFetch, type GuardedDispatcherOptions } from '../../shared/platform/guarded-net.js';
import { CLIENT_DOCUMENT_TIMEOUT_MS } from '../../shared/accounts/client-metadata.js';
import { createMcpEndpoint } from './mcp/server.js';
import { requestStateSeal } from './mcp/request-state.js';
import { isLoopbackName } from './origins.js';
import type { KeySet } from '../../shared/signing/key-set.js';
import { setMaxListeners } from 'node:events';
import { randomBytes } from 'node:crypto';

/** The API could not listen: said in plain words (the port is taken, the address is not this machine's). */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: NodeJS.ErrnoException) {
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    super(
      cause.code === 'EADDRINUSE'
        ? `holon: ${where} is already in use: stop what listens there, or choose another port with --port or PORT`
        : cause.code === 'EADDRNOTAVAIL'
          ? `holon: cannot listen on ${where}: ${host} is not an address of this machine (--host or HOST)`
          : cause.code === 'EACCES'
            ? `holon: not allowed to listen on ${where} (ports below 1024 need privileges)`
            : `holon: cannot listen on ${where}: ${cause.message}`,
    );
    this.name = 'ListenError';
  }
}

export interface StartedApi extends StartedRole {
  server: Server;
  port: number;
  /** The Express app behind the server's drain guard (its route table: tests/integration/openapi.test.ts). */
  app: Express;
}

export interface ApiOptions {
  /** HOLON_FILE_SECRET, or the dev process's own: verifies file links (services/compose.ts). Without it, no /v0/files. */
  fileLinkSecret?: string;
  /** The evaluation suites: publishing queues their evaluations, the fixture links are served from them. */
  suites?: SuiteCatalog;
  /** The public signing keys (shared/signing/key-set.ts): GET /.well-known/jwks.json. */
  keySet?: KeySet;
  /** Tests only: the guarded client's resolver, route and CA for MCP clients' metadata documents (routes/oauth.ts). */
  outboundGuard?: OutboundGuard;
}

/** What a test may hand the guarded client (shared/platform/guarded-net.ts); production uses its defaults. */
export type OutboundGuard = Pick<GuardedDispatcherOptions, 'lookup' | 'route' | 'ca'>;

/** The hosted gateway's limits (docs/configuration.md): per minute per address and account, per hour per action. */
function hostedRateLimits(config: Config, limiter: RateLimiter): NonNullable<ApiDeps['rateLimits']> {
  const minute = 60_000;
  const hourly = (limit: number) => ({ limit, windowMs: 60 * minute });
  return {
    limiter,
    trustProxy: config.trustProxy,
    perAddress: { limit: config.rateLimits.perAddressPerMin, windowMs: minute },
    perAccount: { limit: config.rateLimits.perAccountPerMin, windowMs: minute },
    signups: hourly(config.rateLimits.signupsPerHour),
    publishes: hourly(config.rateLimits.publishesPerHour),
    drafts: hourly(config.rateLimits.draftsPerHour),
    evaluations: hourly(config.rateLimits.evaluationsPerHour),
    redeliveries: hourly(config.webhooks.redeliveriesPerHour),
  };
}

/**
 * The HTTP server's limits on slow clients (HOLON_HEADERS_TIMEOUT_S, HOLON_REQUEST_TIMEOUT_S,
 * HOLON_KEEPALIVE_TIMEOUT_S): headers, then the whole request, must arrive in time, or the connection gets a 408 and
 * is closed, so a client sending a byte at a time cannot hold sockets; an idle keep-alive connection closes after its
 * timeout. Node checks the first two every `connectionsCheckingInterval` (30 s by default): here every second at most.
 */
function serverLimits(config: Config) {
  const headersTimeout = config.headersTimeoutS * 1000;
  return {
    headersTimeout,
    requestTimeout: config.requestTimeoutS * 1000,
    keepAliveTimeout: config.keepAliveTimeoutS * 1000,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 4))),
  };
}

/** Where the API is in its life: serving, or stopping (`draining`): readiness fails and new requests are turned away. */
interface Drain {
  draining: boolean;
  /** Responses not yet sent: once draining, each is sent with `Connection: close`. */
  open: Set<ServerResponse>;
}

const STOPPING = JSON.stringify({
  error: { code: 'busy', message: 'this API process is stopping: send the request again (another process answers it)' },
});

/**
 * In front of the app: `GET /readyz` (200 while serving, 503 once stopping: what a load balancer's readiness check
 * asks), and while stopping every new request answered `503` with `Retry-After` on a connection that then closes.
 * The requests the app already holds go on (services/api/start.ts `listen`).
 */
function drainGuard(app: RequestListener, drain: Drain): RequestListener {
  return (req, res) => {
    const path = req.url?.split('?')[0];
    if (drain.draining) {
      res.shouldKeepAlive = false;
      res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' })
        .end(path === '/readyz' ? JSON.stringify({ ok: false, stopping: true }) : STOPPING);
      return;
    }
    if (path === '/readyz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    drain.open.add(res);
    res.once('close', () => drain.open.delete(res));
    app(req, res);
  };
}

/**
 * Listen on HOLON_HOST:HOLON_PORT. `stop` (SIGTERM): readiness fails and no connection is accepted any more; a request
 * arriving on a kept-alive connection is answered 503 with Retry-After, and every connection closes as its last
 * answer ends; the requests in flight are answered — a synchronous call as it finishes, or 202 with its state URL
 * when the stop grace passes first (`handBack`, which aborts `drained`'s waits); MCP sessions close at once.
 */
async function listen(app: RequestListener, config: Config, parts: { mcp: { close(): Promise<void> }; handedBack: AbortSignal }) {
  const drain: Drain = { draining: false, open: new Set() };
  const server = createServer(serverLimits(config), drainGuard(app, drain));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(config.host, config.port, e)));
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const stop = async () => {
    drain.draining = true;
    // The answers still to come close their connection behind them.
    for (const res of drain.open) if (!res.headersSent) res.shouldKeepAlive = false;
    // No new connection; the idle kept-alive ones close now, the busy ones once their answer is out.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await parts.mcp.close();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    // Past the grace the waits end (202s); what still holds a connection a few seconds later (a slow upload, a stream)
    // is cut, so the stop is bounded.
    const cut = () => setTimeout(() => server.closeAllConnections(), 5_000).unref();
    if (parts.handedBack.aborted) cut();
    else parts.handedBack.addEventListener('abort', cut, { once: true });
    await closed;
    clearInterval(idle);
  };
  return { server, port, stop };
}

/** The process's one waiter, which the composition root built the engine with (services/compose.ts). */
function processWaiter(engine: CallEngine): CallWaiter {
  const { waiter } = engine;
  if (!waiter) throw new Error('the API needs a call engine with a waiter');
  return waiter;
}

/** The waiter the API's requests wait with: the process's one, whose waits all end (false) at the hand-back. */
function drainedWaiter(waiter: CallWaiter, handedBack: AbortSignal): CallWaiter {
  const drained = (options: WaitOptions): WaitOptions => ({ ...options, signal: options.signal ? AbortSignal.any([options.signal, handedBack]) : handedBack });
  return {
    wait: (callId, timeoutMs, options = {}) => waiter.wait(callId, timeoutMs, drained(options)),
    receiptOf: (callId, timeoutMs, options = {}) => waiter.receiptOf(callId, timeoutMs, drained(options)),
    heard: (callId, receipt) => waiter.heard(callId, receipt),
    close: () => waiter.close(),
  };
}

export async function startApi(processEngine: CallEngine, config: Config, options: ApiOptions = {}): Promise<StartedApi> {
  const ctx = processEngine.resources;
  const release: StartedRole['release'] = [];
  const handBack = new AbortController();
  // Every request that waits listens to it until its wait ends (shared/calls/answer/waiter.ts removes the listener): as many
  // as requests wait at once, which is not a leak.
  setMaxListeners(0, handBack.signal);
  const waiter = drainedWaiter(processWaiter(processEngine), handBack.signal);
  const stopping = new AbortController();
  setMaxListeners(0, stopping.signal);
  const engine = processEngine.withWaiter(waiter);
  const mcp = createMcpEndpoint({
    ctx,
    engine,
    waiter,
    defaultMandate: config.mcpMandate,
    progressIntervalMs: config.mcpProgressMs,
    elicitationTimeoutMs: 10 * 60_000,
    // HOLON_FILE_SECRET (or this process's own): API processes that share it resume each other's input requests.
    requestState: requestStateSeal(options.fileLinkSecret ?? randomBytes(32).toString('base64url'), ctx.settings.inputTtlS, () => ctx.now()),
  });
  if (ctx.metrics) ctx.metrics.sources.mcpSessions = () => mcp.sessionCount();
  // One limiter for every limit: Redis, shared by every API process, or in memory without Redis. The demo (routes/demo.ts)
  // counts in it in dev mode too; its Redis connection opens on the first hit.
  const limiter = config.redisUrl ? createRedisRateLimiter(config.redisUrl, config.redisPrefix) : createMemoryRateLimiter();
  release.push(() => limiter.close());
  // The demo runs our own agents the way the runner does (shared/runtimes), unbilled.
  const demoRuntimes = createGatewayRuntimes(ctx.log, { allowPrivateEndpoints: config.allowPrivateEndpoints });
  release.push(() => demoRuntimes.close());
  const rateLimits = config.hosted ? hostedRateLimits(config, limiter) : undefined;
  // Hosted: MCP clients' metadata documents are fetched through the guarded client, as published agents are called.
  const clientGuard = config.hosted
    ? createGuardedDispatcher({ connectTimeoutMs: CLIENT_DOCUMENT_TIMEOUT_MS, ...options.outboundGuard, allowPrivate: config.allowPrivateEndpoints })
    : undefined;
  if (clientGuard) release.push(() => clientGuard.close());
  const app = createApp({
    ...(rateLimits ? { rateLimits } : {}),
    mcp,
    defaultMandate: config.mcpMandate,
    ...(config.hosted ? { callbackGuard: { allowPrivate: config.allowPrivateEndpoints } } : {}),
    origins: {
      allowed: [config.publicUrl, config.siteUrl].filter((u): u is string => u !== undefined),
      loopbackPages: !config.hosted,
      loopbackHostOnly: !config.hosted && isLoopbackName(config.host),
      ...(config.siteUrl ? { site: config.siteUrl } : {}),
    },
    demo: { runtimes: demoRuntimes, limiter, trustProxy: config.trustProxy },
    payLimits: { limiter, trustProxy: config.trustProxy },
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    auth: { hosted: config.hosted, ...(config.adminKey ? { adminKey: config.adminKey } : {}), now: ctx.now },
    ctx,
    engine,
    waiter,
    syncWaitMs: config.syncWaitS * 1000,
    stopping: stopping.signal,
    signupCredit: config.signupCredit,
    bodyLimitBytes: config.bodyLimitBytes,
    github: { client: githubSettings(config), publicUrl: config.publicUrl },
    ...(clientGuard ? { oauth: { fetch: createGuardedFetch(clientGuard) } } : {}),
    ...(config.fileSecret ? { fileSecret: config.fileSecret } : {}),
    ...(config.hosted ? { webhooks: webhookSecrets(config.fileSecret, config.webhooks.rotationWindowS) } : {}),
    ...(options.fileLinkSecret
      ? {
          files: {
            linkSecret: options.fileLinkSecret,
            limits: { maxBytes: MAX_FILE_BYTES, quotaBytes: config.fileQuotaBytes },
            ...(options.suites ? { suites: options.suites } : {}),
          },
        }
      : {}),
    ...(options.suites ? { suites: options.suites } : {}),
    ...(options.keySet ? { keySet: options.keySet } : {}),
  });
  const { server, port, stop } = await listen(app, config, { mcp, handedBack: handBack.signal });
  // Event streams end first: their clients resume on another process (Last-Event-ID).
  const stopListening = async (): Promise<void> => {
    stopping.abort();
    await stop();
  };
  return { server, port, app, stop: [stopListening], workers: [], release, handBack: [() => handBack.abort()] };
}
