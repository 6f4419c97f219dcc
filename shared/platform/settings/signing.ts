/** The gateway's signing key, the keys it retired, and the receipt log's checkpoints (docs/receipts.md). */
import { inSection, ROLES, setting } from './declare.js';

/** The receipt log's origin when neither HOLON_LOG_ORIGIN nor HOLON_PUBLIC_URL is set. */
export const DEFAULT_LOG_ORIGIN = 'holon.localhost/receipts';

export const SIGNING = inSection('gateway', {
  /** Read by shared/signing/keys.ts. */
  signingKey: setting.secret({
    env: 'HOLON_SIGNING_KEY',
    generated: false,
    shown: 'PGlite: generated once into `signing-key.jwk` beside `HOLON_DB`; Postgres: one per process, with a warning',
    doc: 'the Ed25519 private key receipts, mandates and log checkpoints are signed with, a JWK or PKCS#8 PEM (`openssl genpkey -algorithm ed25519`), the same in every process; its key id is its RFC 7638 thumbprint, its public half is served at `/.well-known/jwks.json` (`docs/receipts.md`). Required in production. Never logged',
    roles: ROLES,
    production: { needs: '(an Ed25519 private key, the same in every process: it signs receipts, mandates and the log)' },
  }),
  /** Read by shared/signing/key-set.ts. */
  retiredKeys: setting.string({
    env: 'HOLON_RETIRED_KEYS',
    shown: 'none',
    doc: 'a JSON array of the public JWKs that signed before a rotation, each with `retired_at` (RFC 3339, when it stopped signing); listed in `/.well-known/jwks.json` so older signatures still verify',
    roles: ['api'],
  }),
  /** A C2SP checkpoint origin: printable ASCII without spaces or '+' (also the signed note's key name); parse.ts fills the default. */
  logOrigin: setting.string({
    env: 'HOLON_LOG_ORIGIN',
    default: '',
    pattern: /^[!-*,-~]{1,200}$/,
    mustBe: 'must be printable ASCII without spaces or "+", such as holon.example.com/receipts',
    overrideWins: true,
    shown: `\`<host of HOLON_PUBLIC_URL>/receipts\`, else \`${DEFAULT_LOG_ORIGIN}\``,
    doc: "the receipt log's origin: the first line of its checkpoints and the key name of their signed notes (`docs/receipts.md`)",
    roles: ROLES,
  }),
  checkpointS: setting.int({
    env: 'HOLON_CHECKPOINT_S',
    default: 10,
    min: 1,
    max: 3600,
    doc: 'how often, in seconds, the settler signs a new checkpoint of the receipt log while receipts arrive',
    roles: ['settler'],
  }),
});
