/**
 * The composition root: whichever roles a process runs, started from the configuration against one database and
 * one messaging backend. `holon serve` runs all four in one process; `holon api`, `holon runner`, `holon settler`
 * and `holon evaluator` run one each against shared Postgres and Redis. Each role starts itself
 * (services/<role>/); this file only wires them and stops them in order: stop taking work, let workers finish,
 * release what they used, close the connections.
 */
import { buildRails, type RailsInputs } from '../shared/payments/rails.js';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../shared/platform/config.js';
import { openDatabase, type Database } from '../shared/db/connect.js';
import { DEFAULT_SETTINGS, type ServiceSettings, type ServiceContext, type StartedRole } from '../shared/context.js';
import { saveMandate } from '../shared/mandates/store.js';
import { creditSignup } from '../shared/ledger/demo-credit.js';
import { startYankFollower } from '../shared/publishing/yanks.js';
import { startPublishedFollower } from '../shared/registry/published.js';
import { syncSearchDocuments } from '../shared/catalogue/search-documents.js';
import { ensureAccount, PLATFORM_ACCOUNT } from '../shared/ledger/accounts.js';
import { createLogger, type Logger } from '../shared/platform/log.js';
import { createMessaging, type RedisFor } from '../shared/messaging/index.js';
import { RUN_QUEUE, SETTLE_QUEUE } from '../shared/calls/wire.js';
import { loadDevRegistry } from '../shared/registry/dev-registry.js';
import type { AgentVersion } from '../shared/registry/agent-version.js';
import { createRegistry } from '../shared/registry/registry.js';
import { loadMandateFiles } from '../shared/registry/mandate-files.js';
import { readSampleRecords, type SampleRecords } from '../shared/catalogue/sample-records.js';
import { createCallWaiter } from '../shared/calls/answer/waiter.js';
import { startApi, type OutboundGuard } from './api/start.js';
import { startRunner } from './runner/worker.js';
import { credentialLookup } from '../shared/publishing/credentials.js';
import type { FileLinkSigner } from '../shared/files/access.js';
import { startSettler } from './settler/worker.js';
import { createCallEngine } from '../shared/calls/engine.js';
import type { CallEngine } from '../shared/calls/engine-types.js';
import { recoverOrphanedCalls } from './settler/recovery.js';
import { generateWebhookSecret } from '../shared/webhooks/secrets.js';
import { startEvaluator } from './evaluator/worker.js';
import { loadSuites, type SuiteCatalog } from '../shared/evaluation/suites.js';
import { AGENTS_DIR, startDevAgentHost } from './cli/dev-agent-host.js';
import { createMetrics, type GatewayMetrics } from '../shared/platform/metrics.js';
import { startMetricsServer, type MetricsServer } from '../shared/platform/metrics-server.js';
import { startTracing } from '../shared/platform/tracing.js';
import { wireMetricSources } from './metrics-sources.js';
import { loadSigningKey, type SigningKey } from '../shared/signing/keys.js';
import { keySetOf, parseRetiredKeys } from '../shared/signing/key-set.js';
import { registerSigningKey } from '../shared/signing/key-store.js';
import { createLeaseManager } from '../shared/ledger/leases/manager.js';

export type Role = 'api' | 'runner' | 'settler' | 'evaluator';
export const ALL_ROLES: readonly Role[] = ['api', 'runner', 'settler', 'evaluator'];

export interface RunningGateway {
  config: Config;
  db: Database;
  context: ServiceContext;
  /** The call engine every role of this gateway hands its calls to (shared/calls/engine.ts). */
  engine: CallEngine;
  /** Set when the API runs. */
  port?: number;
  /** This gateway's metrics (GET /metrics). */
  metrics: GatewayMetrics;
  /** Set when HOLON_METRICS_PORT is: the port GET /metrics and /healthz answer on. */
  metricsPort?: number;
  /**
   * Dev mode with a settler: the one webhook signing secret (HOLON_CALLBACK_SECRET, else generated here), and whether it
   * was generated (the CLI prints it once on the start-up banner; it never goes to the structured log).
   */
  webhookSecret?: { secret: string; generated: boolean };
  server?: Server;
  /** The API's Express app, when the API runs here. */
  app?: Express;
  /** The gateway's signing key (shared/signing/keys.ts); its public half is in the JWKS. */
  signingKey: SigningKey;
  stop(): Promise<void>;
}

/**
 * The signing key and the public key set (shared/signing/), read before anything opens, like every setting; what
 * deserves a warning (a key of this process only) is logged once the log exists.
 */
async function signingKeys(config: Config) {
  const warnings: string[] = [];
  const key = await loadSigningKey(config, (message) => warnings.push(message));
  return { key, keySet: keySetOf(key, await parseRetiredKeys(config.retiredKeys)), warnings };
}

/** What a caller may hand a gateway ready-made instead of having it read them. */
export interface GatewayInputs {
  /**
   * The dev registry's agent versions, instead of reading the directories of HOLON_REGISTRY (no HOLON_EXCLUDE, no
   * agent host port applied): the gateway lists them in a registry of its own, which only its publishes and yanks change.
   */
  agents?: readonly AgentVersion[];
  /** Schemes the payment rails offer beyond @x402/evm's `exact` (tests register an `upto` scheme so). */
  payments?: RailsInputs;
  /**
   * Tests only: the resolver, route and trusted certificate of the guarded client the API fetches MCP clients'
   * metadata documents with (a self-signed test server standing in for a public one; shared/platform/guarded-net.ts).
   */
  outboundGuard?: OutboundGuard;
}

/** The platform's account; payments from outside, when HOLON_X402_NETWORK is set (shared/payments/rails.ts), and the chain's account. */
async function addAccountsAndRails(context: ServiceContext, config: Config, inputs: RailsInputs | undefined): Promise<void> {
  await ensureAccount(context.db, PLATFORM_ACCOUNT, 'platform');
  const payments = await buildRails(config.x402, { fx: config.fx, fileSecret: config.fileSecret }, inputs);
  if (!payments) return;
  context.payments = payments;
  await ensureAccount(context.db, payments.externalAccount, 'external');
}

/**
 * Budget leases (docs/ledger.md, "Budget leases"): an API process on Postgres, when HOLON_BUDGET_LEASE is set. The
 * stop returns them once the API has stopped admitting (`last`, before the pool closes).
 */
function addLeases(context: ServiceContext, config: Config, roles: readonly Role[], kind: Database['kind']): void {
  if (!roles.includes('api') || config.budgetLease <= 0n || kind === 'pglite') return;
  context.leases = createLeaseManager(context.db, { slice: config.budgetLease, idleMs: config.budgetLeaseIdleS * 1000, ttlMs: config.budgetLeaseTtlS * 1000 });
}

/** The dev registry: the agents given, else every manifest under the configured directories. */
async function devRegistry(config: Config, log: Logger, agents: readonly AgentVersion[] | undefined) {
  if (agents) return { registry: createRegistry(agents), problems: [] };
  const dirs = config.registryDirs.filter((d) => config.registryExplicit || existsSync(path.resolve(d)));
  // The shipped agents of agents/ are called on HOLON_AGENT_HOST_PORT, whatever port their manifests name (docs/mcp.md).
  const agentHost = { dir: AGENTS_DIR, port: config.agentHostPort };
  return loadDevRegistry(dirs, { exclude: config.exclude, log, agentHost, env: { HOLON_SEC_CONTACT: config.secContact } });
}

/** The parts of the messaging on a Redis of their own (HOLON_REDIS_URL_*): the run and settle queues by name, the rest. */
function redisParts({ redisFor }: Config): RedisFor {
  return { queue: { [RUN_QUEUE]: redisFor.run, [SETTLE_QUEUE]: redisFor.settle }, queues: redisFor.queues, store: redisFor.store, notifier: redisFor.notifier };
}

/** What every role runs on: the log, metrics and tracing, the database, the messaging backend, the registry. */
async function openFoundation(config: Config, roles: readonly Role[], sampleRecords: SampleRecords | undefined, inputs: GatewayInputs) {
  const everything = ALL_ROLES.every((r) => roles.includes(r));
  const name = everything ? 'gateway' : roles.join('+');
  const log = createLogger(name, config.logLevel);
  // One registry per gateway (tests run several in one process); tracing only with an OTLP endpoint.
  const metrics = createMetrics({ role: name });
  const tracing = startTracing(config.tracesUrl, `holon-${name}`, log);
  const db = await openDatabase(config.databaseUrl ? { url: config.databaseUrl, poolMax: config.dbPool } : { dir: config.dbDir });
  const messaging = await createMessaging({
    ...(config.redisUrl ? { redisUrl: config.redisUrl, redisFor: redisParts(config) } : {}),
    prefix: config.redisPrefix,
    logger: log,
    onJobStart: (queue, waitMs) => metrics.queueWaitSeconds.observe({ queue }, waitMs / 1000),
    tracing: tracing.enabled,
  });
  wireMetricSources(metrics, db.knex, messaging);
  const { registry, problems } = await devRegistry(config, log, inputs.agents);
  log.info({ agents: registry.list().length, invalid: problems.length }, 'registry loaded');
  if (sampleRecords)
    log.info({ file: config.recordsFile, agents: sampleRecords.size }, 'sample records loaded (HOLON_RECORDS): shown only for agents without measured runs');
  return { everything, name, log, metrics, tracing, db, messaging, registry };
}

/** The worker roles this process runs: the runner and the settler with the one call engine, the evaluator. */
async function startWorkerRoles(
  engine: CallEngine,
  config: Config,
  roles: readonly Role[],
  parts: { fileLinks: FileLinkSigner; suites: SuiteCatalog | undefined },
) {
  const { fileLinks, suites } = parts;
  const context = engine.resources;
  // Dev mode signs every webhook with one local secret: HOLON_CALLBACK_SECRET, else one of this process (docs/webhooks.md).
  const devSecret = config.webhooks.devSecret ?? generateWebhookSecret();
  const settler = roles.includes('settler')
    ? startSettler(engine, {
        concurrency: config.settlerConcurrency,
        guardCallbacks: config.hosted && !config.allowPrivateEndpoints,
        webhooks: { hosted: config.hosted, devSecret, settings: config.webhooks, ...(config.fileSecret ? { fileSecret: config.fileSecret } : {}) },
        retentionDays: config.deliveryRetentionDays,
        checkpointS: config.checkpointS,
      })
    : undefined;
  const runner = roles.includes('runner')
    ? await startRunner(engine, {
        concurrency: config.runnerConcurrency,
        allowPrivateEndpoints: config.allowPrivateEndpoints,
        ...(config.hosted ? { credentials: credentialLookup(context.db, config.fileSecret) } : {}),
        fileLinks,
      })
    : undefined;
  const evaluator = roles.includes('evaluator')
    ? await startEvaluator(context, {
        concurrency: config.evaluatorConcurrency,
        suites: suites!,
        fileLinks,
        allowPrivateEndpoints: config.allowPrivateEndpoints,
        ...(config.hosted ? { credentials: credentialLookup(context.db, config.fileSecret) } : {}),
      })
    : undefined;
  return { devSecret, settler, runner, evaluator };
}

/**
 * What the API, the runners and the evaluators share: the file link signer, and the suites, checked once (a broken
 * one is logged and skipped): the API queues their evaluations at publish time and serves their fixtures; the
 * evaluator runs them.
 */
async function fileLinksAndSuites(config: Config, roles: readonly Role[], log: Logger) {
  const fileLinks = fileLinkSigner(config, log, roles.includes('api') !== roles.includes('runner') || roles.includes('api') !== roles.includes('evaluator'));
  const suites =
    roles.includes('api') || roles.includes('evaluator')
      ? await loadSuites({ publicDir: config.evalsDir, ...(config.privateEvalsDir ? { privateDir: config.privateEvalsDir } : {}) }, log)
      : undefined;
  return { fileLinks, suites };
}

/**
 * An API process searches: the search documents of what it lists are in Postgres before it answers
 * (shared/catalogue/search-documents.ts: its shipped agents, published versions listed before the table existed).
 */
async function writeSearchDocuments(context: ServiceContext, roles: readonly Role[]): Promise<void> {
  if (!roles.includes('api')) return;
  const written = await syncSearchDocuments(context);
  if (written > 0) context.log.info({ written }, 'search documents written');
}

/** The settings every role's context reads, from the process's config. */
function serviceSettings(config: Config, sampleRecords: ServiceSettings['sampleRecords']): ServiceSettings {
  return {
    ...DEFAULT_SETTINGS,
    resultTtlS: config.resultTtlS,
    inputTtlS: config.inputTtlS,
    streamResumeS: config.streamResumeS,
    rankingMinPayers: config.rankingMinPayers,
    payerRule: config.hosted ? 'vouched_payers' : 'every_payer',
    logOrigin: config.logOrigin,
    ...(sampleRecords ? { sampleRecords } : {}),
  };
}

export async function startGateway(roles: readonly Role[], overrides: Partial<Config> = {}, inputs: GatewayInputs = {}): Promise<RunningGateway> {
  const config = loadConfig(process.env, overrides);
  // HOLON_RECORDS is checked before anything opens: an invalid file is a ConfigError, like any invalid setting.
  const sampleRecords = config.recordsFile ? readSampleRecords(config.recordsFile) : undefined;
  // Every role signs: the API refusals' receipts, the settler settlements' and the log's checkpoints.
  const signing = await signingKeys(config);
  const { everything, log, metrics, tracing, db, messaging, registry } = await openFoundation(config, roles, sampleRecords, inputs);
  for (const warning of signing.warnings) log.warn(warning);
  await registerSigningKey(db.knex, signing.key);
  const context: ServiceContext = {
    db: db.knex,
    registry,
    messaging,
    log,
    settings: serviceSettings(config, sampleRecords),
    now: () => Date.now(),
    signingKey: signing.key,
    metrics,
  };
  await addAccountsAndRails(context, config, inputs.payments);
  addLeases(context, config, roles, db.kind);
  if (config.mandatesDir) await loadMandates(context, config, log);

  // Published versions join the registry of every process, yanked ones leave it, at start-up and as they happen
  // (shared/registry/published.ts, shared/publishing/yanks.ts): published first, so a yanked one is listed, then hidden.
  const published = await startPublishedFollower(context);
  const yanks = await startYankFollower(context);
  await writeSearchDocuments(context, roles);
  // `holon serve` in dev also serves the MCP agents of agents/ (services/cli/dev-agent-host.ts); it closes after
  // the runners, so a call in flight still reaches its agent.
  const host = everything && !config.production && config.agentHost ? await startDevAgentHost(registry, log) : undefined;
  const { fileLinks, suites } = await fileLinksAndSuites(config, roles, log);
  // One subscription per process waits for calls to finish: synchronous answers and delegated calls.
  const waiter = await createCallWaiter(db.knex, messaging.notifier);
  // The one call engine, before any role: a call closed in a process that runs a settler (by its runner, a cancel,
  // the sweeper) is settled right here, with no settle queue hop (`holon serve`); elsewhere it goes through the
  // settle queue. Every role gets this one engine, so the order they start in changes nothing.
  const engine = createCallEngine(context, { settlesHere: roles.includes('settler'), waiter });

  const { devSecret, settler, runner, evaluator } = await startWorkerRoles(engine, config, roles, { fileLinks, suites });
  // The in-process queue died with the last process: what it held is orphaned (services/settler/recovery.ts).
  if (messaging.kind === 'memory' && runner && settler) await recoverOrphanedCalls(engine);
  const started: StartedRole[] = [runner, settler, evaluator].filter((r): r is StartedRole => r !== undefined);
  // The metrics port answers /healthz until the very end: a draining process is alive.
  let metricsServer: MetricsServer | undefined;
  const stopStarted = (api?: StartedRole): Promise<void> =>
    stopInOrder({ api, started, runner, evaluator, settler, followers: [yanks, published], host, log, graceS: config.stopGraceS }, [
      async () => context.leases?.close(),
      () => waiter.close(),
      () => messaging.close(),
      () => db.close(),
      async () => metricsServer?.close(),
      () => tracing.shutdown(),
    ]);
  let api: Awaited<ReturnType<typeof startApi>> | undefined;
  try {
    const apiOptions = {
      fileLinkSecret: fileLinks.secret,
      ...(suites ? { suites } : {}),
      keySet: signing.keySet,
      ...(inputs.outboundGuard ? { outboundGuard: inputs.outboundGuard } : {}),
    };
    api = roles.includes('api') ? await startApi(engine, config, apiOptions) : undefined;
    if (config.metricsPort !== undefined) metricsServer = await startMetricsServer(metrics, { host: config.metricsHost, port: config.metricsPort, log });
  } catch (e) {
    // Nothing may keep the process alive after a failed start (a taken port): stop what already runs.
    await stopStarted(api);
    throw e;
  }
  if (api) fileLinks.listening(api.port);
  if (api) log.info({ host: config.host, port: api.port, database: db.kind, queue: messaging.kind }, 'holon api listening');
  if (db.kind === 'pglite' || messaging.kind === 'memory') {
    log.warn('embedded database or in-process queue: for trying Holon out, not for production');
  }

  return {
    config,
    db,
    context,
    engine,
    metrics,
    ...(metricsServer ? { metricsPort: metricsServer.port } : {}),
    ...(api ? { port: api.port, server: api.server, app: api.app } : {}),
    signingKey: signing.key,
    ...(settler && !config.hosted ? { webhookSecret: { secret: devSecret, generated: config.webhooks.devSecret === undefined } } : {}),
    stop: () => stopStarted(api),
  };
}

/** What a gateway stops: its roles (the API apart), its registry followers, the dev agent host. */
interface Stoppable {
  api: StartedRole | undefined;
  /** The worker roles, runner, settler, evaluator (each also named, for the order of release). */
  started: readonly StartedRole[];
  runner: StartedRole | undefined;
  evaluator: StartedRole | undefined;
  settler: StartedRole | undefined;
  followers: Array<() => Promise<void>>;
  host: { close(): Promise<void> } | undefined;
  log: Logger;
  graceS: number;
}

/**
 * The stop, in order (docs/operating.md, "Stopping and draining"): the API stops taking requests and answers those it
 * holds; followers, watchers and sweeps stop; the workers take no new job and finish what they run; once the grace
 * (HOLON_STOP_GRACE_S, counted from the stop) has passed, what still runs is handed back; then what the work needed
 * closes — the runners' cancel watcher and runtimes, the evaluators' runtimes, the agent host, the settler's client,
 * the API's limiter —, and `last`: the waiter, Redis, the pool, the metrics port, tracing.
 */
async function stopInOrder(g: Stoppable, last: Array<() => Promise<unknown>>): Promise<void> {
  const { api, started } = g;
  const roles = [...(api ? [api] : []), ...started];
  const stops = [...(api?.stop ?? []), ...g.followers, ...started.flatMap((r) => r.stop)];
  const release = [
    ...(g.runner?.release ?? []),
    ...(g.evaluator?.release ?? []),
    ...(g.host ? [() => g.host!.close()] : []),
    ...(g.settler?.release ?? []),
    ...(api?.release ?? []),
  ];
  const grace = setTimeout(() => {
    g.log.warn({ grace_s: g.graceS }, 'the stop grace has passed: handing back what still runs');
    for (const handBack of roles.flatMap((r) => r.handBack ?? [])) handBack();
  }, g.graceS * 1000);
  try {
    for (const stop of stops) await stop();
    // Workers finish what they run, or hand it back at the grace; then what they needed closes.
    await Promise.all([...(api?.workers ?? []), ...started.flatMap((r) => r.workers)].map((w) => w.close()));
  } finally {
    clearTimeout(grace);
  }
  for (const close of release) await close();
  for (const close of last) await close();
}

/**
 * Signed file links (shared/files/, docs/files.md): HOLON_FILE_SECRET, or without it a random secret of this process —
 * enough for `holon serve`, where runners sign and the API verifies in one process; an API and runners in separate
 * processes need the setting. Links point at HOLON_PUBLIC_URL, else at this process's API once it listens, else at
 * PORT on loopback (a runner started on its own beside a dev API).
 */
function fileLinkSigner(config: Config, log: Logger, apart: boolean): FileLinkSigner & { listening(port: number): void } {
  if (!config.fileSecret && apart) log.warn('HOLON_FILE_SECRET is not set: file links signed here will not be accepted by an API in another process');
  let port = config.port;
  const loopback = config.host === '0.0.0.0' || config.host === '::' || config.host === '' ? '127.0.0.1' : config.host;
  const host = loopback.includes(':') ? `[${loopback}]` : loopback;
  return {
    secret: config.fileSecret ?? randomBytes(32).toString('base64url'),
    origin: () => config.publicUrl ?? `http://${host}:${port}`,
    listening: (p) => {
      port = p;
    },
  };
}

async function loadMandates(ctx: ServiceContext, config: Config, log: Logger): Promise<void> {
  const { mandates, problems } = await loadMandateFiles(config.mandatesDir!, { log });
  for (const m of mandates) {
    try {
      await saveMandate(ctx.db, m, ctx.signingKey);
      await creditSignup(ctx.db, m.issuer, config.signupCredit);
    } catch (e) {
      log.warn({ mandate: m.id, err: { message: (e as Error).message } }, 'mandate not loaded');
    }
  }
  log.info({ mandates: mandates.length, invalid: problems.length }, 'mandates loaded');
}
