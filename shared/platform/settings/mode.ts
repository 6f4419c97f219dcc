/** The two switches every other setting is read under: production, and hosted mode. */
import { inSection, ROLES, setting } from './declare.js';

export const MODE = inSection('gateway', {
  production: setting.is({
    env: 'NODE_ENV',
    value: 'production',
    doc: '`production`: the production check (below), https URLs only, no agent host inside `serve` (the entrypoint runs it)',
    roles: [...ROLES, 'entrypoint'],
  }),
  hosted: setting.toggle({
    env: 'HOLON_HOSTED',
    section: 'hosted',
    default: false,
    flips: ['1', 'true'],
    doc: '`1` (or `--hosted`): accounts, API keys, principals, idempotent calls, rate limits, moderation (`docs/hosted.md`)',
    roles: ROLES,
    production: {
      refuses: 'without `HOLON_HOSTED=1`',
      check: (hosted) =>
        hosted
          ? undefined
          : 'production needs HOLON_HOSTED=1 (accounts and API keys): without it the gateway would run in dev mode, where nothing asks for a key',
    },
  }),
});
