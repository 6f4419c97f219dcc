/**
 * Assembling the gateway's services from the configuration. `holon serve` runs them all in one process;
 * `holon api`, `holon runner`, `holon settler` run one each against shared Postgres and Redis.
 */
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../shared/platform/config.js';
import { openDatabase, type Database } from '../shared/db/connect.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../shared/context.js';
import { CALLBACK_QUEUE, RUN_QUEUE, SETTLE_QUEUE, type CallJob } from '../shared/calls/jobs.js';
import { saveMandate, creditSignup } from '../shared/mandates/store.js';
import { runCall } from './runner/run-call.js';
import { settleCall } from '../shared/settlement/settle.js';
import { startSweeper } from './settler/sweeper.js';
import { recoverOrphanedCalls } from './settler/recovery.js';
import { startYankFollower } from '../shared/hosted/yanks.js';
import { createGuardedDispatcher } from '../shared/platform/guarded-net.js';
import { deliverCallback } from './settler/callbacks.js';
import { ensureAccount, PLATFORM_ACCOUNT } from '../shared/ledger/accounts.js';
import { createLogger, type Logger } from '../shared/platform/log.js';
import { createMessaging } from '../shared/messaging/index.js';
import type { Worker } from '../shared/messaging/types.js';
import { loadDevRegistry } from '../shared/registry/dev-registry.js';
import { loadMandateFiles } from '../shared/registry/mandate-files.js';
import { createRuntimes } from './runner/runtimes/index.js';
import { createApp, type ApiDeps } from './api/app.js';
import { createMemoryRateLimiter, createRedisRateLimiter } from '../shared/platform/rate-limit.js';
import { createMcpEndpoint } from './api/mcp/server.js';
import { startDevAgentHost } from './cli/dev-agent-host.js';
import { createCallWaiter } from '../shared/calls/waiter.js';
import { createCancelWatcher } from './runner/cancel-watcher.js';

export type Role = 'api' | 'runner' | 'settler';
export const ALL_ROLES: readonly Role[] = ['api', 'runner', 'settler'];

export interface RunningGateway {
  config: Config;
  db: Database;
  context: ServiceContext;
  /** Set when the API runs. */
  port?: number;
  server?: Server;
  stop(): Promise<void>;
}

export async function startGateway(roles: readonly Role[], overrides: Partial<Config> = {}): Promise<RunningGateway> {
  const config = loadConfig(process.env, overrides);
  const log = createLogger(roles.length === ALL_ROLES.length ? 'gateway' : roles.join('+'), config.logLevel);
  const db = await openDatabase(config.databaseUrl ? { url: config.databaseUrl, poolMax: config.dbPool } : { dir: config.dbDir });
  const messaging = await createMessaging({
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    prefix: config.redisPrefix,
    logger: log,
  });
  const dirs = config.registryDirs.filter((d) => config.registryExplicit || existsSync(path.resolve(d)));
  const { registry, problems } = await loadDevRegistry(dirs, { exclude: config.exclude, log });
  log.info({ agents: registry.list().length, invalid: problems.length }, 'registry loaded');
  const context: ServiceContext = {
    db: db.knex,
    registry,
    messaging,
    log,
    settings: { ...DEFAULT_SETTINGS, resultTtlS: config.resultTtlS },
    now: () => Date.now(),
  };
  await ensureAccount(db.knex, PLATFORM_ACCOUNT, 'platform');
  if (config.mandatesDir) await loadMandates(context, config, log);

  const stops: Array<() => Promise<void>> = [];
  // Yanked versions leave the registry of every process, at start-up and as they happen (shared/hosted/yanks.ts).
  stops.push(await startYankFollower(context));
  const closeLast: Array<() => Promise<void>> = [];
  // `holon serve` in dev also serves the MCP agents of agents/ (services/cli/dev-agent-host.ts).
  if (roles.length === ALL_ROLES.length && !config.production && config.agentHost) {
    const host = await startDevAgentHost(registry, log);
    // Closed after the runners: a call in flight still reaches its agent.
    if (host) closeLast.push(() => host.close());
  }
  const workers: Worker[] = [];
  // One subscription per process waits for calls to finish: synchronous answers and delegated calls.
  const waiter = await createCallWaiter(db.knex, messaging.notifier);
  if (roles.includes('runner')) {
    const cancels = await createCancelWatcher(messaging.notifier, messaging.store);
    stops.push(() => cancels.close());
    const runtimes = createRuntimes();
    // After the runners stopped: pooled MCP sessions end with a DELETE.
    closeLast.unshift(async () => runtimes.close?.());
    const runner = { ...context, runtimes, waiter, cancels };
    workers.push(messaging.queues.worker<CallJob>(RUN_QUEUE, (job) => runCall(runner, job.callId), { concurrency: config.runnerConcurrency }));
  }
  if (roles.includes('settler')) {
    workers.push(messaging.queues.worker<CallJob>(SETTLE_QUEUE, async (job) => { await settleCall(context, job.callId); }, { concurrency: config.settlerConcurrency }));
    // Hosted: callbacks go out through the guarded client (no private addresses, checked on every connection).
    const guarded = config.hosted && !config.allowPrivateEndpoints ? createGuardedDispatcher() : undefined;
    if (guarded) closeLast.push(() => guarded.close());
    workers.push(messaging.queues.worker<CallJob>(CALLBACK_QUEUE, (job) => deliverCallback(context, job.callId, guarded ? { dispatcher: guarded } : {}), { concurrency: 4 }));
    const sweeper = startSweeper(context);
    stops.push(() => sweeper.stop());
  }
  // The in-process queue died with the last process: what it held is orphaned (recovery.ts).
  if (messaging.kind === 'memory' && roles.includes('runner') && roles.includes('settler')) await recoverOrphanedCalls(context);
  let server: Server | undefined;
  let port: number | undefined;
  if (roles.includes('api')) {
    const mcp = createMcpEndpoint({
      gateway: context,
      waiter,
      defaultMandate: config.mcpMandate,
      progressIntervalMs: config.mcpProgressMs,
      elicitationTimeoutMs: 10 * 60_000,
    });
    let rateLimits: ApiDeps['rateLimits'];
    if (config.hosted) {
      const limiter = config.redisUrl ? createRedisRateLimiter(config.redisUrl, config.redisPrefix) : createMemoryRateLimiter();
      closeLast.push(() => limiter.close());
      const minute = 60_000;
      rateLimits = {
        limiter,
        trustProxy: config.trustProxy,
        perAddress: { limit: config.rateLimits.perAddressPerMin, windowMs: minute },
        perAccount: { limit: config.rateLimits.perAccountPerMin, windowMs: minute },
        signups: { limit: config.rateLimits.signupsPerHour, windowMs: 60 * minute },
      };
    }
    const app = createApp({
      ...(rateLimits ? { rateLimits } : {}),
      mcp,
      ...(config.hosted ? { callbackGuard: { allowPrivate: config.allowPrivateEndpoints } } : {}),
      auth: { hosted: config.hosted, ...(config.adminKey ? { adminKey: config.adminKey } : {}), now: context.now },
      gateway: context,
      waiter,
      syncWaitMs: config.syncWaitS * 1000,
      signupCredit: config.signupCredit,
      bodyLimitBytes: config.bodyLimitBytes,
    });
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.port, '0.0.0.0', () => resolve(s));
      s.once('error', reject);
    });
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : config.port;
    const s = server;
    stops.unshift(async () => {
      // Stop taking requests first; in-flight requests finish. MCP sessions hold their streams open: close them.
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      await mcp.close();
      // Keep-alive connections become idle as their last response ends: close them as they do.
      const idle = setInterval(() => s.closeIdleConnections(), 50);
      await closed;
      clearInterval(idle);
    });
    log.info({ port, database: db.kind, queue: messaging.kind }, 'holon api listening');
  }
  if (db.kind === 'pglite' || messaging.kind === 'memory') {
    log.warn('embedded database or in-process queue: for trying Holon out, not for production');
  }
  return {
    config,
    db,
    context,
    ...(port !== undefined ? { port } : {}),
    ...(server ? { server } : {}),
    stop: async () => {
      for (const stop of stops) await stop();
      // Workers finish what they run (BullMQ hands back what it cannot finish), then connections close.
      await Promise.all(workers.map((w) => w.close()));
      for (const close of closeLast) await close();
      await waiter.close();
      await messaging.close();
      await db.close();
    },
  };
}

async function loadMandates(ctx: ServiceContext, config: Config, log: Logger): Promise<void> {
  const { mandates, problems } = await loadMandateFiles(config.mandatesDir!, { log });
  for (const m of mandates) {
    try {
      await saveMandate(ctx.db, m);
      await creditSignup(ctx.db, m.issuer, config.signupCredit, 'EUR');
    } catch (e) {
      log.warn({ mandate: m.id, err: { message: (e as Error).message } }, 'mandate not loaded');
    }
  }
  log.info({ mandates: mandates.length, invalid: problems.length }, 'mandates loaded');
}
