/**
 * The environment → `Config`: every declaration read in order (one problem list for all of them), the command-line
 * overrides on top, the defaults that depend on other settings filled, the rules between settings and production's
 * checked. Any problem stops the start with all of them listed.
 */
import { HOSTED_REGISTRY } from './catalogue.js';
import { ConfigError, type Declarations, isSetting, type ReadContext } from './declare.js';
import { type Config, SETTINGS } from './index.js';
import { TRACING } from './observability.js';
import { productionProblems } from './production.js';
import { DEFAULT_LOG_ORIGIN } from './signing.js';
import { nonEmpty } from './text.js';

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const ctx: ReadContext = { production: SETTINGS.production.read(env[SETTINGS.production.env], quiet), problem: (p) => problems.push(p) };
  const parsed = readTree(SETTINGS, env, ctx, overrides) as Omit<Config, 'registryExplicit' | 'tracesUrl'>;
  parsed.webhooks.firstByteTimeoutMs = Math.min(parsed.webhooks.firstByteTimeoutMs, parsed.webhooks.attemptTimeoutMs);
  const tracing = readTree(TRACING, env, ctx, {}) as { endpoint?: string; tracesEndpoint?: string };
  const tracesUrl = tracing.tracesEndpoint ?? (tracing.endpoint ? `${tracing.endpoint.replace(/\/+$/, '')}/v1/traces` : undefined);
  const config: Config = {
    ...parsed,
    registryExplicit: nonEmpty(env[SETTINGS.registryDirs.env]) !== undefined,
    ...(tracesUrl ? { tracesUrl } : {}),
    ...stripUndefined(overrides),
  };
  problems.push(...fillDependent(config), ...productionProblems(config, env, overrides));
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  return config;
}

const quiet: ReadContext = { production: false, problem: () => {} };

/** A tree's values; an override of a setting marked `overrideWins` is read in place of its variable. Unset = no key. */
function readTree(tree: Declarations, env: NodeJS.ProcessEnv, ctx: ReadContext, overrides: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, d] of Object.entries(tree)) {
    if (!isSetting(d)) {
      out[key] = readTree(d, env, ctx, {});
      continue;
    }
    const override = d.overrideWins ? overrides[key] : undefined;
    const value = d.read(override !== undefined ? String(override) : env[d.env], ctx);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** The defaults that depend on other settings, and the rules between settings; returns the problems. */
function fillDependent(config: Config): string[] {
  const open = config.hosted || config.production;
  if (!config.host) config.host = open ? '0.0.0.0' : '127.0.0.1';
  if (!config.metricsHost) config.metricsHost = open ? '0.0.0.0' : '127.0.0.1';
  if (!config.logOrigin) config.logOrigin = config.publicUrl ? `${new URL(config.publicUrl).host}/receipts` : DEFAULT_LOG_ORIGIN;
  if (config.hosted && !config.registryExplicit) config.registryDirs = [...HOSTED_REGISTRY];
  const problems: string[] = [];
  if (config.metricsPort && config.metricsPort === config.port) problems.push(`HOLON_METRICS_PORT must differ from PORT (${config.port})`);
  if (config.headersTimeoutS > config.requestTimeoutS)
    problems.push(`HOLON_HEADERS_TIMEOUT_S (${config.headersTimeoutS}) must not exceed HOLON_REQUEST_TIMEOUT_S (${config.requestTimeoutS})`);
  // A part on a Redis of its own beside the in-process others would split one deployment's messaging in two.
  if (!config.redisUrl)
    for (const [key, url] of Object.entries(config.redisFor))
      if (url) problems.push(`${SETTINGS.redisFor[key as keyof Config['redisFor']].env} needs REDIS_URL set`);
  return problems;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
