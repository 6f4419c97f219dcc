/**
 * Endpoint credentials' crypto (shared/publishing/credentials.ts, sealed by shared/crypto/seal.ts): AES-256-GCM under
 * an HKDF key from HOLON_FILE_SECRET, with a key id that recognises another secret.
 */
import { expect, test } from 'vitest';
import {
  credentialKey,
  CredentialUnreadableError,
  MAX_TOKEN_LENGTH,
  OTHER_SECRET_MESSAGE,
  openCredential,
  tokenProblem,
} from '../../shared/publishing/credentials.js';
import { seal } from '../../shared/crypto/seal.js';

const SECRET = 'a-file-secret-of-more-than-thirty-two-characters';
const TOKEN = 'tok_3xAmpLe-Secret.value/with+symbols=';

test('a sealed token opens again under the same secret; the ciphertext does not contain it', () => {
  const key = credentialKey(SECRET);
  const sealed = seal(key, 'bob/echo', TOKEN);
  expect(sealed.iv).toHaveLength(12);
  expect(sealed.tag).toHaveLength(16);
  expect(sealed.keyId).toBe(key.id);
  expect(sealed.keyId).toMatch(/^[0-9a-f]{16}$/);
  expect(sealed.ciphertext.toString('latin1')).not.toContain(TOKEN);
  expect(openCredential(credentialKey(SECRET), 'bob/echo', sealed)).toBe(TOKEN);
  // A fresh IV each time: the same token never seals to the same bytes.
  const again = seal(key, 'bob/echo', TOKEN);
  expect(again.iv.equals(sealed.iv)).toBe(false);
  expect(again.ciphertext.equals(sealed.ciphertext)).toBe(false);
});

test('a tampered row is refused, not decrypted', () => {
  const key = credentialKey(SECRET);
  const sealed = seal(key, 'bob/echo', TOKEN);
  const flip = (b: Buffer, i = 0) => {
    const c = Buffer.from(b);
    c[i] = c[i]! ^ 1;
    return c;
  };
  for (const bad of [
    { ...sealed, ciphertext: flip(sealed.ciphertext) },
    { ...sealed, tag: flip(sealed.tag) },
    { ...sealed, iv: flip(sealed.iv) },
  ]) {
    expect(() => openCredential(key, 'bob/echo', bad)).toThrow(CredentialUnreadableError);
  }
  // Bound to its agent: the row copied to another agent does not open.
  expect(() => openCredential(key, 'eve/echo', sealed)).toThrow(/does not authenticate/);
});

test('another secret is recognised by its key id and never decrypted', () => {
  const sealed = seal(credentialKey(SECRET), 'bob/echo', TOKEN);
  const other = credentialKey(`${SECRET}-rotated`);
  expect(other.id).not.toBe(sealed.keyId);
  let thrown: unknown;
  try {
    openCredential(other, 'bob/echo', sealed);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(CredentialUnreadableError);
  expect((thrown as Error).message).toBe(OTHER_SECRET_MESSAGE);
  expect((thrown as Error).message).not.toContain(TOKEN);
});

test('token rules: 1–4096 printable ASCII characters without whitespace; messages never repeat the token', () => {
  expect(tokenProblem('x')).toBeUndefined();
  expect(tokenProblem('!'.repeat(MAX_TOKEN_LENGTH))).toBeUndefined();
  for (const bad of ['', 'a b', 'a\tb', 'line\n', 'é', '\u0000', 'x'.repeat(MAX_TOKEN_LENGTH + 1), 42, null, undefined]) {
    const problem = tokenProblem(bad);
    expect(problem, JSON.stringify(bad)).toBeDefined();
    if (typeof bad === 'string' && bad.length > 1) expect(problem).not.toContain(bad);
  }
});
