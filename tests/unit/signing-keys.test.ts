/**
 * shared/signing/keys.ts and key-set.ts: HOLON_SIGNING_KEY as a JWK and as PKCS#8 PEM, the kid (RFC 7638, checked on
 * RFC 8037's example key), refusals (another key type, a public key, garbage, a mismatched "x") that never repeat the
 * setting, the dev key file (generated once, mode 0600, the same key on the next start), the per-process key on
 * Postgres with its warning, and HOLON_RETIRED_KEYS (public only, a retired_at each, never the current key).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/platform/config.js';
import { keySetOf, parseRetiredKeys } from '../../shared/signing/key-set.js';
import { keyFileOf, loadSigningKey } from '../../shared/signing/keys.js';

/** RFC 8037 Appendix A.1 / A.3: the example Ed25519 key and its RFC 7638 thumbprint. */
const RFC8037 = { kty: 'OKP', crv: 'Ed25519', d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
const RFC8037_KID = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k';

const noWarning = (message: string) => {
  throw new Error(`unexpected warning: ${message}`);
};
const fromSetting = (signingKey: string) => loadSigningKey({ signingKey, dbDir: '/nonexistent/db' }, noWarning);

/** The ConfigError's message for this setting (fails when it loads). */
async function refusal(signingKey: string): Promise<string> {
  const e = await fromSetting(signingKey).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return (e as Error).message;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('HOLON_SIGNING_KEY', () => {
  it('reads a private JWK; the kid is its RFC 7638 thumbprint; what it signs verifies with the public JWK', async () => {
    const key = await fromSetting(JSON.stringify(RFC8037));
    expect(key).toMatchObject({ kid: RFC8037_KID, source: 'setting', publicJwk: { kty: 'OKP', crv: 'Ed25519', x: RFC8037.x } });
    expect(key.publicJwk).not.toHaveProperty('d');
    const jws = await key.signCompact(new TextEncoder().encode('{"a":1}'));
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK({ ...key.publicJwk }, 'EdDSA'));
    expect(new TextDecoder().decode(payload)).toBe('{"a":1}');
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: RFC8037_KID });
  });

  it('a detached signature made on the thread pool is the one made here (Ed25519 is deterministic) and verifies', async () => {
    const key = await fromSetting(JSON.stringify(RFC8037));
    const payloads = Array.from({ length: 20 }, (_, i) => new TextEncoder().encode(`{"receipt":${i}}`));
    const here = await Promise.all(payloads.map((p) => key.signDetached(p, 'holon-receipt')));
    const pool = await Promise.all(payloads.map((p) => key.signDetached(p, 'holon-receipt', { offThread: true })));
    expect(pool).toEqual(here);
    const publicKey = await importJWK({ ...key.publicJwk }, 'EdDSA');
    for (const [i, jws] of pool.entries()) {
      const [header, , signature] = jws.split('.');
      const { payload, protectedHeader } = await compactVerify(`${header}.${Buffer.from(payloads[i]!).toString('base64url')}.${signature}`, publicKey);
      expect(new TextDecoder().decode(payload)).toBe(`{"receipt":${i}}`);
      expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: RFC8037_KID, typ: 'holon-receipt' });
    }
  });

  it('reads PKCS#8 PEM: the same key as its JWK, the same kid', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const fromPem = await fromSetting(pem);
    const fromJwk = await fromSetting(JSON.stringify(privateKey.export({ format: 'jwk' })));
    expect(fromPem.kid).toBe(fromJwk.kid);
    expect(fromPem.kid).toBe(await calculateJwkThumbprint(fromPem.publicJwk, 'sha256'));
  });

  it('refuses a P-256 key, as a JWK or as PEM', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (const text of [JSON.stringify(privateKey.export({ format: 'jwk' })), privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()]) {
      expect(await refusal(text)).toMatch(/^HOLON_SIGNING_KEY must be an Ed25519 private key.*, not an ec key$/);
    }
  });

  it('refuses garbage, a public key alone and a mismatched "x", never repeating the setting', async () => {
    const secret = 'nWGxne_s3cr3t_9WmC6hEr0kuwsxERJxWl7Mm';
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    const bad = [
      secret,
      `{${secret}`,
      JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: secret }),
      JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: RFC8037.x }),
      `-----BEGIN PRIVATE KEY-----\n${secret}\n-----END PRIVATE KEY-----`,
      JSON.stringify({ ...RFC8037, x: other }),
    ];
    for (const text of bad) {
      const message = await refusal(text);
      expect(message).toMatch(/^HOLON_SIGNING_KEY must be an Ed25519 private key/);
      expect(message).not.toContain(secret);
      expect(message).not.toContain(RFC8037.d);
    }
  });
});

describe('without HOLON_SIGNING_KEY', () => {
  it('on the embedded database: generates a key once, keeps it beside the database directory (0600), loads it again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'holon-keys-'));
    dirs.push(dir);
    const dbDir = path.join(dir, 'data', 'db');
    const first = await loadSigningKey({ dbDir }, noWarning);
    const file = keyFileOf(dbDir);
    expect(file).toBe(path.join(dir, 'data', 'signing-key.jwk'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ kty: 'OKP', crv: 'Ed25519', x: first.publicJwk.x });
    const second = await loadSigningKey({ dbDir }, noWarning);
    expect(second).toMatchObject({ kid: first.kid, source: 'file' });
    const jws = await second.signCompact(new Uint8Array([1, 2, 3]));
    await expect(compactVerify(jws, await importJWK({ ...first.publicJwk }, 'EdDSA'))).resolves.toBeDefined();
  });

  it('on Postgres: a key of this process only, with a warning; the next process has another', async () => {
    const warnings: string[] = [];
    const settings = { databaseUrl: 'postgres://db/holon', dbDir: '/nonexistent/db' };
    const a = await loadSigningKey(settings, (m) => warnings.push(m));
    const b = await loadSigningKey(settings, (m) => warnings.push(m));
    expect(a.source).toBe('ephemeral');
    expect(a.kid).not.toBe(b.kid);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/HOLON_SIGNING_KEY is not set/);
  });
});

describe('HOLON_RETIRED_KEYS and the key set', () => {
  const retiredX = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;

  it('lists the current key, then each retired one with its kid and retired_at, and no private part', async () => {
    const current = await fromSetting(JSON.stringify(RFC8037));
    const retired = await parseRetiredKeys(
      JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x: retiredX, retired_at: '2026-03-01T01:00:00+01:00', kid: 'ignored' }]),
    );
    const set = keySetOf(current, retired);
    const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: retiredX }, 'sha256');
    expect(set).toEqual({
      keys: [
        { kty: 'OKP', crv: 'Ed25519', x: RFC8037.x, kid: RFC8037_KID, alg: 'EdDSA', use: 'sig' },
        { kty: 'OKP', crv: 'Ed25519', x: retiredX, kid, alg: 'EdDSA', use: 'sig', retired_at: '2026-03-01T00:00:00.000Z' },
      ],
    });
    expect(JSON.stringify(set)).not.toContain('"d"');
    expect(await parseRetiredKeys(undefined)).toEqual([]);
  });

  it('refuses a private key, another key type, a missing or bad retired_at, not an array, and the current key', async () => {
    const ok = { kty: 'OKP', crv: 'Ed25519', x: retiredX, retired_at: '2026-03-01T00:00:00Z' };
    const cases: Array<[unknown, RegExp]> = [
      [[{ ...RFC8037, retired_at: ok.retired_at }], /HOLON_RETIRED_KEYS\[0\] holds a private key/],
      [[ok, { ...ok, kty: 'EC', crv: 'P-256' }], /HOLON_RETIRED_KEYS\[1\] must be an Ed25519 key/],
      [[{ ...ok, x: 'short' }], /HOLON_RETIRED_KEYS\[0\]\.x must be/],
      [[{ ...ok, retired_at: undefined }], /HOLON_RETIRED_KEYS\[0\]\.retired_at must be/],
      [[{ ...ok, retired_at: '2026-02-30T00:00:00Z' }], /retired_at must be the RFC 3339 time/],
      [ok, /must be a JSON array/],
    ];
    for (const [value, message] of cases) await expect(parseRetiredKeys(JSON.stringify(value))).rejects.toThrow(message);
    await expect(parseRetiredKeys('[{')).rejects.toThrow(ConfigError);
    const current = await fromSetting(JSON.stringify(RFC8037));
    const self = await parseRetiredKeys(JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x: RFC8037.x, retired_at: ok.retired_at }]));
    expect(() => keySetOf(current, self)).toThrow(/lists the current signing key/);
  });
});
