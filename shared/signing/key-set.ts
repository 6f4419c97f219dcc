/**
 * The gateway's public key set, served at GET /.well-known/jwks.json (RFC 7517): the signing key, then the retired
 * keys of HOLON_RETIRED_KEYS, each with the time it stopped signing (`retired_at`), so a receipt signed before a
 * rotation still verifies. Only public halves: a retired key given with its private part (`d`) is refused.
 */
import { calculateJwkThumbprint } from 'jose';
import { parseTimestamp } from '../core/timestamps.js';
import { ConfigError } from '../platform/config.js';
import type { PublicJwk, SigningKey } from './keys.js';

/** One entry of the key set. */
export interface KeySetEntry extends PublicJwk {
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
  /** A retired key: when it stopped signing (RFC 3339, UTC). */
  retired_at?: string;
}

export interface KeySet {
  keys: KeySetEntry[];
}

const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$/;

/** HOLON_RETIRED_KEYS: a JSON array of public Ed25519 JWKs, each with `retired_at`; a ConfigError otherwise. */
export async function parseRetiredKeys(text: string | undefined): Promise<KeySetEntry[]> {
  if (text === undefined) return [];
  const what = 'HOLON_RETIRED_KEYS';
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    throw new ConfigError(`${what} must be a JSON array of public keys, each {"kty":"OKP","crv":"Ed25519","x":…,"retired_at":…}`);
  }
  if (!Array.isArray(list)) throw new ConfigError(`${what} must be a JSON array`);
  return Promise.all(list.map((item, i) => retiredEntry(item, `${what}[${i}]`)));
}

const RETIRED_AT = 'must be the RFC 3339 time the key stopped signing, such as 2026-03-01T00:00:00Z';

/**
 * What is wrong with a public key of a key set — its type, its 32-byte `x`, and its `retired_at` when present — as
 * the member it is about (`''`, `.x`, `.retired_at`) and a sentence; null when it is well formed.
 */
export function publicKeyProblem(jwk: Record<string, unknown>): { at: string; message: string } | null {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') return { at: '', message: 'must be an Ed25519 key ("kty":"OKP","crv":"Ed25519")' };
  if (typeof jwk.x !== 'string' || !BASE64URL_32.test(jwk.x)) return { at: '.x', message: 'must be the 32-byte public key in base64url' };
  if (jwk.retired_at !== undefined && !(typeof jwk.retired_at === 'string' && parseTimestamp(jwk.retired_at).ok)) {
    return { at: '.retired_at', message: RETIRED_AT };
  }
  return null;
}

async function retiredEntry(item: unknown, where: string): Promise<KeySetEntry> {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ConfigError(`${where} must be a JWK object`);
  const jwk = item as Record<string, unknown>;
  if ('d' in jwk) throw new ConfigError(`${where} holds a private key ("d"): list only the public half`);
  const problem = publicKeyProblem({ retired_at: null, ...jwk });
  if (problem) throw new ConfigError(`${where}${problem.at} ${problem.message}`);
  const at = parseTimestamp(String(jwk.retired_at));
  if (!at.ok) throw new ConfigError(`${where}.retired_at ${RETIRED_AT}`);
  const publicJwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x) };
  return { ...entryOf(publicJwk, await calculateJwkThumbprint(publicJwk, 'sha256')), retired_at: at.instant.iso };
}

function entryOf(jwk: PublicJwk, kid: string): KeySetEntry {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, alg: 'EdDSA', use: 'sig' };
}

/** The key set: the signing key first, then the retired ones; a retired key that is the signing key is a ConfigError. */
export function keySetOf(current: SigningKey, retired: readonly KeySetEntry[]): KeySet {
  if (retired.some((k) => k.kid === current.kid)) throw new ConfigError('HOLON_RETIRED_KEYS lists the current signing key');
  return { keys: [entryOf(current.publicJwk, current.kid), ...retired] };
}
