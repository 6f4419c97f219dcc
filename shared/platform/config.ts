/**
 * Every environment variable the gateway reads, parsed and validated in one place at start-up.
 * Command-line options override the environment. SETTINGS (below) describes each one: its default, what it does,
 * who reads it; docs/configuration.md is generated from it (`node --import tsx scripts/config-docs.ts`), and
 * tests/unit/config-docs.test.ts fails when the two disagree or a variable read here is missing from it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tryParseAmount } from '../core/money.js';
import { MIN_SECRET_LENGTH, secretWeakness } from '../core/secret-strength.js';

export interface Config {
  port: number;
  /**
   * The address the API listens on (HOST, `--host`): loopback in dev mode, where nothing asks for a key; every
   * interface (0.0.0.0) in hosted and production mode, where a container or a proxy sits in front.
   */
  host: string;
  /** Postgres URL; absent = PGlite in `dbDir`. */
  databaseUrl?: string;
  /** PGlite data directory. */
  dbDir: string;
  /** Redis URL; absent = the in-process queue. */
  redisUrl?: string;
  /** Key prefix in Redis, so two gateways can share one Redis. */
  redisPrefix: string;
  /** Directories of the dev registry. */
  registryDirs: string[];
  /** True when the registry directories were named (HOLON_REGISTRY / --registry), not defaulted. */
  registryExplicit: boolean;
  /** Agent ids never listed (HOLON_EXCLUDE). */
  exclude: string[];
  /**
   * Directory of mandate files loaded at start (HOLON_MANDATES, `--mandates`). `holon serve` on a dev gateway
   * defaults it to examples/mandates (devMandatesDir); every other role and hosted mode load none unless named.
   */
  mandatesDir?: string;
  /** HOLON_RECORDS: a JSON file of sample Agent Records, read at start (shared/catalogue/sample-records.ts); absent = off. */
  recordsFile?: string;
  /** Demo credit for a new issuer, EUR micro-units. */
  signupCredit: bigint;
  /** How long a finished call's output waits for pickup. */
  resultTtlS: number;
  /** HOLON_DELIVERY_RETENTION_DAYS: finished webhook deliveries and MCP tasks of final calls are deleted after this (default 30). */
  deliveryRetentionDays: number;
  /** HOLON_RANKING_MIN_PAYERS: distinct counted payers before a measured success rate moves the ranking. */
  rankingMinPayers: number;
  /** HOLON_SEC_CONTACT: the contact holon-labs/sec-company sends EDGAR; the registry lists the agent only with it. */
  secContact?: string;
  /** Longest synchronous wait before answering 202. */
  syncWaitS: number;
  /**
   * HOLON_STOP_GRACE_S: how long a stopping process lets what it holds finish (runs, evaluations, synchronous answers)
   * before it hands it back (services/compose.ts).
   */
  stopGraceS: number;
  /** The API's HTTP server: the longest a client may take to send its headers, its whole request, and an idle keep-alive. */
  headersTimeoutS: number;
  requestTimeoutS: number;
  keepAliveTimeoutS: number;
  bodyLimitBytes: number;
  /** HOLON_FILE_QUOTA_BYTES: bytes of live uploaded files per account (default 200 MB, gateway.md §7; shared/files/store.ts checks it). */
  fileQuotaBytes: number;
  runnerConcurrency: number;
  settlerConcurrency: number;
  /** Evaluation jobs one evaluator runs at once (HOLON_EVALUATOR_CONCURRENCY). */
  evaluatorConcurrency: number;
  /** The public evaluation suites (HOLON_EVALS, default the repository's `evals/`) and the private ones (HOLON_PRIVATE_EVALS). */
  evalsDir: string;
  privateEvalsDir?: string;
  /** Largest Postgres pool per process (HOLON_DB_POOL). */
  dbPool: number;
  /** Hosted mode (`--hosted`, HOLON_HOSTED=1): accounts, API keys and principals (gateway.md §7). */
  hosted: boolean;
  /** Dev mode: `holon serve` runs the reference MCP agent host for agents/ (HOLON_AGENT_HOST=0 turns it off). */
  agentHost: boolean;
  /**
   * HOLON_AGENT_HOST_PORT: the reference MCP agent host's port on 127.0.0.1 (default 7474). The shipped manifests of
   * agents/ name http://127.0.0.1:7474/mcp; the registry points them at this port instead (shared/registry/agent-host.ts).
   */
  agentHostPort: number;
  /** Dev mode: the mandate of an MCP connection that names none (HOLON_MCP_MANDATE). */
  mcpMandate: string;
  /** How often /mcp's call_agent reports progress (HOLON_MCP_PROGRESS_MS). */
  mcpProgressMs: number;
  production: boolean;
  logLevel: string;
  /** HOLON_TRUST_PROXY=1: the client address is the last `X-Forwarded-For` entry (services/api/client-address.ts). */
  trustProxy: boolean;
  /** HOLON_PUBLIC_URL: the public origin (https in production), no trailing slash; signed file links point there. */
  publicUrl?: string;
  /** HOLON_SITE_URL: the public site (https in production), no trailing slash. */
  siteUrl?: string;
  /** HOLON_FILE_SECRET: signs file links (32+ characters in production). */
  fileSecret?: string;
  /** HOLON_SIGNING_KEY: the Ed25519 private key (JWK or PKCS#8 PEM) receipts are signed with, read by shared/signing/keys.ts. */
  signingKey?: string;
  /** HOLON_RETIRED_KEYS: a JSON array of the public JWKs that signed before, each with `retired_at` (shared/signing/key-set.ts). */
  retiredKeys?: string;
  /** HOLON_LOG_ORIGIN: the receipt log's origin, its checkpoints' first line; default `<host of HOLON_PUBLIC_URL>/receipts`. */
  logOrigin: string;
  /** HOLON_CHECKPOINT_S: how often the settler signs a new checkpoint of the receipt log while receipts arrive (default 10). */
  checkpointS: number;
  /** HOLON_ADMIN_KEY: the operator key (32+ characters whenever set). */
  adminKey?: string;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: published agents may live on private addresses (refused in production). */
  allowPrivateEndpoints: boolean;
  /** HOLON_RATE_ADDRESS_PER_MIN, HOLON_RATE_ACCOUNT_PER_MIN, HOLON_RATE_SIGNUPS_PER_HOUR. */
  rateLimits: {
    perAddressPerMin: number;
    perAccountPerMin: number;
    signupsPerHour: number;
    publishesPerHour: number;
    draftsPerHour: number;
    evaluationsPerHour: number;
  };
  /** HOLON_GITHUB_URL: GitHub's web origin (default https://github.com): `<it>/login/oauth/authorize` and `/access_token`. */
  githubUrl: string;
  /** HOLON_GITHUB_API_URL: GitHub's REST API (default https://api.github.com). */
  githubApiUrl: string;
  /** HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET (never logged): without both, GitHub sign-in is off (503). */
  githubClientId?: string;
  githubClientSecret?: string;
  /** HOLON_GITHUB_TIMEOUT_MS: the longest wait for one GitHub request (default 10000). */
  githubTimeoutMs: number;
  /** Webhooks (docs/webhooks.md): the schedule, the attempt timeout, the rotation window, dev mode's one secret. */
  webhooks: WebhookSettings;
  /**
   * HOLON_METRICS_PORT: GET /metrics and GET /healthz on a port of their own, in any role
   * (shared/platform/metrics-server.ts); absent = off, 0 = any free port. No key: for the cluster's network only.
   */
  metricsPort?: number;
  /** HOLON_METRICS_HOST: the metrics port's address; default like HOST: loopback in dev, 0.0.0.0 hosted or in production. */
  metricsHost: string;
  /**
   * Where traces go (OTLP over HTTP, shared/platform/tracing.ts): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
   * OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`; absent = no tracing at all.
   */
  tracesUrl?: string;
}

export interface WebhookSettings {
  /**
   * Dev mode's one signing secret (HOLON_CALLBACK_SECRET, `whsec_<base64>`); absent = generated at start-up and
   * printed once on the start-up banner. Hosted mode signs with each account's own secrets and ignores it.
   */
  devSecret?: string;
  /** HOLON_WEBHOOK_SCHEDULE: the delay before each attempt, ms (default the Standard Webhooks schedule). */
  scheduleMs: readonly number[];
  /** HOLON_WEBHOOK_TIMEOUT_MS: the longest one attempt may take (default 15000). */
  attemptTimeoutMs: number;
  /** HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS: the longest wait for the answer's headers (default 5000, at most the attempt's). */
  firstByteTimeoutMs: number;
  /** HOLON_WEBHOOK_ACCOUNT_INFLIGHT: attempts of one account in flight at once, per settler process (default 4). */
  accountInFlight: number;
  /** HOLON_WEBHOOK_BREAKER_FAILURES: a host's consecutive failures that open its circuit breaker (default 5). */
  breakerFailures: number;
  /** HOLON_WEBHOOK_BREAKER_COOLDOWN_MS: how long an open breaker holds its host's attempts before one probe (default 30000). */
  breakerCoolDownMs: number;
  /** HOLON_WEBHOOK_ROTATION_WINDOW_S: how long the old secret still signs after a rotation (default 86400). */
  rotationWindowS: number;
  /** HOLON_RATE_REDELIVERIES_PER_HOUR: re-sends (POST /v0/calls/{id}/deliveries) per account and hour (default 30). */
  redeliveriesPerHour: number;
}

/** The Standard Webhooks retry schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_WEBHOOK_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,14h,20h,24h';

/** `whsec_` and the base64 of at least 24 bytes: what standardwebhooks accepts and what the gateway generates. */
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `0,5s,5m,…` → milliseconds; undefined when any item is not a duration (`<n>ms|s|m|h`, or a bare 0). */
export function parseDurations(text: string): number[] | undefined {
  const out: number[] = [];
  for (const item of splitList(text)) {
    const m = /^([0-9]+)(ms|s|m|h)?$/.exec(item);
    if (!m || (m[2] === undefined && m[1] !== '0')) return undefined;
    out.push(Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']!);
  }
  return out.length > 0 ? out : undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** HOLON_REDIS_PREFIX's default: every Redis name starts `holon:` (shared/messaging/ephemeral.ts namespaceOf). */
export const DEFAULT_REDIS_PREFIX = 'holon';
const DEFAULT_REGISTRY = ['agents', 'examples'];
/** `holon serve`'s mandates on a dev gateway when neither `--mandates` nor HOLON_MANDATES names any. */
const DEV_MANDATES_DIR = 'examples/mandates';
/** The reference MCP agent host's port, the one the shipped manifests name (HOLON_AGENT_HOST_PORT changes it). */
export const DEFAULT_AGENT_HOST_PORT = 7474;
const HOSTED_REGISTRY = ['agents'];
export const DEFAULT_EXCLUDE = ['holon-labs/summarize', 'holon-labs/sec-company'];
/**
 * Listed (not in HOLON_EXCLUDE), holon-labs/sec-company needs HOLON_SEC_CONTACT, which production requires to be an
 * email address: the HTML standard's valid one, with a dot in its domain (agents/sec-company/tool.mjs, the same pattern).
 */
const SEC_COMPANY = 'holon-labs/sec-company';
const SEC_CONTACT = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = nonEmpty(env[name]);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`);
      return fallback;
    }
    return n;
  };
  const databaseUrl = overrides.databaseUrl ?? nonEmpty(env.DATABASE_URL);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// URL');
  const redisUrl = overrides.redisUrl ?? nonEmpty(env.REDIS_URL);
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must be a redis:// URL');
  const redisPrefix = nonEmpty(env.HOLON_REDIS_PREFIX) ?? DEFAULT_REDIS_PREFIX;
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(redisPrefix)) problems.push('HOLON_REDIS_PREFIX must be 1 to 64 of letters, digits, "_", "." and "-"');
  let signupCredit = 5_000_000n;
  const creditRaw = nonEmpty(env.HOLON_SIGNUP_CREDIT);
  if (creditRaw !== undefined) {
    const r = tryParseAmount(creditRaw);
    if (r.ok) signupCredit = r.value;
    else problems.push(`HOLON_SIGNUP_CREDIT ${r.message}`);
  }
  const registryRaw = nonEmpty(env.HOLON_REGISTRY);
  const production = env.NODE_ENV === 'production';
  const config: Config = {
    port: int('PORT', 8080, 0, 65535),
    host: nonEmpty(env.HOST) ?? '',
    databaseUrl,
    dbDir: path.resolve(nonEmpty(env.HOLON_DB) ?? '.holon/db'),
    redisUrl,
    redisPrefix,
    registryDirs: registryRaw ? splitList(registryRaw) : DEFAULT_REGISTRY,
    registryExplicit: registryRaw !== undefined,
    exclude: env.HOLON_EXCLUDE === undefined ? DEFAULT_EXCLUDE : splitList(env.HOLON_EXCLUDE),
    mandatesDir: nonEmpty(env.HOLON_MANDATES),
    ...(nonEmpty(env.HOLON_RECORDS) ? { recordsFile: path.resolve(nonEmpty(env.HOLON_RECORDS)!) } : {}),
    signupCredit,
    resultTtlS: int('HOLON_RESULT_TTL_S', 600, 1, 86_400),
    deliveryRetentionDays: int('HOLON_DELIVERY_RETENTION_DAYS', 30, 1, 3650),
    rankingMinPayers: int('HOLON_RANKING_MIN_PAYERS', 3, 1, 1_000_000),
    ...(nonEmpty(env.HOLON_SEC_CONTACT) ? { secContact: nonEmpty(env.HOLON_SEC_CONTACT)! } : {}),
    syncWaitS: int('HOLON_SYNC_WAIT_S', 60, 1, 600),
    stopGraceS: int('HOLON_STOP_GRACE_S', 300, 0, 3600),
    headersTimeoutS: int('HOLON_HEADERS_TIMEOUT_S', 20, 1, 600),
    requestTimeoutS: int('HOLON_REQUEST_TIMEOUT_S', 120, 1, 3600),
    keepAliveTimeoutS: int('HOLON_KEEPALIVE_TIMEOUT_S', 5, 1, 600),
    bodyLimitBytes: int('HOLON_BODY_LIMIT', 1_048_576, 1024, 100 * 1_048_576),
    fileQuotaBytes: int('HOLON_FILE_QUOTA_BYTES', 200 * 1_048_576, 1024, 1_000_000 * 1_048_576),
    runnerConcurrency: int('HOLON_RUNNER_CONCURRENCY', 32, 1, 1000),
    settlerConcurrency: int('HOLON_SETTLER_CONCURRENCY', 32, 1, 200),
    evaluatorConcurrency: int('HOLON_EVALUATOR_CONCURRENCY', 2, 1, 100),
    evalsDir: path.resolve(nonEmpty(env.HOLON_EVALS) ?? 'evals'),
    ...(nonEmpty(env.HOLON_PRIVATE_EVALS) ? { privateEvalsDir: path.resolve(env.HOLON_PRIVATE_EVALS!) } : {}),
    dbPool: int('HOLON_DB_POOL', 10, 2, 500),
    hosted: isHostedValue(env.HOLON_HOSTED),
    agentHost: !['0', 'off', 'false'].includes((nonEmpty(env.HOLON_AGENT_HOST) ?? '1').toLowerCase()),
    agentHostPort: int('HOLON_AGENT_HOST_PORT', DEFAULT_AGENT_HOST_PORT, 1, 65535),
    mcpMandate: nonEmpty(env.HOLON_MCP_MANDATE) ?? 'demo/sandbox',
    mcpProgressMs: int('HOLON_MCP_PROGRESS_MS', 2000, 50, 60_000),
    production,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    signingKey: nonEmpty(env.HOLON_SIGNING_KEY),
    retiredKeys: nonEmpty(env.HOLON_RETIRED_KEYS),
    logOrigin: DEFAULT_LOG_ORIGIN,
    checkpointS: int('HOLON_CHECKPOINT_S', 10, 1, 3600),
    ...operatingSettings(env, problems, int, production),
    ...observabilitySettings(env, problems, int),
    ...stripUndefined(overrides),
  };
  config.logOrigin = logOriginOf(env, config, problems, overrides.logOrigin);
  if (!config.host) config.host = config.hosted || production ? '0.0.0.0' : '127.0.0.1';
  if (!config.metricsHost) config.metricsHost = config.hosted || production ? '0.0.0.0' : '127.0.0.1';
  if (config.metricsPort && config.metricsPort === config.port) problems.push(`HOLON_METRICS_PORT must differ from PORT (${config.port})`);
  if (config.headersTimeoutS > config.requestTimeoutS)
    problems.push(`HOLON_HEADERS_TIMEOUT_S (${config.headersTimeoutS}) must not exceed HOLON_REQUEST_TIMEOUT_S (${config.requestTimeoutS})`);
  // Hosted: only the shipped agents of agents/; the demos of examples/ are listed only when named (gateway.md §7).
  if (config.hosted && !config.registryExplicit) config.registryDirs = HOSTED_REGISTRY;
  if (production && !config.databaseUrl) problems.push('production needs DATABASE_URL (a managed Postgres with backups)');
  problems.push(...productionProblems(config, env, overrides));
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  return config;
}

/**
 * The mandates `holon serve` loads when none are named: examples/mandates (relative to the working directory, like the
 * default registry, and only when it exists) on a dev gateway. HOLON_MANDATES set, even empty, decides instead (empty
 * = none); hosted mode (`--hosted`, HOLON_HOSTED) and production load none by default: their mandates are made
 * through the API by the accounts that own them, and examples/mandates would give the account `demo` credit.
 */
export function devMandatesDir(env: NodeJS.ProcessEnv, hostedFlag = false): string | undefined {
  if (env.HOLON_MANDATES !== undefined) return undefined;
  if (hostedFlag || isHostedValue(env.HOLON_HOSTED) || env.NODE_ENV === 'production') return undefined;
  return existsSync(path.resolve(DEV_MANDATES_DIR)) ? DEV_MANDATES_DIR : undefined;
}

function isHostedValue(v: string | undefined): boolean {
  return ['1', 'true'].includes((nonEmpty(v) ?? '0').toLowerCase());
}

export function splitList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

type OperatingSettings = Pick<
  Config,
  | 'trustProxy'
  | 'publicUrl'
  | 'siteUrl'
  | 'fileSecret'
  | 'adminKey'
  | 'allowPrivateEndpoints'
  | 'rateLimits'
  | 'githubUrl'
  | 'githubApiUrl'
  | 'githubClientId'
  | 'githubClientSecret'
  | 'githubTimeoutMs'
  | 'webhooks'
>;

/** Proxy, public URLs, secrets and rate limits (gateway.md §7 "Operating"). Secrets are never echoed in problems. */
function operatingSettings(
  env: NodeJS.ProcessEnv,
  problems: string[],
  int: (name: string, fallback: number, min: number, max: number) => number,
  production: boolean,
): OperatingSettings {
  const flag = (name: string, meaning: string): boolean => {
    const v = nonEmpty(env[name]);
    if (v === undefined || v === '0') return false;
    if (v === '1') return true;
    problems.push(`${name} must be 1 (${meaning}) or 0, not ${JSON.stringify(v)}`);
    return false;
  };
  const url = (name: string): string | undefined => {
    const v = nonEmpty(env[name]);
    if (v === undefined) return undefined;
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      problems.push(`${name} must be an absolute URL such as https://example.com, not ${JSON.stringify(v)}`);
      return undefined;
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') problems.push(`${name} must be an http(s) URL, not ${JSON.stringify(v)}`);
    else if (production && u.protocol !== 'https:') problems.push(`${name} must be an https URL in production, not ${JSON.stringify(v)}`);
    else if (u.username || u.password) problems.push(`${name} must not contain credentials`);
    else return v.replace(/\/+$/, '');
    return undefined;
  };
  const fileSecret = nonEmpty(env.HOLON_FILE_SECRET);
  if (production && fileSecret !== undefined && fileSecret.length < MIN_SECRET_LENGTH) {
    problems.push(`HOLON_FILE_SECRET must be at least ${MIN_SECRET_LENGTH} random characters (it has ${fileSecret.length})`);
  }
  const adminKey = nonEmpty(env.HOLON_ADMIN_KEY);
  if (adminKey !== undefined && adminKey.length < MIN_SECRET_LENGTH) {
    problems.push(`HOLON_ADMIN_KEY must be at least ${MIN_SECRET_LENGTH} random characters (it has ${adminKey.length})`);
  }
  return {
    trustProxy: flag('HOLON_TRUST_PROXY', 'behind a proxy that appends X-Forwarded-For'),
    publicUrl: url('HOLON_PUBLIC_URL'),
    siteUrl: url('HOLON_SITE_URL'),
    fileSecret,
    adminKey,
    allowPrivateEndpoints: flag('HOLON_ALLOW_PRIVATE_ENDPOINTS', 'allow agents on private addresses'),
    rateLimits: {
      perAddressPerMin: int('HOLON_RATE_ADDRESS_PER_MIN', 600, 1, 1_000_000),
      perAccountPerMin: int('HOLON_RATE_ACCOUNT_PER_MIN', 1200, 1, 1_000_000),
      signupsPerHour: int('HOLON_RATE_SIGNUPS_PER_HOUR', 10, 1, 100_000),
      // Each publish asks GitHub and resolves an endpoint; each draft calls an author's server: own, tighter buckets.
      publishesPerHour: int('HOLON_RATE_PUBLISHES_PER_HOUR', 30, 1, 100_000),
      draftsPerHour: int('HOLON_RATE_DRAFTS_PER_HOUR', 60, 1, 100_000),
      // A re-run asks the author's server every case of a suite again.
      evaluationsPerHour: int('HOLON_RATE_EVALUATIONS_PER_HOUR', 10, 1, 100_000),
    },
    // GitHub sign-in (gateway.md §7 Accounts): only turns a feature on, so its absence never stops the gateway.
    githubUrl: url('HOLON_GITHUB_URL') ?? 'https://github.com',
    githubApiUrl: url('HOLON_GITHUB_API_URL') ?? 'https://api.github.com',
    githubClientId: nonEmpty(env.HOLON_GITHUB_CLIENT_ID),
    githubClientSecret: nonEmpty(env.HOLON_GITHUB_CLIENT_SECRET),
    githubTimeoutMs: int('HOLON_GITHUB_TIMEOUT_MS', 10_000, 100, 120_000),
    webhooks: webhookSettings(env, problems, int),
  };
}

/** Metrics port and tracing (docs/operating.md, "Metrics, traces and logs"). */
function observabilitySettings(
  env: NodeJS.ProcessEnv,
  problems: string[],
  int: (name: string, fallback: number, min: number, max: number) => number,
): Pick<Config, 'metricsPort' | 'metricsHost' | 'tracesUrl'> {
  const endpoint = (name: string, raw: string | undefined): string | undefined => {
    const v = nonEmpty(raw);
    if (v === undefined) return undefined;
    if (!/^https?:\/\/[^\s/]+/.test(v)) problems.push(`${name} must be an http(s) URL such as http://otel-collector:4318, not ${JSON.stringify(v)}`);
    return v;
  };
  const traces = endpoint('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = endpoint('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT);
  return {
    metricsPort: nonEmpty(env.HOLON_METRICS_PORT) === undefined ? undefined : int('HOLON_METRICS_PORT', 0, 0, 65535),
    metricsHost: nonEmpty(env.HOLON_METRICS_HOST) ?? '',
    tracesUrl: traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined),
  };
}

/** Webhooks (docs/webhooks.md). The secret is never repeated in a problem. */
function webhookSettings(
  env: NodeJS.ProcessEnv,
  problems: string[],
  int: (name: string, fallback: number, min: number, max: number) => number,
): WebhookSettings {
  const devSecret = nonEmpty(env.HOLON_CALLBACK_SECRET);
  if (devSecret !== undefined && !WEBHOOK_SECRET.test(devSecret)) {
    problems.push(
      'HOLON_CALLBACK_SECRET must be a Standard Webhooks secret: "whsec_" and the base64 of 24 or more random bytes ' +
        '(e.g. whsec_$(openssl rand -base64 32)); callbacks are now signed with webhook-signature (docs/webhooks.md)',
    );
  }
  const scheduleText = nonEmpty(env.HOLON_WEBHOOK_SCHEDULE) ?? DEFAULT_WEBHOOK_SCHEDULE;
  const scheduleMs = parseDurations(scheduleText);
  if (!scheduleMs || scheduleMs.length > 50 || scheduleMs.some((ms) => ms > 86_400_000)) {
    problems.push(`HOLON_WEBHOOK_SCHEDULE must be 1 to 50 delays of at most 24h such as ${DEFAULT_WEBHOOK_SCHEDULE}, not ${JSON.stringify(scheduleText)}`);
  }
  const attemptTimeoutMs = int('HOLON_WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000);
  return {
    ...(devSecret !== undefined && WEBHOOK_SECRET.test(devSecret) ? { devSecret } : {}),
    scheduleMs: scheduleMs && scheduleMs.length <= 50 ? scheduleMs : parseDurations(DEFAULT_WEBHOOK_SCHEDULE)!,
    attemptTimeoutMs,
    // The headers must come well before the whole answer: a receiver that accepts and never answers holds a slot
    // this long, not HOLON_WEBHOOK_TIMEOUT_MS.
    firstByteTimeoutMs: Math.min(int('HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS', 5_000, 100, 120_000), attemptTimeoutMs),
    accountInFlight: int('HOLON_WEBHOOK_ACCOUNT_INFLIGHT', 4, 1, 1_000),
    breakerFailures: int('HOLON_WEBHOOK_BREAKER_FAILURES', 5, 1, 1_000),
    breakerCoolDownMs: int('HOLON_WEBHOOK_BREAKER_COOLDOWN_MS', 30_000, 100, 3_600_000),
    rotationWindowS: int('HOLON_WEBHOOK_ROTATION_WINDOW_S', 86_400, 1, 30 * 86_400),
    // A re-send asks the caller's receiver again: its own bucket, per account.
    redeliveriesPerHour: int('HOLON_RATE_REDELIVERIES_PER_HOUR', 30, 1, 100_000),
  };
}

const DEFAULT_LOG_ORIGIN = 'holon.localhost/receipts';
/** A C2SP checkpoint origin: printable ASCII without spaces or '+' (it is also the signed note's key name). */
const LOG_ORIGIN = /^[!-*,-~]{1,200}$/;

/** HOLON_LOG_ORIGIN, else `<host of HOLON_PUBLIC_URL>/receipts`, else `holon.localhost/receipts`. */
function logOriginOf(env: NodeJS.ProcessEnv, config: Config, problems: string[], override: string | undefined): string {
  const set = override ?? nonEmpty(env.HOLON_LOG_ORIGIN);
  if (set !== undefined) {
    if (!LOG_ORIGIN.test(set)) problems.push('HOLON_LOG_ORIGIN must be printable ASCII without spaces or "+", such as holon.example.com/receipts');
    return set;
  }
  return config.publicUrl ? `${new URL(config.publicUrl).host}/receipts` : DEFAULT_LOG_ORIGIN;
}

/**
 * What production (NODE_ENV=production) refuses to start without (gateway.md §7 "Operating"; DATABASE_URL is
 * checked beside it). Only settings that protect money, keys or users belong here: one that merely turns a
 * feature off (GitHub sign-in, …) must never stop the gateway.
 */
function productionProblems(config: Config, env: NodeJS.ProcessEnv, overrides: Partial<Config>): string[] {
  if (!config.production) return [];
  const out: string[] = [];
  // Set but invalid values are already reported by operatingSettings; only the missing ones are added here.
  const missing = (name: string) => nonEmpty(env[name]) === undefined;
  if (!config.publicUrl && missing('HOLON_PUBLIC_URL')) out.push('production needs HOLON_PUBLIC_URL (the public https origin: signed file links point there)');
  if (!config.signingKey)
    out.push('production needs HOLON_SIGNING_KEY (an Ed25519 private key, the same in every process: it signs receipts, mandates and the log)');
  if (!config.fileSecret) out.push(`production needs HOLON_FILE_SECRET (${MIN_SECRET_LENGTH}+ random characters, stable across restarts: signs file links)`);
  if (!config.adminKey) out.push(`production needs HOLON_ADMIN_KEY (${MIN_SECRET_LENGTH}+ random characters: demo credit and moderation)`);
  if (overrides.trustProxy === undefined && missing('HOLON_TRUST_PROXY')) {
    out.push('production needs HOLON_TRUST_PROXY set explicitly: 1 behind a proxy (else every visitor shares one rate limit), 0 if exposed directly');
  }
  if (!config.siteUrl && missing('HOLON_SITE_URL'))
    out.push('production needs HOLON_SITE_URL (the public https site: the console links to its terms and privacy pages)');
  if (config.allowPrivateEndpoints) out.push('HOLON_ALLOW_PRIVATE_ENDPOINTS=1 is refused in production (published agents must not reach private addresses)');
  if (!config.exclude.includes(SEC_COMPANY) && !SEC_CONTACT.test(nonEmpty(env.HOLON_SEC_CONTACT) ?? '')) {
    out.push(`production needs HOLON_SEC_CONTACT (an email address the SEC can reach) while ${SEC_COMPANY} is listed: set it, or exclude the agent`);
  }
  if (!config.hosted) {
    out.push('production needs HOLON_HOSTED=1 (accounts and API keys): without it the gateway would run in dev mode, where nothing asks for a key');
  }
  out.push(...secretProblems(env), ...publicUrlProblems(config.publicUrl));
  if (!config.privateEvalsDir) {
    out.push(
      'production needs HOLON_PRIVATE_EVALS (the directory of private holdout cases, laid out like evals/): without it agents are judged on public cases only',
    );
  }
  return out;
}

/**
 * The secrets production checks (docs/operating.md, "Secrets"): each generated ones must look generated
 * (shared/core/secret-strength.ts), and no value may serve two of them. The signing key (a JWK or PEM, checked as a
 * key where it is loaded) and GitHub's client secret (GitHub makes it) are only compared. A webhook secret is
 * judged by its random part (after `whsec_`). No value is ever repeated in a problem.
 */
const SECRETS: ReadonlyArray<{ name: string; generated: boolean }> = [
  { name: 'HOLON_ADMIN_KEY', generated: true },
  { name: 'HOLON_FILE_SECRET', generated: true },
  { name: 'HOLON_SIGNING_KEY', generated: false },
  { name: 'HOLON_CALLBACK_SECRET', generated: true },
  { name: 'HOLON_GITHUB_CLIENT_SECRET', generated: false },
];

const GENERATE = 'set it to a value of its own from `openssl rand -base64 32`';

function secretProblems(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const set = SECRETS.flatMap((s) => {
    const value = nonEmpty(env[s.name]);
    return value === undefined ? [] : [{ ...s, value, random: value.startsWith('whsec_') ? value.slice('whsec_'.length) : value }];
  });
  for (const s of set) {
    // Too short is reported where the setting is read (its own sentence); the rest of what makes a secret weak, here.
    const weak = s.generated && [...s.random].length >= MIN_SECRET_LENGTH ? secretWeakness(s.random) : null;
    if (weak) out.push(`${s.name} does not look random (${weak}): ${GENERATE}`);
  }
  set.forEach((a, i) => {
    for (const b of set.slice(i + 1)) {
      if (a.value === b.value || a.random === b.random) out.push(`${b.name} is the same value as ${a.name}: each secret needs its own value; ${GENERATE}`);
    }
  });
  return out;
}

/** The public URL is an origin: a path, a query or a fragment would be pasted into every signed link and log name. */
function publicUrlProblems(publicUrl: string | undefined): string[] {
  if (!publicUrl) return [];
  const u = new URL(publicUrl);
  if ((u.pathname === '/' || u.pathname === '') && !u.search && !u.hash) return [];
  return [`HOLON_PUBLIC_URL must be an origin only (https://host or https://host:port), without a path, query or fragment: set it to ${u.origin}`];
}

// ------------------------------------------------------------------------------------------------- the table

/**
 * Who reads a setting. The four roles (`holon serve` runs all four, so it reads what any of them reads);
 * `serve`: only `holon serve` itself (the dev gateway's own conveniences); the other commands of the CLI; the
 * reference MCP agent host (agents/host.mjs, and the tools it runs); the image's entrypoint (infra/entrypoint.sh).
 */
export type SettingReader =
  | 'api'
  | 'runner'
  | 'settler'
  | 'evaluator'
  | 'serve'
  | 'backup, restore, audit'
  | 'publish, credential, earnings'
  | 'agent host'
  | 'entrypoint';

export const ROLES: readonly SettingReader[] = ['api', 'runner', 'settler', 'evaluator'];

export type SettingGroup = 'gateway' | 'hosted' | 'webhooks' | 'observability' | 'tools';

export interface Setting {
  name: string;
  group: SettingGroup;
  /** The default in words, as docs/configuration.md prints it; '' when there is none (off, or unset). */
  default: string;
  /** What it does, one or two sentences (Markdown; no `|`). */
  what: string;
  readBy: readonly SettingReader[];
}

const ALL: readonly SettingReader[] = ROLES;

/**
 * Every environment variable of Holon, once: what loadConfig reads above, and the few the CLI's client commands and the
 * reference agent host read themselves. docs/configuration.md is generated from this table.
 */
export const SETTINGS: readonly Setting[] = [
  // ---- the gateway, any mode
  { name: 'PORT', group: 'gateway', default: '8080', what: "the API's port (`--port`); 0 = any free port", readBy: ['api'] },
  {
    name: 'HOST',
    group: 'gateway',
    default: '`127.0.0.1`; hosted or production `0.0.0.0`',
    what: 'the address the API listens on (`--host`)',
    readBy: ['api'],
  },
  {
    name: 'DATABASE_URL',
    group: 'gateway',
    default: 'PGlite in `HOLON_DB`',
    what: 'the Postgres (`postgres://…`): mandates, holds, journal, receipts, calls. Required by a single role and in production',
    readBy: [...ALL, 'backup, restore, audit'],
  },
  {
    name: 'HOLON_DB',
    group: 'gateway',
    default: '`.holon/db`',
    what: 'the embedded PGlite data directory (`--db`) when `DATABASE_URL` is not set; one process at a time',
    readBy: ['serve', 'backup, restore, audit'],
  },
  {
    name: 'REDIS_URL',
    group: 'gateway',
    default: 'the in-process queue',
    what: 'Redis (`redis://…`, `maxmemory-policy noeviction`): queues, notifier, ephemeral store. Required by a single role',
    readBy: ALL,
  },
  { name: 'HOLON_REDIS_PREFIX', group: 'gateway', default: '`holon`', what: 'key prefix in Redis, so two gateways can share one', readBy: ALL },
  { name: 'HOLON_DB_POOL', group: 'gateway', default: '10', what: 'Postgres connections per process, 2 to 500', readBy: ALL },
  {
    name: 'HOLON_REGISTRY',
    group: 'gateway',
    default: '`agents,examples`; hosted `agents`',
    what: 'directories of shipped agents (`--registry`), comma-separated',
    readBy: ALL,
  },
  {
    name: 'HOLON_EXCLUDE',
    group: 'gateway',
    default: '`holon-labs/summarize,holon-labs/sec-company`',
    what: 'agent ids (or `id@version`) never listed; empty lists every agent',
    readBy: ALL,
  },
  {
    name: 'HOLON_MANDATES',
    group: 'gateway',
    default: '`holon serve` in dev: `examples/mandates`; otherwise none',
    what: 'a directory of mandate files loaded at start (`--mandates`), each issuer credited `HOLON_SIGNUP_CREDIT` once; empty loads none. Hosted mode and production load none unless it is set',
    readBy: ALL,
  },
  {
    name: 'HOLON_RECORDS',
    group: 'gateway',
    default: 'off',
    what: 'a JSON file of sample Agent Records, shown labelled beside agents without measured runs, never ranked (`docs/publishing.md`)',
    readBy: ALL,
  },
  {
    name: 'HOLON_SIGNUP_CREDIT',
    group: 'gateway',
    default: '`5.00`',
    what: 'demo credit (EUR) of a new account, and of each issuer of `HOLON_MANDATES`',
    readBy: ALL,
  },
  {
    name: 'HOLON_RANKING_MIN_PAYERS',
    group: 'gateway',
    default: '3',
    what: "distinct payers whose runs an agent version needs before its measured success rate and cost move the capability ranking and search (below: it ranks on its worst case at 50 %, like a new agent); its author's own calls never count, and on a hosted gateway only payers linked to GitHub or funded from outside beyond sign-up credit (docs/publishing.md)",
    readBy: ['api', 'runner'],
  },
  {
    name: 'HOLON_RESULT_TTL_S',
    group: 'gateway',
    default: '600',
    what: "how long a finished call's output waits for pickup, seconds",
    readBy: ['api', 'runner'],
  },
  {
    name: 'HOLON_SYNC_WAIT_S',
    group: 'gateway',
    default: '60',
    what: 'how long a synchronous `POST /v0/calls` waits before answering 202, at most 600',
    readBy: ['api'],
  },
  {
    name: 'HOLON_STOP_GRACE_S',
    group: 'gateway',
    default: '300',
    what: "how long a stopping process (SIGTERM) lets what it holds finish: runs, evaluations, synchronous answers. Then runners end what still runs `failed / gateway_restarted` (unbilled), evaluators hand their evaluations to another, the API answers 202. Keep the orchestrator's grace above it (`docs/operating.md`)",
    readBy: ALL,
  },
  {
    name: 'HOLON_HEADERS_TIMEOUT_S',
    group: 'gateway',
    default: '20',
    what: "the longest a client may take to send a request's headers; past it the API answers 408 and closes the connection (a slow client cannot hold sockets)",
    readBy: ['api'],
  },
  {
    name: 'HOLON_REQUEST_TIMEOUT_S',
    group: 'gateway',
    default: '120',
    what: 'the longest a client may take to send a whole request, body included (an upload); waiting for the answer does not count',
    readBy: ['api'],
  },
  {
    name: 'HOLON_KEEPALIVE_TIMEOUT_S',
    group: 'gateway',
    default: '5',
    what: "how long an idle keep-alive connection stays open. Behind a proxy that keeps connections to the API (ingress-nginx's `upstream-keepalive-timeout`, 60 s), set it above the proxy's",
    readBy: ['api'],
  },
  { name: 'HOLON_BODY_LIMIT', group: 'gateway', default: '1048576', what: 'the largest JSON request body, bytes', readBy: ['api'] },
  { name: 'HOLON_FILE_QUOTA_BYTES', group: 'gateway', default: '209715200 (200 MB)', what: 'bytes of live uploaded files per account', readBy: ['api'] },
  { name: 'HOLON_RUNNER_CONCURRENCY', group: 'gateway', default: '32', what: 'calls one runner runs at once', readBy: ['runner'] },
  {
    name: 'HOLON_SETTLER_CONCURRENCY',
    group: 'gateway',
    default: '32',
    what: 'settle jobs one settler takes at once (it commits them in batches)',
    readBy: ['settler'],
  },
  { name: 'HOLON_EVALUATOR_CONCURRENCY', group: 'gateway', default: '2', what: 'evaluations one evaluator runs at once', readBy: ['evaluator'] },
  { name: 'HOLON_EVALS', group: 'gateway', default: '`evals`', what: 'the public evaluation suites (`docs/evaluation.md`)', readBy: ['api', 'evaluator'] },
  {
    name: 'HOLON_PRIVATE_EVALS',
    group: 'gateway',
    default: 'none',
    what: 'the private holdout cases, laid out like `evals/`; a missing directory is logged, not fatal',
    readBy: ['api', 'evaluator'],
  },
  {
    name: 'HOLON_ALLOW_PRIVATE_ENDPOINTS',
    group: 'gateway',
    default: '0',
    what: '`1`: published agents and hosted callbacks may reach private addresses (refused in production)',
    readBy: ALL,
  },
  {
    name: 'HOLON_AGENT_HOST',
    group: 'gateway',
    default: '`1`',
    what: '`0` keeps `holon serve` (dev) and the image beside `serve`, `runner`, `evaluator` from starting the reference MCP agent host',
    readBy: ['serve', 'entrypoint'],
  },
  {
    name: 'HOLON_AGENT_HOST_PORT',
    group: 'gateway',
    default: '7474',
    what: "the reference MCP agent host's port on 127.0.0.1; the shipped agents of `agents/` are called there whatever port their manifests name (`docs/mcp.md`)",
    readBy: [...ALL, 'serve', 'entrypoint', 'agent host'],
  },
  {
    name: 'HOLON_MCP_MANDATE',
    group: 'gateway',
    default: '`demo/sandbox`',
    what: 'dev mode: the mandate of an MCP connection to `/mcp` that names none',
    readBy: ['api'],
  },
  { name: 'HOLON_MCP_PROGRESS_MS', group: 'gateway', default: '2000', what: "how often `/mcp`'s `call_agent` reports progress", readBy: ['api'] },
  {
    name: 'NODE_ENV',
    group: 'gateway',
    default: '',
    what: '`production`: the production check (below), https URLs only, no agent host inside `serve` (the entrypoint runs it)',
    readBy: [...ALL, 'entrypoint'],
  },
  {
    name: 'HOLON_SIGNING_KEY',
    group: 'gateway',
    default: 'PGlite: generated once into `signing-key.jwk` beside `HOLON_DB`; Postgres: one per process, with a warning',
    what: 'the Ed25519 private key receipts, mandates and log checkpoints are signed with, a JWK or PKCS#8 PEM (`openssl genpkey -algorithm ed25519`), the same in every process; its key id is its RFC 7638 thumbprint, its public half is served at `/.well-known/jwks.json` (`docs/receipts.md`). Required in production. Never logged',
    readBy: [...ALL],
  },
  {
    name: 'HOLON_RETIRED_KEYS',
    group: 'gateway',
    default: 'none',
    what: 'a JSON array of the public JWKs that signed before a rotation, each with `retired_at` (RFC 3339, when it stopped signing); listed in `/.well-known/jwks.json` so older signatures still verify',
    readBy: ['api'],
  },
  {
    name: 'HOLON_LOG_ORIGIN',
    group: 'gateway',
    default: '`<host of HOLON_PUBLIC_URL>/receipts`, else `holon.localhost/receipts`',
    what: "the receipt log's origin: the first line of its checkpoints and the key name of their signed notes (`docs/receipts.md`)",
    readBy: [...ALL],
  },
  {
    name: 'HOLON_CHECKPOINT_S',
    group: 'gateway',
    default: '10',
    what: 'how often, in seconds, the settler signs a new checkpoint of the receipt log while receipts arrive (1–3600)',
    readBy: ['settler'],
  },
  // ---- hosted mode and production
  {
    name: 'HOLON_HOSTED',
    group: 'hosted',
    default: '0',
    what: '`1` (or `--hosted`): accounts, API keys, principals, idempotent calls, rate limits, moderation (`docs/hosted.md`)',
    readBy: ALL,
  },
  {
    name: 'HOLON_ADMIN_KEY',
    group: 'hosted',
    default: '',
    what: 'the operator key, 32+ random characters (demo credit, moderation, `GET /metrics`). Production needs it',
    readBy: ['api'],
  },
  {
    name: 'HOLON_TRUST_PROXY',
    group: 'hosted',
    default: '0',
    what: '`1` behind exactly one proxy that appends `X-Forwarded-For`; `0` exposed directly. Production needs it set',
    readBy: ['api'],
  },
  {
    name: 'HOLON_PUBLIC_URL',
    group: 'hosted',
    default: "this process's API",
    what: 'the public origin, no trailing slash: signed file links and the GitHub callback point there. Production needs it',
    readBy: ['api', 'runner', 'evaluator'],
  },
  {
    name: 'HOLON_SITE_URL',
    group: 'hosted',
    default: '',
    what: 'the public site: the console links to its terms and privacy pages; allowed as an Origin (`docs/demo.md`). Production needs it',
    readBy: ['api'],
  },
  {
    name: 'HOLON_FILE_SECRET',
    group: 'hosted',
    default: 'random, per process',
    what: 'signs file links and encrypts endpoint credentials and webhook secrets; stable, the same in every process (32+ characters in production)',
    readBy: ALL,
  },
  { name: 'HOLON_RATE_ADDRESS_PER_MIN', group: 'hosted', default: '600', what: 'requests per client address and minute', readBy: ['api'] },
  { name: 'HOLON_RATE_ACCOUNT_PER_MIN', group: 'hosted', default: '1200', what: 'requests per account and minute', readBy: ['api'] },
  { name: 'HOLON_RATE_SIGNUPS_PER_HOUR', group: 'hosted', default: '10', what: 'sign-ups per address and hour', readBy: ['api'] },
  { name: 'HOLON_RATE_PUBLISHES_PER_HOUR', group: 'hosted', default: '30', what: 'publishes per account and hour', readBy: ['api'] },
  { name: 'HOLON_RATE_DRAFTS_PER_HOUR', group: 'hosted', default: '60', what: 'listing drafts per account and hour', readBy: ['api'] },
  { name: 'HOLON_RATE_EVALUATIONS_PER_HOUR', group: 'hosted', default: '10', what: 'evaluation re-runs per account and hour', readBy: ['api'] },
  {
    name: 'HOLON_GITHUB_CLIENT_ID',
    group: 'hosted',
    default: '',
    what: 'the GitHub app that signs people in; without it and the secret, sign-in answers 503',
    readBy: ['api'],
  },
  { name: 'HOLON_GITHUB_CLIENT_SECRET', group: 'hosted', default: '', what: "the GitHub app's secret (never logged)", readBy: ['api'] },
  { name: 'HOLON_GITHUB_URL', group: 'hosted', default: '`https://github.com`', what: "GitHub's web origin (OAuth authorize and token)", readBy: ['api'] },
  { name: 'HOLON_GITHUB_API_URL', group: 'hosted', default: '`https://api.github.com`', what: "GitHub's REST API", readBy: ['api'] },
  { name: 'HOLON_GITHUB_TIMEOUT_MS', group: 'hosted', default: '10000', what: 'the longest wait for one GitHub request', readBy: ['api'] },
  // ---- webhooks (docs/webhooks.md)
  {
    name: 'HOLON_CALLBACK_SECRET',
    group: 'webhooks',
    default: 'generated at start-up, printed once',
    what: "dev mode: the one webhook signing secret, `whsec_` and base64 (`whsec_$(openssl rand -base64 32)`); hosted mode signs with each account's own",
    readBy: ['settler'],
  },
  {
    name: 'HOLON_WEBHOOK_SCHEDULE',
    group: 'webhooks',
    default: '`0,5s,5m,30m,2h,5h,10h,14h,20h,24h`',
    what: 'the delay before each attempt of a delivery',
    readBy: ['settler'],
  },
  { name: 'HOLON_WEBHOOK_TIMEOUT_MS', group: 'webhooks', default: '15000', what: 'the longest one attempt may take', readBy: ['settler'] },
  {
    name: 'HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS',
    group: 'webhooks',
    default: '5000',
    what: "the longest an attempt waits for the answer's headers (at most `HOLON_WEBHOOK_TIMEOUT_MS`): a receiver that accepts and never answers frees its slot then",
    readBy: ['settler'],
  },
  {
    name: 'HOLON_WEBHOOK_ACCOUNT_INFLIGHT',
    group: 'webhooks',
    default: '4',
    what: "attempts of one account's deliveries in flight at once, per settler process (of its 16 delivery slots); the rest wait their turn, round robin between accounts, without using an attempt",
    readBy: ['settler'],
  },
  {
    name: 'HOLON_WEBHOOK_BREAKER_FAILURES',
    group: 'webhooks',
    default: '5',
    what: "a receiver host's consecutive failures (no connection, no answer in time, 5xx) that open its circuit breaker, per settler process: its attempts then wait without a slot",
    readBy: ['settler'],
  },
  {
    name: 'HOLON_WEBHOOK_BREAKER_COOLDOWN_MS',
    group: 'webhooks',
    default: '30000',
    what: "how long an open breaker holds its host's attempts before one probe goes (its success closes the breaker, its failure opens it again)",
    readBy: ['settler'],
  },
  {
    name: 'HOLON_WEBHOOK_ROTATION_WINDOW_S',
    group: 'webhooks',
    default: '86400',
    what: 'how long the old secret still signs after a rotation',
    readBy: ['api', 'settler'],
  },
  {
    name: 'HOLON_DELIVERY_RETENTION_DAYS',
    group: 'webhooks',
    default: '30',
    what: 'days the delivery log of a finished delivery is kept, and an MCP task of a final call; then the settler deletes them (1 to 3650)',
    readBy: ['settler'],
  },
  {
    name: 'HOLON_RATE_REDELIVERIES_PER_HOUR',
    group: 'webhooks',
    default: '30',
    what: 're-sends (`POST /v0/calls/{id}/deliveries`) per account and hour',
    readBy: ['api'],
  },
  // ---- metrics, traces and logs (docs/operating.md)
  { name: 'LOG_LEVEL', group: 'observability', default: '`info`', what: 'pino level: access logs are `info`, probes and scrapes `debug`', readBy: ALL },
  {
    name: 'HOLON_METRICS_PORT',
    group: 'observability',
    default: 'off',
    what: '`GET /metrics` and `/healthz` on a port of their own in any role, no key: for the cluster network only; 0 = any free port',
    readBy: ALL,
  },
  { name: 'HOLON_METRICS_HOST', group: 'observability', default: 'like `HOST`', what: "the metrics port's address", readBy: ALL },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    group: 'observability',
    default: 'off',
    what: 'an OTLP/HTTP collector (`http://collector:4318`; `/v1/traces` is appended): tracing on. `OTEL_EXPORTER_OTLP_HEADERS` carries its token',
    readBy: ALL,
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    group: 'observability',
    default: 'off',
    what: 'the traces endpoint as it is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
    readBy: ALL,
  },
  // ---- the CLI's client commands and the reference agent host
  {
    name: 'HOLON_URL',
    group: 'tools',
    default: '',
    what: 'the hosted gateway `holon publish`, `credential` and `earnings` talk to (`--url`)',
    readBy: ['publish, credential, earnings'],
  },
  {
    name: 'HOLON_KEY',
    group: 'tools',
    default: '',
    what: 'their human key (`--key`): an account signed in with GitHub',
    readBy: ['publish, credential, earnings'],
  },
  {
    name: 'ANTHROPIC_API_KEY',
    group: 'tools',
    default: '',
    what: '`holon-labs/summarize` (left out by `HOLON_EXCLUDE` by default; `HOLON_EXCLUDE=` lists it)',
    readBy: ['agent host'],
  },
  {
    name: 'ANTHROPIC_BASE_URL',
    group: 'tools',
    default: '`https://api.anthropic.com`',
    what: 'the Anthropic API `holon-labs/summarize` calls',
    readBy: ['agent host'],
  },
  {
    name: 'HOLON_SUMMARIZE_MODEL',
    group: 'tools',
    default: "the tool's `DEFAULT_MODEL`",
    what: 'the model `holon-labs/summarize` asks for',
    readBy: ['agent host'],
  },
  {
    name: 'HOLON_SEC_CONTACT',
    group: 'tools',
    default: '',
    what: "an email address the SEC can reach, sent in every EDGAR request's User-Agent (its fair access policy). `holon-labs/sec-company` is listed only with it and when not in `HOLON_EXCLUDE`; production then needs it",
    readBy: [...ALL, 'agent host'],
  },
  {
    name: 'HOLON_SEC_URL',
    group: 'tools',
    default: '`https://data.sec.gov`',
    what: "EDGAR's submissions API `holon-labs/sec-company` reads (`/submissions/CIK##########.json`)",
    readBy: ['agent host'],
  },
  {
    name: 'HOLON_SEC_FILES_URL',
    group: 'tools',
    default: '`https://www.sec.gov`',
    what: "EDGAR's ticker map (`/files/company_tickers.json`) and the archive the filings' `document_url` point to",
    readBy: ['agent host'],
  },
  {
    name: 'HOLON_SEC_TIMEOUT_MS',
    group: 'tools',
    default: '10000',
    what: 'the longest `holon-labs/sec-company` waits for one EDGAR request, 100 to 60000',
    readBy: ['agent host'],
  },
];
