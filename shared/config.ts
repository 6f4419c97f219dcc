/**
 * Every environment variable the gateway reads, parsed and validated in one place at start-up.
 */
import path from 'node:path';

export interface Config {
  port: number;
  /** Postgres URL; absent = PGlite in `dbDir`. */
  databaseUrl?: string;
  /** PGlite data directory. */
  dbDir: string;
  /** Redis URL; absent = the in-process queue. */
  redisUrl?: string;
  production: boolean;
  logLevel: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const port = overrides.port ?? parsePort(env.PORT, problems);
  const databaseUrl = overrides.databaseUrl ?? nonEmpty(env.DATABASE_URL);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// URL');
  const redisUrl = overrides.redisUrl ?? nonEmpty(env.REDIS_URL);
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must be a redis:// URL');
  const production = env.NODE_ENV === 'production';
  if (production && !databaseUrl) problems.push('production needs DATABASE_URL (a managed Postgres with backups)');
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  return {
    port,
    databaseUrl,
    dbDir: overrides.dbDir ?? path.resolve(nonEmpty(env.HOLON_DB) ?? '.holon/db'),
    redisUrl,
    production,
    logLevel: overrides.logLevel ?? nonEmpty(env.LOG_LEVEL) ?? 'info',
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function parsePort(v: string | undefined, problems: string[]): number {
  if (v === undefined || v === '') return 8080;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    problems.push(`PORT must be a port number, not ${JSON.stringify(v)}`);
    return 8080;
  }
  return n;
}
