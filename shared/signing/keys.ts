/**
 * The gateway's Ed25519 signing key (docs/receipts.md, "Signing keys"): what receipts will be signed with, and its key
 * id, the RFC 7638 thumbprint (SHA-256) of its public JWK.
 *
 * HOLON_SIGNING_KEY holds it, as a private JWK (`{"kty":"OKP","crv":"Ed25519","d":…,"x":…}`) or as PKCS#8 PEM
 * (`openssl genpkey -algorithm ed25519`); any other key type, or text that is not a key, is a ConfigError that never
 * repeats the setting's text. Without it, a gateway on the embedded database (PGlite) generates one on first start and
 * keeps it beside the database directory (`<HOLON_DB>/../signing-key.jwk`, mode 0600), so it survives restarts; a
 * gateway on Postgres (`DATABASE_URL`) generates one for this process only and warns, since every process, and every
 * restart, would sign with another key. Production will require HOLON_SIGNING_KEY, the same in every process.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CompactSign } from 'jose';
import { ConfigError } from '../platform/config.js';

/** An Ed25519 public key as a JWK (RFC 8037). */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

export interface SigningKey {
  /** RFC 7638 thumbprint (SHA-256, base64url) of `publicJwk`. */
  kid: string;
  publicJwk: PublicJwk;
  /** Where it came from: the setting, the key file of the data directory, or this process only. */
  source: 'setting' | 'file' | 'ephemeral';
  /** A compact JWS (RFC 7515) of `payload`, `{"alg":"EdDSA","kid":…}` in its protected header. */
  signCompact(payload: Uint8Array): Promise<string>;
  /**
   * A compact JWS with a detached payload (RFC 7515 Appendix F: `header..signature`), `{"alg":"EdDSA","kid":…,"typ":…}`
   * in its protected header: what receipts and mandates carry as `signature`. `offThread`: signed on libuv's thread
   * pool, not this thread — for many signatures at once (a settlement batch's receipts), where the thread's time is
   * what counts; one signature alone is faster here (no hop).
   */
  signDetached(payload: Uint8Array, typ: string, options?: { offThread?: boolean }): Promise<string>;
  /** The bare Ed25519 signature of `data` (64 bytes): what a C2SP signed note carries (shared/signing/signed-note.ts). */
  signBytes(data: Uint8Array): Buffer;
}

/** Where the key comes from: HOLON_SIGNING_KEY, else the data directory of the embedded database. */
export interface KeySettings {
  signingKey?: string;
  databaseUrl?: string;
  dbDir: string;
}

/** The dev gateway's key file: beside the PGlite directory. */
export function keyFileOf(dbDir: string): string {
  return path.join(path.dirname(path.resolve(dbDir)), 'signing-key.jwk');
}

/** The key from the settings, the key file, or a new one; `warn` hears about a key that will not outlive the process. */
export async function loadSigningKey(settings: KeySettings, warn: (message: string) => void): Promise<SigningKey> {
  if (settings.signingKey !== undefined) return keyOfSetting(settings.signingKey);
  if (settings.databaseUrl !== undefined) {
    warn('HOLON_SIGNING_KEY is not set: this process signs with a key of its own, lost when it stops');
    return generateSigningKey();
  }
  return signingKeyOf(keyFromFile(keyFileOf(settings.dbDir)), 'file');
}

/** The key file's key, or a new key written there first (created exclusively: two starts at once keep one key). */
function keyFromFile(file: string): KeyObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`cannot read the signing key file ${file}: ${(e as Error).message}`);
    const key = generateKeyPairSync('ed25519').privateKey;
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${JSON.stringify(key.export({ format: 'jwk' }))}\n`, { mode: 0o600, flag: 'wx' });
      return key;
    } catch (w) {
      if ((w as NodeJS.ErrnoException).code !== 'EEXIST') throw w;
      text = readFileSync(file, 'utf8');
    }
  }
  return parsePrivateKey(text, `the signing key file ${file}`);
}

/** An Ed25519 private key from a JWK or PKCS#8 PEM; a ConfigError naming `what` (never quoting it) otherwise. */
function parsePrivateKey(text: string, what: string): KeyObject {
  const expected = `${what} must be an Ed25519 private key: a JWK {"kty":"OKP","crv":"Ed25519","d":…,"x":…} or PKCS#8 PEM`;
  const trimmed = text.trim();
  let key: KeyObject;
  let jwk: JsonWebKey | undefined;
  try {
    if (trimmed.startsWith('{')) {
      jwk = JSON.parse(trimmed) as JsonWebKey;
      key = createPrivateKey({ key: jwk, format: 'jwk' });
    } else if (trimmed.startsWith('-----BEGIN')) {
      key = createPrivateKey(trimmed);
    } else {
      throw new ConfigError(`${expected} (it is neither)`);
    }
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`${expected} (it could not be read as one)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError(`${expected}, not an ${key.asymmetricKeyType ?? 'unknown'} key`);
  if (jwk && jwk.x !== undefined && jwk.x !== publicJwkOf(key).x) throw new ConfigError(`${expected}: its "x" is not the public half of its "d"`);
  return key;
}

/** The public half of an Ed25519 key, as a JWK of exactly kty, crv and x. */
function publicJwkOf(key: KeyObject): PublicJwk {
  const { x } = createPublicKey(key).export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x: x! };
}

/**
 * `holon keys rotate` on a dev gateway: the key file's key replaced by a new one (written beside it, then renamed over
 * it: a crash leaves the old key or the new, never half of one). Answers both; a missing key file is a ConfigError.
 */
export function rotateKeyFile(file: string): { old: SigningKey; next: SigningKey } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `there is no signing key to rotate at ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): a gateway writes it on its first start`,
    );
  }
  const old = signingKeyOf(parsePrivateKey(text, `the signing key file ${file}`), 'file');
  const key = generateKeyPairSync('ed25519').privateKey;
  const temporary = `${file}.next`;
  writeFileSync(temporary, `${JSON.stringify(key.export({ format: 'jwk' }))}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  return { old, next: signingKeyOf(key, 'file') };
}

/** `holon keys rotate` where HOLON_SIGNING_KEY holds the key: a new private JWK (its text, to set) and the key it makes. */
export function newPrivateJwk(): { text: string; key: SigningKey } {
  const key = generateKeyPairSync('ed25519').privateKey;
  return { text: JSON.stringify(key.export({ format: 'jwk' })), key: signingKeyOf(key, 'setting') };
}

/** The key HOLON_SIGNING_KEY holds (a ConfigError, never quoting it, when it is not an Ed25519 private key). */
export function keyOfSetting(text: string): SigningKey {
  return signingKeyOf(parsePrivateKey(text, 'HOLON_SIGNING_KEY'), 'setting');
}

/** A new key for this process only: what a test, a bench or a gateway on Postgres without HOLON_SIGNING_KEY signs with. */
export function generateSigningKey(): SigningKey {
  return signingKeyOf(generateKeyPairSync('ed25519').privateKey, 'ephemeral');
}

/** RFC 7638: SHA-256 of the JWK's required members (crv, kty, x), in that order, without whitespace; base64url. */
function jwkThumbprint(jwk: PublicJwk): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
}

function signingKeyOf(privateKey: KeyObject, source: SigningKey['source']): SigningKey {
  const publicJwk = publicJwkOf(privateKey);
  const kid = jwkThumbprint(publicJwk);
  /** The protected header of each `typ` signed, base64url: built once. */
  const headers: Record<string, string> = {};
  return {
    kid,
    publicJwk,
    source,
    signCompact: (payload) => new CompactSign(payload).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey),
    signDetached: async (payload, typ, options) => {
      // RFC 7515 by hand, with node:crypto's Ed25519: synchronous by default (jose's signer always goes to the thread
      // pool, ~70 µs more per signature alone on this machine: docs/PERFORMANCE.md); jose verifies what this makes.
      headers[typ] ??= Buffer.from(JSON.stringify({ alg: 'EdDSA', kid, typ })).toString('base64url');
      const header = headers[typ];
      const input = Buffer.from(`${header}.${Buffer.from(payload).toString('base64url')}`);
      const signature = options?.offThread
        ? await new Promise<Buffer>((resolve, reject) => sign(null, input, privateKey, (err, sig) => (err ? reject(err) : resolve(sig))))
        : sign(null, input, privateKey);
      return `${header}..${signature.toString('base64url')}`;
    },
    signBytes: (data) => sign(null, data, privateKey),
  };
}
