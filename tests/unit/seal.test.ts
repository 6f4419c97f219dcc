/**
 * Sealing (shared/crypto/seal.ts), the one encryption of endpoint credentials and webhook signing secrets: rows
 * already stored must still open, so the format is pinned here by values sealed before the module existed and by an
 * independent AES-256-GCM written out with node:crypto.
 */
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { fromColumns, seal, sealingKey, toColumns, unseal, UnsealError, type Sealed } from '../../shared/crypto/seal.js';

const SECRET = 'a-file-secret-for-the-sealing-vectors-0123456789';
const CREDENTIAL_INFO = 'holon endpoint credential v1';
const WEBHOOK_INFO = 'holon webhook signing secret v1';

const fromHex = (v: { keyId: string; iv: string; ciphertext: string; tag: string }): Sealed => ({
  keyId: v.keyId,
  iv: Buffer.from(v.iv, 'hex'),
  ciphertext: Buffer.from(v.ciphertext, 'hex'),
  tag: Buffer.from(v.tag, 'hex'),
});

/** Sealed by the endpoint credentials' and webhook secrets' own code before they shared this module. */
const STORED = [
  {
    info: CREDENTIAL_INFO,
    owner: 'alice/echo',
    plaintext: 'tok_abc123',
    sealed: { keyId: '2a18db6ca7b05c04', iv: '54f5e5251e7745f1bf966237', ciphertext: '6ac8fb52b53a91197661', tag: '81ce61fb486bf5551a5c0d490c699f5d' },
  },
  {
    info: WEBHOOK_INFO,
    owner: 'webhook:alice',
    plaintext: 'whsec_AAAA',
    sealed: { keyId: 'fc0a0e38a83a9554', iv: 'bba61fac00f685863b526694', ciphertext: '6c04ce2125ac3a250b33', tag: 'b22c80663475a510f172c60e8ab14e3c' },
  },
];

/** The format written out independently: HKDF-SHA256 (salt `holon agent_credentials`), AES-256-GCM, AAD = owner. */
const reference = {
  key: (info: string) => Buffer.from(hkdfSync('sha256', SECRET, 'holon agent_credentials', info, 32)),
  seal(info: string, owner: string, plaintext: string, keyId: string): Sealed {
    const iv = Buffer.alloc(12, 7);
    const cipher = createCipheriv('aes-256-gcm', reference.key(info), iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId, iv, ciphertext, tag: cipher.getAuthTag() };
  },
  open(info: string, owner: string, s: Sealed): string {
    const decipher = createDecipheriv('aes-256-gcm', reference.key(info), s.iv);
    decipher.setAAD(Buffer.from(owner, 'utf8'));
    decipher.setAuthTag(s.tag);
    return Buffer.concat([decipher.update(s.ciphertext), decipher.final()]).toString('utf8');
  },
};

const flip = (b: Buffer, i = 0): Buffer => {
  const c = Buffer.from(b);
  c[i] = c[i]! ^ 1;
  return c;
};

test('values stored before this module open, with the same key ids', () => {
  for (const v of STORED) {
    const key = sealingKey(SECRET, v.info);
    expect(key.id).toBe(v.sealed.keyId);
    expect(unseal(key, v.owner, fromHex(v.sealed))).toBe(v.plaintext);
  }
});

test('the format is the independent AES-256-GCM both ways', () => {
  for (const info of [CREDENTIAL_INFO, WEBHOOK_INFO]) {
    const key = sealingKey(SECRET, info);
    expect(key.key.equals(reference.key(info))).toBe(true);
    const byReference = reference.seal(info, 'bob/echo', 'tok_xyz', key.id);
    expect(unseal(key, 'bob/echo', byReference)).toBe('tok_xyz');
    expect(reference.open(info, 'bob/echo', seal(key, 'bob/echo', 'tok_xyz'))).toBe('tok_xyz');
  }
});

test('any text round-trips, through its row columns too; a fresh IV each time', () => {
  const key = sealingKey(SECRET, CREDENTIAL_INFO);
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string({ minLength: 1, maxLength: 60 }), (plaintext, owner) => {
      const sealed = seal(key, owner, plaintext);
      expect(sealed.iv).toHaveLength(12);
      expect(sealed.tag).toHaveLength(16);
      expect(unseal(key, owner, fromColumns(toColumns(sealed)))).toBe(plaintext);
    }),
  );
  const a = seal(key, 'bob/echo', 'same');
  const b = seal(key, 'bob/echo', 'same');
  expect(a.iv.equals(b.iv)).toBe(false);
  expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
});

test('a tampered value, another owner or another purpose does not open', () => {
  const key = sealingKey(SECRET, CREDENTIAL_INFO);
  const sealed = seal(key, 'bob/echo', 'tok_secret');
  const refusal = (s: Sealed, owner = 'bob/echo', k = key): unknown => {
    try {
      unseal(k, owner, s);
    } catch (e) {
      return e;
    }
    return undefined;
  };
  for (const bad of [
    { ...sealed, ciphertext: flip(sealed.ciphertext) },
    { ...sealed, tag: flip(sealed.tag) },
    { ...sealed, iv: flip(sealed.iv) },
  ]) {
    const e = refusal(bad);
    expect(e).toBeInstanceOf(UnsealError);
    expect((e as UnsealError).reason).toBe('does_not_authenticate');
  }
  expect((refusal(sealed, 'eve/echo') as UnsealError).reason).toBe('does_not_authenticate');
  // Another purpose's key, or another secret's: recognised by the key id, never decrypted.
  for (const other of [sealingKey(SECRET, WEBHOOK_INFO), sealingKey(`${SECRET}-rotated`, CREDENTIAL_INFO)]) {
    const e = refusal(sealed, 'bob/echo', other) as UnsealError;
    expect(e).toBeInstanceOf(UnsealError);
    expect(e.reason).toBe('other_key');
    expect(e.message).not.toContain('tok_secret');
  }
});
