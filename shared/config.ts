/**
 * Every environment variable the gateway reads, parsed and validated in one place at start-up.
 * Command-line options override the environment.
 */
import path from 'node:path';
import { tryParseAmount } from './money.js';

export interface Config {
  port: number;
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
  /** Demo credit for a new issuer, EUR micro-units. */
  signupCredit: bigint;
  /** How long a finished call's output waits for pickup. */
  resultTtlS: number;
  /** Longest synchronous wait before answering 202. */
  syncWaitS: number;
  bodyLimitBytes: number;
  runnerConcurrency: number;
  settlerConcurrency: number;
  /** Largest Postgres pool per process (HOLON_DB_POOL). */
  dbPool: number;
  /** Dev mode: `holon serve` runs the reference MCP agent host for agents/ (HOLON_AGENT_HOST=0 turns it off). */
  agentHost: boolean;
  /** Dev mode: the mandate of an MCP connection that names none (HOLON_MCP_MANDATE). */
  mcpMandate: string;
  /** How often /mcp's call_agent reports progress (HOLON_MCP_PROGRESS_MS). */
  mcpProgressMs: number;
  production: boolean;
  logLevel: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const DEFAULT_REGISTRY = ['agents', 'examples'];
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
    databaseUrl,
    dbDir: path.resolve(nonEmpty(env.HOLON_DB) ?? '.holon/db'),
    redisUrl,
    redisPrefix,
    registryDirs: registryRaw ? splitList(registryRaw) : DEFAULT_REGISTRY,
    registryExplicit: registryRaw !== undefined,
    exclude: env.HOLON_EXCLUDE === undefined ? DEFAULT_EXCLUDE : splitList(env.HOLON_EXCLUDE),
    mandatesDir: nonEmpty(env.HOLON_MANDATES),
    signupCredit,
    resultTtlS: int('HOLON_RESULT_TTL_S', 600, 1, 86_400),
    syncWaitS: int('HOLON_SYNC_WAIT_S', 60, 1, 600),
    bodyLimitBytes: int('HOLON_BODY_LIMIT', 1_048_576, 1024, 100 * 1_048_576),
    runnerConcurrency: int('HOLON_RUNNER_CONCURRENCY', 32, 1, 1000),
    settlerConcurrency: int('HOLON_SETTLER_CONCURRENCY', 8, 1, 200),
    dbPool: int('HOLON_DB_POOL', 10, 2, 500),
    agentHost: !['0', 'off', 'false'].includes((nonEmpty(env.HOLON_AGENT_HOST) ?? '1').toLowerCase()),
    mcpMandate: nonEmpty(env.HOLON_MCP_MANDATE) ?? 'demo/sandbox',
    mcpProgressMs: int('HOLON_MCP_PROGRESS_MS', 2000, 50, 60_000),
    production,
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    ...stripUndefined(overrides),
  };
  if (production && !config.databaseUrl) problems.push('production needs DATABASE_URL (a managed Postgres with backups)');
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  return config;
}

export function splitList(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
