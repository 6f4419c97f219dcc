/**
 * Every environment variable the gateway reads, parsed and validated in one place at start-up.
 * Command-line options override the environment.
 */
import path from 'node:path';
import { tryParseAmount } from '../core/money.js';

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
  /** Directory of mandate files loaded at start. */
  mandatesDir?: string;
  /** HOLON_RECORDS: a JSON file of sample Agent Records, read at start (shared/catalogue/sample-records.ts); absent = off. */
  recordsFile?: string;
  /** Demo credit for a new issuer, EUR micro-units. */
  signupCredit: bigint;
  /** How long a finished call's output waits for pickup. */
  resultTtlS: number;
  /** Longest synchronous wait before answering 202. */
  syncWaitS: number;
  bodyLimitBytes: number;
  /** HOLON_FILE_QUOTA_BYTES: bytes of live uploaded files per account (default 200 MB; shared/files/store.ts). */
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
  /** HOLON_WEBHOOK_ROTATION_WINDOW_S: how long the old secret still signs after a rotation (default 86400). */
  rotationWindowS: number;
  /** HOLON_RATE_REDELIVERIES_PER_HOUR: re-sends (POST /v0/calls/{id}/deliveries) per account and hour (default 30). */
  redeliveriesPerHour: number;
}

/** The Standard Webhooks retry schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_WEBHOOK_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,14h,20h,24h';

/** `whsec_` and the base64 of at least 24 bytes: what standardwebhooks accepts and what the gateway generates. */
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

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

export const DEFAULT_REGISTRY = ['agents', 'examples'];
export const HOSTED_REGISTRY = ['agents'];
export const DEFAULT_EXCLUDE = ['holon-labs/summarize', 'holon-labs/sec-company'];

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
  const redisPrefix = nonEmpty(env.HOLON_REDIS_PREFIX) ?? 'holon';
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
    syncWaitS: int('HOLON_SYNC_WAIT_S', 60, 1, 600),
    bodyLimitBytes: int('HOLON_BODY_LIMIT', 1_048_576, 1024, 100 * 1_048_576),
    fileQuotaBytes: int('HOLON_FILE_QUOTA_BYTES', 200 * 1_048_576, 1024, 1_000_000 * 1_048_576),
    runnerConcurrency: int('HOLON_RUNNER_CONCURRENCY', 32, 1, 1000),
    settlerConcurrency: int('HOLON_SETTLER_CONCURRENCY', 32, 1, 200),
    evaluatorConcurrency: int('HOLON_EVALUATOR_CONCURRENCY', 2, 1, 100),
    evalsDir: path.resolve(nonEmpty(env.HOLON_EVALS) ?? 'evals'),
    ...(nonEmpty(env.HOLON_PRIVATE_EVALS) ? { privateEvalsDir: path.resolve(env.HOLON_PRIVATE_EVALS!) } : {}),
    dbPool: int('HOLON_DB_POOL', 10, 2, 500),
    hosted: ['1', 'true'].includes((nonEmpty(env.HOLON_HOSTED) ?? '0').toLowerCase()),
    agentHost: !['0', 'off', 'false'].includes((nonEmpty(env.HOLON_AGENT_HOST) ?? '1').toLowerCase()),
    mcpMandate: nonEmpty(env.HOLON_MCP_MANDATE) ?? 'demo/sandbox',
    mcpProgressMs: int('HOLON_MCP_PROGRESS_MS', 2000, 50, 60_000),
    production,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    ...operatingSettings(env, problems, int, production),
    ...observabilitySettings(env, problems, int),
    ...stripUndefined(overrides),
  };
  if (!config.host) config.host = config.hosted || production ? '0.0.0.0' : '127.0.0.1';
  if (!config.metricsHost) config.metricsHost = config.hosted || production ? '0.0.0.0' : '127.0.0.1';
  if (config.metricsPort && config.metricsPort === config.port) problems.push(`HOLON_METRICS_PORT must differ from PORT (${config.port})`);
  // Hosted: only the shipped agents of agents/; the demos of examples/ are listed only when named (gateway.md §7).
  if (config.hosted && !config.registryExplicit) config.registryDirs = HOSTED_REGISTRY;
  if (production && !config.databaseUrl) problems.push('production needs DATABASE_URL (a managed Postgres with backups)');
  problems.push(...productionProblems(config, env, overrides));
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  return config;
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

/** Minimum length of HOLON_FILE_SECRET (production) and HOLON_ADMIN_KEY (always, when set). */
export const MIN_SECRET_LENGTH = 32;

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
  return {
    ...(devSecret !== undefined && WEBHOOK_SECRET.test(devSecret) ? { devSecret } : {}),
    scheduleMs: scheduleMs && scheduleMs.length <= 50 ? scheduleMs : parseDurations(DEFAULT_WEBHOOK_SCHEDULE)!,
    attemptTimeoutMs: int('HOLON_WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000),
    rotationWindowS: int('HOLON_WEBHOOK_ROTATION_WINDOW_S', 86_400, 1, 30 * 86_400),
    // A re-send asks the caller's receiver again: its own bucket, per account.
    redeliveriesPerHour: int('HOLON_RATE_REDELIVERIES_PER_HOUR', 30, 1, 100_000),
  };
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
  if (!config.fileSecret) out.push(`production needs HOLON_FILE_SECRET (${MIN_SECRET_LENGTH}+ random characters, stable across restarts: signs file links)`);
  if (!config.adminKey) out.push(`production needs HOLON_ADMIN_KEY (${MIN_SECRET_LENGTH}+ random characters: demo credit and moderation)`);
  if (overrides.trustProxy === undefined && missing('HOLON_TRUST_PROXY')) {
    out.push('production needs HOLON_TRUST_PROXY set explicitly: 1 behind a proxy (else every visitor shares one rate limit), 0 if exposed directly');
  }
  if (!config.siteUrl && missing('HOLON_SITE_URL'))
    out.push('production needs HOLON_SITE_URL (the public https site: the console links to its terms and privacy pages)');
  if (config.allowPrivateEndpoints) out.push('HOLON_ALLOW_PRIVATE_ENDPOINTS=1 is refused in production (published agents must not reach private addresses)');
  return out;
}
