/**
 * The API service (`holon api`): REST /v0 and the MCP server at /mcp on one HTTP listener (app.ts).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { CallWaiter } from '../../shared/calls/waiter.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import type { SuiteCatalog } from '../../shared/evaluation/suites.js';
import type { Config } from '../../shared/platform/config.js';
import { githubSettings } from '../../shared/hosted/github.js';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from '../../shared/platform/rate-limit.js';
import { MAX_FILE_BYTES } from '../../shared/files/store.js';
import { createApp, type ApiDeps } from './app.js';
import { createGatewayRuntimes } from '../../shared/runtimes/gateway-runtimes.js';
import { webhookSecrets } from '../../shared/webhooks/secrets.js';
import { createMcpEndpoint } from './mcp/server.js';
import { isLoopbackName } from './origins.js';

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
}

export interface ApiOptions {
  /** HOLON_FILE_SECRET, or the dev process's own: verifies file links (services/compose.ts). Without it, no /v0/files. */
  fileLinkSecret?: string;
  /** The evaluation suites: publishing queues their evaluations, the fixture links are served from them. */
  suites?: SuiteCatalog;
}

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

/** Listen on HOLON_HOST:HOLON_PORT; `stop` stops taking requests and waits for those in flight. */
async function listen(app: RequestListener, config: Config, mcp: { close(): Promise<void> }) {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(config.host, config.port, e)));
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const stop = async () => {
    // Stop taking requests first; in-flight requests finish. MCP sessions hold their streams open: close them.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await mcp.close();
    // Keep-alive connections become idle as their last response ends: close them as they do.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    await closed;
    clearInterval(idle);
  };
  return { server, port, stop };
}

export async function startApi(ctx: ServiceContext, config: Config, waiter: CallWaiter, options: ApiOptions = {}): Promise<StartedApi> {
  const release: StartedRole['release'] = [];
  const mcp = createMcpEndpoint({
    ctx,
    waiter,
    defaultMandate: config.mcpMandate,
    progressIntervalMs: config.mcpProgressMs,
    elicitationTimeoutMs: 10 * 60_000,
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
  const app = createApp({
    ...(rateLimits ? { rateLimits } : {}),
    mcp,
    ...(config.hosted ? { callbackGuard: { allowPrivate: config.allowPrivateEndpoints } } : {}),
    origins: {
      allowed: [config.publicUrl, config.siteUrl].filter((u): u is string => u !== undefined),
      loopbackPages: !config.hosted,
      loopbackHostOnly: !config.hosted && isLoopbackName(config.host),
      ...(config.siteUrl ? { site: config.siteUrl } : {}),
    },
    demo: { runtimes: demoRuntimes, limiter, trustProxy: config.trustProxy },
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    auth: { hosted: config.hosted, ...(config.adminKey ? { adminKey: config.adminKey } : {}), now: ctx.now },
    ctx,
    waiter,
    syncWaitMs: config.syncWaitS * 1000,
    signupCredit: config.signupCredit,
    bodyLimitBytes: config.bodyLimitBytes,
    github: { client: githubSettings(config), publicUrl: config.publicUrl },
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
  });
  const { server, port, stop } = await listen(app, config, mcp);
  return { server, port, stop: [stop], workers: [], release };
}
