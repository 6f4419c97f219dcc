/** What a gateway open to the public needs: its public addresses, the proxy in front, the operator key, the file secret (gateway.md §7 "Operating"). */
import { MIN_SECRET_LENGTH } from '../../core/secret-strength.js';
import { inSection, ROLES, setting } from './declare.js';

/** The public URL is an origin: a path, a query or a fragment would be pasted into every signed link and log name. */
function originOnly(publicUrl: string | undefined): string | undefined {
  if (!publicUrl) return undefined;
  const u = new URL(publicUrl);
  if ((u.pathname === '/' || u.pathname === '') && !u.search && !u.hash) return undefined;
  return `HOLON_PUBLIC_URL must be an origin only (https://host or https://host:port), without a path, query or fragment: set it to ${u.origin}`;
}

export const HOSTED = inSection('hosted', {
  adminKey: setting.secret({
    env: 'HOLON_ADMIN_KEY',
    generated: true,
    minLength: 'always',
    doc: 'the operator key, 32+ random characters (demo credit, moderation, `GET /metrics`). Production needs it',
    roles: ['api'],
    production: { needs: `(${MIN_SECRET_LENGTH}+ random characters: demo credit and moderation)` },
  }),
  /** The client address is the last `X-Forwarded-For` entry (services/api/client-address.ts). */
  trustProxy: setting.flag({
    env: 'HOLON_TRUST_PROXY',
    meaning: 'behind a proxy that appends X-Forwarded-For',
    doc: '`1` behind exactly one proxy that appends `X-Forwarded-For`; `0` exposed directly. Production needs it set',
    roles: ['api'],
    production: { needs: 'set explicitly: 1 behind a proxy (else every visitor shares one rate limit), 0 if exposed directly' },
  }),
  publicUrl: setting.url({
    env: 'HOLON_PUBLIC_URL',
    shown: "this process's API",
    doc: 'the public origin, no trailing slash: signed file links and the GitHub callback point there. Production needs it',
    roles: ['api', 'runner', 'evaluator'],
    production: {
      needs: '(the public https origin: signed file links point there)',
      check: originOnly,
      refuses: 'with a `HOLON_PUBLIC_URL` that is not an origin',
    },
  }),
  siteUrl: setting.url({
    env: 'HOLON_SITE_URL',
    doc: 'the public site: the console links to its terms and privacy pages; allowed as an Origin (`docs/demo.md`). Production needs it',
    roles: ['api'],
    production: { needs: '(the public https site: the console links to its terms and privacy pages)' },
  }),
  fileSecret: setting.secret({
    env: 'HOLON_FILE_SECRET',
    generated: true,
    minLength: 'production',
    shown: 'random, per process',
    doc: 'signs file links and encrypts endpoint credentials and webhook secrets; stable, the same in every process (32+ characters in production)',
    roles: ROLES,
    production: { needs: `(${MIN_SECRET_LENGTH}+ random characters, stable across restarts: signs file links)` },
  }),
});
