/**
 * The gateway's configuration: every environment variable it reads, parsed and checked in one place at start-up.
 * Each setting is declared once, by concern, in shared/platform/settings/ (its variable, type and bounds, default,
 * roles and one sentence); the `Config` type, the parser, the production rules and docs/configuration.md
 * (`npm run docs:config`) all come from those declarations. Command-line options override the environment.
 */
import { SETTINGS } from './settings/index.js';

export { ConfigError } from './settings/declare.js';
export { devMandatesDir } from './settings/dev-mandates.js';
export type { Config, WebhookSettings } from './settings/index.js';
export { loadConfig } from './settings/parse.js';
export { parseDurations, splitList } from './settings/text.js';
export { DEFAULT_WEBHOOK_SCHEDULE } from './settings/webhooks.js';

/** HOLON_REDIS_PREFIX's default: every Redis name starts `holon:` (shared/messaging/ephemeral.ts namespaceOf). */
export const DEFAULT_REDIS_PREFIX = SETTINGS.redisPrefix.default;
/** The reference MCP agent host's port, the one the shipped manifests name (HOLON_AGENT_HOST_PORT changes it). */
export const DEFAULT_AGENT_HOST_PORT = SETTINGS.agentHostPort.default;
/** HOLON_EXCLUDE's default: the agents that need a key or a contact of their own to run. */
export const DEFAULT_EXCLUDE = SETTINGS.exclude.default;
