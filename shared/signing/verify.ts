/**
 * Verifying a detached JWS the gateway signed (a receipt's or a mandate's `signature`, docs/receipts.md) against a
 * key set: `header..signature`, `alg` EdDSA, the expected `typ`, a `kid` the set lists — and, for a retired key, a
 * document signed before it retired. Used by `holon verify`; never throws on a bad signature, it answers why.
 */
import { flattenedVerify, importJWK } from 'jose';
import type { KeySet } from './key-set.js';

export type Verified = { ok: true; kid: string } | { ok: false; reason: string };

const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;

/** `expected.typ`: the kind of document; `expected.signedAt`: when it says it was signed (checked against a retired key's time). */
export async function verifyDetached(jws: string, payload: Uint8Array, keySet: KeySet, expected: { typ: string; signedAt?: string }): Promise<Verified> {
  const { typ, signedAt } = expected;
  const parts = DETACHED.exec(jws);
  if (!parts) return { ok: false, reason: 'the signature is not a compact JWS with a detached payload (header..signature)' };
  let header: { alg?: unknown; kid?: unknown; typ?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as typeof header;
  } catch {
    return { ok: false, reason: 'the signature’s protected header is not JSON' };
  }
  if (header.alg !== 'EdDSA') return { ok: false, reason: `the signature’s alg is ${JSON.stringify(header.alg)}, not EdDSA` };
  if (header.typ !== typ) return { ok: false, reason: `the signature’s typ is ${JSON.stringify(header.typ)}, not ${typ}` };
  const key = keySet.keys.find((k) => k.kid === header.kid);
  if (!key) return { ok: false, reason: `the signing key ${JSON.stringify(header.kid)} is not in the key set` };
  if (key.retired_at && signedAt && Date.parse(signedAt) > Date.parse(key.retired_at)) {
    return { ok: false, reason: `key ${key.kid} retired at ${key.retired_at}, before this was signed (${signedAt})` };
  }
  try {
    await flattenedVerify(
      { protected: parts[1]!, payload: Buffer.from(payload).toString('base64url'), signature: parts[2]! },
      await importJWK({ kty: 'OKP', crv: 'Ed25519', x: key.x }, 'EdDSA'),
    );
  } catch {
    return { ok: false, reason: `the signature does not verify with key ${key.kid}: the document was changed, or signed by another key` };
  }
  return { ok: true, kid: key.kid };
}
