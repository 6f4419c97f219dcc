/**
 * The public half of every key that signed on this gateway (`signing_keys`, migration 021): each process registers
 * its key before it signs anything, `holon keys rotate` marks the one it replaces with the time it stopped signing.
 * The key set (GET /.well-known/jwks.json) lists them after the configured ones, so a receipt verifies whichever
 * process signed it; backups carry them. Never a private key.
 */
import type { Queryable } from '../db/connect.js';
import { fromJsonb } from '../db/connect.js';
import type { KeySet, KeySetEntry } from './key-set.js';
import type { PublicJwk, SigningKey } from './keys.js';

/** Register this process's key (idempotent: a key is registered once, whoever registers it first). */
export async function registerSigningKey(db: Queryable, key: SigningKey): Promise<void> {
  await db.raw('INSERT INTO signing_keys (kid, public_jwk) VALUES (?, ?::jsonb) ON CONFLICT (kid) DO NOTHING', [key.kid, JSON.stringify(key.publicJwk)]);
}

/** Every registered key, oldest first, a retired one with its `retired_at`. */
async function storedKeys(db: Queryable): Promise<KeySetEntry[]> {
  const rows = (await db('signing_keys')
    .orderBy([{ column: 'first_used_at' }, { column: 'kid' }])
    .select('kid', 'public_jwk', 'retired_at')) as Array<{
    kid: string;
    public_jwk: unknown;
    retired_at: Date | string | null;
  }>;
  return rows.map((row) => {
    const jwk = fromJsonb(row.public_jwk) as PublicJwk;
    return {
      kty: 'OKP',
      crv: 'Ed25519',
      x: jwk.x,
      kid: row.kid,
      alg: 'EdDSA',
      use: 'sig',
      ...(row.retired_at ? { retired_at: new Date(row.retired_at).toISOString() } : {}),
    };
  });
}

/** Mark a key as no longer signing from `at` on (`holon keys rotate`); answers whether it was registered. */
export async function retireStoredKey(db: Queryable, kid: string, at: Date): Promise<boolean> {
  const n = await db('signing_keys').where({ kid }).whereNull('retired_at').update({ retired_at: at });
  return Number(n) > 0;
}

/** The configured key set, then every registered key it does not list yet. */
export async function fullKeySet(db: Queryable, configured: KeySet): Promise<KeySet> {
  const listed = new Set(configured.keys.map((k) => k.kid));
  return { keys: [...configured.keys, ...(await storedKeys(db)).filter((k) => !listed.has(k.kid))] };
}
