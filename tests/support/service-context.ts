/** A ServiceContext for tests that drive the shared modules directly: the given agents as shipped ones, real time. */
import type { Knex } from 'knex';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { generateSigningKey } from '../../shared/signing/keys.js';

export function shippedAgentsContext(
  db: Knex,
  agents: readonly Manifest[],
  messaging: ServiceContext['messaging'],
  log: ServiceContext['log'],
): ServiceContext {
  return {
    db,
    registry: createRegistry(agents.map((manifest) => ({ manifest, origin: 'shipped' as const }))),
    messaging,
    log,
    settings: DEFAULT_SETTINGS,
    now: () => Date.now(),
    signingKey: generateSigningKey(),
  };
}
