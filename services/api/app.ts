/**
 * The HTTP API (Express): REST /v0 (gateway.md §5, §7) and /mcp. Every route receives a principal
 * (principal.ts): in dev mode the local operator, who may do everything; in hosted mode the key's.
 */
import { codeOfHttpStatus, httpStatusOf } from './http-status.js';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { a2aRoutes } from './a2a/routes.js';
import { HolonError } from '../../shared/core/errors.js';
import { databaseUnavailable, isDatabaseUnreachable } from '../../shared/db/unreachable.js';
import type { ServiceContext } from '../../shared/context.js';
import type { Logger } from '../../shared/platform/log.js';
import type { CallWaiter } from '../../shared/calls/answer/waiter.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import type { McpEndpoint } from './mcp/server.js';
import { mcpHeaderGate } from './mcp/header-gate.js';
import type { RateLimiter, RateRule } from '../../shared/platform/rate-limit.js';
import { checkBody, requireJson } from './body-guard.js';
import { jsonRpcErrorBody, SERVER_ERROR, type JsonRpcErrorBody } from './mcp/errors.js';
import { originGuard, type OriginPolicy } from './origins.js';
import { authenticate, principalOf, type AuthSettings } from './principal.js';
import { actionLimit, rateLimitMiddleware, type ActionLimit, type PayLimits } from './rate-limit.js';
import { accountRoutes } from './routes/accounts.js';
import { adminRoutes } from './routes/admin.js';
import { approvalRoutes } from './routes/approvals.js';
import { consoleRoutes } from './routes/console.js';
import { callRoutes } from './routes/calls/routes.js';
import { catalogRoutes } from './routes/catalog.js';
import { credentialRoutes } from './routes/credentials.js';
import { draftRoutes } from './routes/drafts.js';
import { agentRoutes } from './routes/agents.js';
import { authRoutes, type GitHubSignInOptions } from './routes/auth.js';
import { isTokenRequest, oauthRoutes } from './routes/oauth.js';
import { consentRoutes } from './routes/mcp-consent.js';
import { mcpResourceMetadata } from './oauth-urls.js';
import type { FetchFunction } from '../../shared/platform/guarded-net.js';
import { keyRoutes } from './routes/keys.js';
import { mandateRoutes } from './routes/mandates.js';
import { meAgentRoutes } from './routes/me-agents.js';
import { topupRoutes } from './routes/topups.js';
import { payoutRoutes } from './routes/payouts.js';
import { fileRoutes, isFileUpload, type FileRouteDeps } from './routes/files.js';
import { suiteSummary, type SuiteCatalog } from '../../shared/evaluation/suites.js';
import { publishingRoutes } from './routes/publishing.js';
import { receiptRoutes } from './routes/receipts.js';
import { statementRoutes } from './routes/statement.js';
import { demoRoutes, type DemoDeps } from './routes/demo.js';
import { openApiRoutes } from './routes/openapi.js';
import { jwksRoutes } from './routes/jwks.js';
import { logRoutes } from './routes/log.js';
import type { KeySet } from '../../shared/signing/key-set.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { WebhookSecrets } from '../../shared/webhooks/secrets.js';
import { accessLog } from './access-log.js';
import { callTelemetry } from './routes/calls/telemetry.js';
import { eventRoutes } from './routes/calls/events.js';
import { metricsRoutes } from './routes/metrics.js';

export interface ApiDeps {
  ctx: ServiceContext;
  /** The call engine, with the API's waiter (services/api/start.ts): what the call routes and /mcp hand calls to. */
  engine: CallEngine;
  waiter: CallWaiter;
  syncWaitMs: number;
  /** Fires when this API process starts to stop: its event streams end (their clients resume on another process). */
  stopping?: AbortSignal;
  signupCredit: bigint;
  /** Largest request body (HOLON_BODY_LIMIT). */
  bodyLimitBytes: number;
  /** The MCP server at /mcp (spec/mcp.md). */
  mcp?: McpEndpoint;
  /** Dev mode: the mandate A2A requests call under when they name none (HOLON_MCP_MANDATE, as for /mcp). */
  defaultMandate?: string;
  /** Hosted: callback URLs must resolve to public addresses (shared/platform/guarded-net.ts). */
  callbackGuard?: { allowPrivate: boolean };
  /** Which browser origins (and, in dev, which Host names) may reach the gateway: origins.ts. */
  origins: OriginPolicy;
  /** Dev (the local operator) or hosted (keys); services/api/principal.ts. */
  auth: AuthSettings;
  /** Hosted: signing in with GitHub (routes/auth.ts); without an OAuth app it answers 503. */
  github?: GitHubSignInOptions;
  /**
   * Hosted: MCP clients sign in with the gateway's own authorization server (routes/oauth.ts, mcp-consent.ts); `fetch`
   * is the guarded client's, for client ID metadata documents. Without it those routes are not served.
   */
  oauth?: { fetch: FetchFunction };
  /** Hosted: limits per client address and per account, shared by every API process (gateway.md §7). */
  rateLimits?: {
    limiter: RateLimiter;
    trustProxy: boolean;
    perAddress: RateRule;
    perAccount: RateRule;
    signups: RateRule;
    publishes: RateRule;
    drafts: RateRule;
    evaluations: RateRule;
    /** POST /v0/calls/{id}/deliveries, per account (HOLON_RATE_REDELIVERIES_PER_HOUR). */
    redeliveries?: RateRule;
  };
  /** HOLON_FILE_SECRET: endpoint credentials are encrypted under it (routes/credentials.ts); without it they answer 503. */
  fileSecret?: string;
  /** Hosted: each account's webhook signing secrets (minted at sign-up, rotated by routes/webhooks.ts). */
  webhooks?: WebhookSecrets;
  /** HOLON_PUBLIC_URL: the server of GET /v0/openapi.json. */
  publicUrl?: string;
  /** The public demo (routes/demo.ts): the runtimes and the limiter; without it /v0/demo is not served. */
  demo?: Omit<DemoDeps, 'ctx'>;
  /** Keyless paid calls (routes/calls/paid.ts): their limits per address and per paying wallet, in any mode. */
  payLimits?: PayLimits;
  /** Uploads and signed downloads (routes/files.ts); without it /v0/files is not served. */
  files?: Omit<FileRouteDeps, 'ctx'>;
  /** The evaluation suites (shared/evaluation/suites.ts): publishing queues one evaluation per suite that applies. */
  suites?: SuiteCatalog;
  /** The gateway's public signing keys (shared/signing/key-set.ts); without them GET /.well-known/jwks.json is not served. */
  keySet?: KeySet;
}

/**
 * The JSON body middlewares run for every request but an upload, whose body is the file (routes/files.ts), and an
 * OAuth token request, whose body is a form (routes/oauth.ts): their routes read them.
 */
const unlessUpload =
  (handler: RequestHandler): RequestHandler =>
  (req, res, next) =>
    isFileUpload(req) || isTokenRequest(req) ? next() : handler(req, res, next);

/** What every request passes first: its id and log line, NUL and origin checks, the console, the body, the key. */
function useRequestGuards(app: Express, deps: ApiDeps): void {
  // First: every request gets its request id, its access log line and, for POST /v0/calls, its metric and span.
  app.use(accessLog(deps.ctx.log));
  app.use(callTelemetry(deps.ctx.metrics));
  // NUL characters cannot be stored (Postgres text) and are refused anywhere in a request, the URL included.
  app.use((req, _res, next) => {
    next(/%00|\u0000/i.test(req.originalUrl) ? new HolonError('invalid_request', 'the URL contains a NUL character') : undefined);
  });
  app.use(originGuard(deps.origins));
  // The console's own files, served from memory before any key or rate limit: a page load is some 20 files, the
  // manifest editor's YAML parser 73 more, and none of them is worth a request of the caller's per-minute budget.
  app.use(consoleRoutes({ hosted: deps.auth.hosted, ...(deps.origins.site ? { siteUrl: deps.origins.site } : {}) }));
  // A 401 on /mcp names where an MCP client signs in (RFC 9728 §5.1): known before the key or the body is read.
  if (deps.auth.hosted && deps.oauth) app.use(mcpResourceMetadata(deps.publicUrl));
  // /mcp's standard headers are read before the body: a request its principal could not make is refused unread.
  if (deps.mcp) app.use(mcpHeaderGate({ hosted: deps.auth.hosted, paying: () => deps.ctx.payments !== undefined }));
  app.use(unlessUpload(requireJson()));
  app.use(unlessUpload(express.json({ limit: deps.bodyLimitBytes, strict: true, type: () => true })));
  app.use(unlessUpload(checkBody()));
  const keys = authenticate(deps.ctx.db, deps.auth);
  // The token endpoint reads no key: its clients are public, and its every answer is OAuth's (routes/oauth.ts).
  app.use((req, res, next) => {
    if (!isTokenRequest(req)) return keys(req, res, next);
    res.locals.principal = { kind: 'none' };
    next();
  });
}

/** Per address and per account, and the actions with buckets of their own (sign-up, publish, draft, re-runs, re-sends). */
function useRateLimits(app: Express, deps: ApiDeps, limits: NonNullable<ApiDeps['rateLimits']>): void {
  const log = deps.ctx.log;
  const metrics = deps.ctx.metrics;
  const refused = metrics ? (rule: string) => metrics.rateLimitRefusals.inc({ rule }) : undefined;
  const account = (_req: Request, res: Response): string | undefined => {
    const p = principalOf(res);
    return p.kind === 'human' || p.kind === 'agent' ? p.account : undefined;
  };
  const action = (a: ActionLimit) => actionLimit(limits.limiter, a, { trustProxy: limits.trustProxy, log, refused });
  app.post('/v0/signup', action({ name: 'signup', rule: limits.signups, what: 'sign-ups' }));
  app.use(
    rateLimitMiddleware(limits.limiter, {
      trustProxy: limits.trustProxy,
      perAddress: limits.perAddress,
      perAccount: limits.perAccount,
      log,
      account,
      ...(refused ? { refused } : {}),
    }),
  );
  app.post('/v0/agents', action({ name: 'publish', rule: limits.publishes, what: 'publishes', account }));
  app.post('/v0/agents/draft', action({ name: 'draft', rule: limits.drafts, what: 'drafts', account }));
  app.post(/^\/v0\/agents\/[^/]+\/[^/@]+@[^/]+\/evaluate$/, action({ name: 'evaluate', rule: limits.evaluations, what: 'evaluation re-runs', account }));
  if (limits.redeliveries) {
    const rule = limits.redeliveries;
    app.post(/^\/v0\/calls\/[^/]+\/deliveries$/, action({ name: 'redeliver', rule, what: 're-sends', account }));
  }
}

/** The author's routes: drafts, publishing (with the suites that apply), endpoint credentials, their agents. */
function useAuthorRoutes(app: Express, deps: ApiDeps): void {
  const { ctx } = deps;
  const hosted = deps.auth.hosted;
  const allowPrivate = deps.callbackGuard?.allowPrivate ?? false;
  app.use(draftRoutes({ ctx, hosted, allowPrivate, fileSecret: deps.fileSecret }));
  const catalog = deps.suites;
  const suites = catalog ? { suites: (capabilities: readonly string[]) => catalog.forCapabilities(capabilities).map(suiteSummary) } : {};
  app.use(publishingRoutes({ ctx, hosted, github: deps.github?.client, allowPrivate, ...suites }));
  app.use(credentialRoutes({ ctx, hosted, fileSecret: deps.fileSecret }));
}

/** Every route, in the order they are matched; then 404 and the error handler. */
function useRoutes(app: Express, deps: ApiDeps): void {
  const { ctx } = deps;
  const hosted = deps.auth.hosted;
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  if (ctx.metrics) app.use(metricsRoutes(ctx.metrics));
  if (deps.mcp) app.use(deps.mcp.router);
  const calls = {
    ctx,
    engine: deps.engine,
    waiter: deps.waiter,
    syncWaitMs: deps.syncWaitMs,
    ...(deps.callbackGuard ? { callbackGuard: deps.callbackGuard } : {}),
    ...(deps.payLimits ? { payLimits: deps.payLimits } : {}),
    ...(deps.stopping ? { stopping: deps.stopping } : {}),
  };
  app.use(callRoutes(calls));
  app.use(eventRoutes(calls));
  app.use(
    a2aRoutes({
      ctx,
      engine: deps.engine,
      waiter: deps.waiter,
      syncWaitMs: deps.syncWaitMs,
      defaultMandate: deps.defaultMandate ?? 'demo/sandbox',
      ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
      ...(deps.fileSecret ? { fileSecret: deps.fileSecret } : {}),
      ...(deps.callbackGuard ? { callbackGuard: deps.callbackGuard } : {}),
      ...(deps.payLimits ? { payLimits: deps.payLimits } : {}),
    }),
  );
  app.use(approvalRoutes(calls));
  app.use(mandateRoutes({ ctx, signupCredit: deps.signupCredit }));
  app.use(receiptRoutes(ctx));
  app.use(statementRoutes(ctx));
  const webhooks = deps.webhooks ? { webhooks: deps.webhooks } : {};
  app.use(accountRoutes({ ctx, signupCredit: deps.signupCredit, hosted, ...webhooks }));
  app.use(keyRoutes({ ctx, hosted }));
  app.use(authRoutes({ ctx, hosted, signupCredit: deps.signupCredit, github: deps.github, ...webhooks }));
  if (deps.oauth) {
    const publicUrl = deps.publicUrl ? { publicUrl: deps.publicUrl } : {};
    app.use(oauthRoutes({ ctx, hosted, fetch: deps.oauth.fetch, ...publicUrl }));
    app.use(consentRoutes({ ctx, hosted, ...publicUrl }));
  }
  app.use(webhookRoutes({ ctx, hosted, ...webhooks }));
  app.use(deliveryRoutes(ctx));
  useAuthorRoutes(app, deps);
  app.use(agentRoutes(ctx));
  app.use(catalogRoutes(ctx));
  app.use(meAgentRoutes({ ctx, hosted, fileSecret: deps.fileSecret }));
  app.use(topupRoutes({ ctx }));
  app.use(payoutRoutes({ ctx, hosted }));
  if (deps.files) app.use(fileRoutes({ ctx, ...deps.files }));
  app.use(adminRoutes({ ctx }));
  if (deps.demo) app.use(demoRoutes({ ctx, ...deps.demo }));
  app.use(openApiRoutes({ hosted, ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}) }));
  app.use(logRoutes(ctx));
  if (deps.keySet) app.use(jwksRoutes(ctx.db, deps.keySet));
  app.use((_req, _res, next) => next(new HolonError('not_found', 'no such route')));
  app.use(errorHandler(ctx.log, deps.bodyLimitBytes));
}

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  useRequestGuards(app, deps);
  if (deps.rateLimits) useRateLimits(app, deps, deps.rateLimits);
  useRoutes(app, deps);
  return app;
}

/** Seconds a client is asked to wait (`Retry-After`) before trying again when the database could not be reached. */
const DATABASE_RETRY_AFTER_S = 1;

/**
 * Every error becomes `{error: {code, message, problems?}}`; bad input is a 4xx, never a stack trace. On /mcp the
 * answer is a JSON-RPC error instead (spec/mcp.md), with the same HTTP status and the REST code in `data`.
 */
function errorHandler(log: Logger, limit: number): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let e: HolonError;
    if (err instanceof HolonError) e = err;
    else if (err?.type === 'entity.parse.failed') e = new HolonError('invalid_json', 'the request body is not valid JSON');
    else if (err?.type === 'entity.too.large') e = new HolonError('body_too_large', `the request body is larger than ${limit} bytes`);
    else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500)
      e = new HolonError(codeOfHttpStatus(err.status), 'the request could not be read');
    else if (isDatabaseUnreachable(err)) {
      log.warn({ err: { message: (err as Error)?.message, name: (err as Error)?.name } }, 'database unreachable');
      e = databaseUnavailable();
    } else {
      log.error({ err: { message: (err as Error)?.message, name: (err as Error)?.name, stack: (err as Error)?.stack } }, 'unexpected error');
      e = new HolonError('gateway_error', 'the gateway failed; nothing was charged');
    }
    if (res.headersSent) return;
    const status = httpStatusOf(e.code);
    if (e.code === 'database_unavailable') res.set('Retry-After', String(DATABASE_RETRY_AFTER_S));
    if (req.path === '/mcp') {
      res.status(status).json(jsonRpcError(e, req.body));
      return;
    }
    res.status(status).json(e.toJSON());
  };
}

/** JSON-RPC 2.0 error codes for a refusal before the MCP server saw the message. */
function jsonRpcCode(e: HolonError, body: unknown): number {
  if (e.code === 'invalid_json') return -32700; // Parse error
  const status = httpStatusOf(e.code);
  if (status >= 500) return -32603; // Internal error
  const call = body && typeof body === 'object' && (body as { method?: unknown }).method === 'tools/call';
  if (e.code === 'invalid_request' && call && e.problems.length > 0 && e.problems.every((p) => p.path.startsWith('$.params'))) return -32602; // Invalid params
  if (status === 400 || status === 413 || status === 415) return -32600; // Invalid Request
  return SERVER_ERROR; // unauthorised, forbidden, rate limited
}

function jsonRpcError(e: HolonError, body: unknown): JsonRpcErrorBody {
  const id = body && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return jsonRpcErrorBody(jsonRpcCode(e, body), e.message, id, e.toJSON().error);
}
