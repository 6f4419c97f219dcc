/**
 * Every setting of the gateway, declared once in the files of this folder, grouped by concern. `Config` is what
 * they parse to (parse.ts); DOCUMENTED, with the variables other programs read (elsewhere.ts), is what
 * docs/configuration.md lists (scripts/config-docs.ts).
 */
import { CATALOGUE } from './catalogue.js';
import { type ConfigOf, type Declarations, type Documented, isSetting } from './declare.js';
import { ELSEWHERE } from './elsewhere.js';
import { GITHUB } from './github.js';
import { HOSTED } from './hosted.js';
import { LEASES } from './leases.js';
import { LIMITS } from './limits.js';
import { MANDATES } from './mandates.js';
import { MODE } from './mode.js';
import { OBSERVABILITY, TRACING } from './observability.js';
import { PAYMENTS } from './payments.js';
import { SERVER } from './server.js';
import { SIGNING } from './signing.js';
import { STORAGE } from './storage.js';
import { WEBHOOKS } from './webhooks.js';
import { WORKERS } from './workers.js';

/** The tree `Config` is parsed from: a field per setting. The order is the docs' and the problems' order. */
export const SETTINGS = {
  ...MODE,
  ...SERVER,
  ...STORAGE,
  ...CATALOGUE,
  ...MANDATES,
  ...WORKERS,
  ...LEASES,
  ...HOSTED,
  ...LIMITS,
  ...GITHUB,
  ...SIGNING,
  ...WEBHOOKS,
  ...PAYMENTS,
  ...OBSERVABILITY,
} satisfies Declarations;

export type WebhookSettings = ConfigOf<typeof WEBHOOKS.webhooks>;
export type X402Settings = ConfigOf<typeof PAYMENTS.x402>;

/** Every environment variable the gateway reads, parsed and checked at start-up (parse.ts `loadConfig`). */
export interface Config extends ConfigOf<typeof SETTINGS> {
  /** True when the registry directories were named (HOLON_REGISTRY / --registry), not defaulted. */
  registryExplicit: boolean;
  /** Where traces go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`; absent = no tracing. */
  tracesUrl?: string;
}

function flatten(tree: Declarations | Readonly<Record<string, Documented>>): Documented[] {
  return Object.values(tree).flatMap((v) => (isSetting(v) || typeof (v as Documented).env === 'string' ? [v as Documented] : flatten(v as Declarations)));
}

/** Every environment variable of Holon, once, in the order docs/configuration.md lists them. */
export const DOCUMENTED: readonly Documented[] = [...flatten(SETTINGS), ...flatten(TRACING), ...flatten(ELSEWHERE)];
