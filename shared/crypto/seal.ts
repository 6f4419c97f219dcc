/**
 * Sealing a short secret for a database row: AES-256-GCM with a random 12-byte IV and the 16-byte auth tag, under a
 * 32-byte key derived from HOLON_FILE_SECRET with HKDF-SHA256. The salt is fixed; `info` names the purpose, so each
 * purpose has its own key. The AAD binds a value to its owner: a row copied to another owner does not open. Each row
 * keeps the key's id (the first 16 hex characters of SHA-256 of the derived key), so a row sealed under another
 * secret is recognised, never decrypted to garbage.
 *
 * Used by endpoint credentials (shared/publishing/credentials.ts, `agent_credentials`) and webhook signing secrets
 * (shared/webhooks/secrets.ts, `webhook_secrets`); both tables keep a sealed value in the columns `key_id`, `iv`,
 * `ciphertext` and `tag`. Changing the salt, the cipher or the key id would leave every stored row unreadable.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** The HKDF salt of every purpose (named after the first table that used it; stored rows depend on it). */
const SALT = 'holon agent_credentials';
const CIPHER = 'aes-256-gcm';

export interface SealingKey {
  key: Buffer;
  /** A short hash of the derived key, stored with each row. */
  id: string;
}

export interface Sealed {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** A sealed value as its row holds it. */
export interface SealedColumns {
  key_id: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** A sealed value that does not open: sealed under another key (`other_key`), or altered, or not its owner's. */
export class UnsealError extends Error {
  override readonly name = 'UnsealError';
  constructor(readonly reason: 'other_key' | 'does_not_authenticate') {
    super(reason === 'other_key' ? 'sealed under another key' : 'the sealed value does not authenticate');
  }
}

/** The key of one purpose (`info`) under a secret. */
export function sealingKey(secret: string, info: string): SealingKey {
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, info, 32));
  return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 16) };
}

/** Seal `plaintext` for `owner` (the AAD); a fresh IV each time. */
export function seal(key: SealingKey, owner: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv(CIPHER, key.key, iv);
  cipher.setAAD(Buffer.from(owner, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { keyId: key.id, iv, ciphertext, tag: cipher.getAuthTag() };
}

/** The plaintext, or UnsealError (another key id; a tampered value; another owner). */
export function unseal(key: SealingKey, owner: string, sealed: Sealed): string {
  if (sealed.keyId !== key.id) throw new UnsealError('other_key');
  try {
    const decipher = createDecipheriv(CIPHER, key.key, sealed.iv);
    decipher.setAAD(Buffer.from(owner, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new UnsealError('does_not_authenticate');
  }
}

export function toColumns(sealed: Sealed): SealedColumns {
  return { key_id: sealed.keyId, iv: sealed.iv, ciphertext: sealed.ciphertext, tag: sealed.tag };
}

export function fromColumns(row: SealedColumns): Sealed {
  return { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, tag: row.tag };
}
