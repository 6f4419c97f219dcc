/**
 * Signed file links (gateway.md §6 `_meta["holon/files"]`, §7 "Files"): `GET /v0/files/{id}?exp=<unix s>&sig=<sig>`,
 * no key. The signature is HMAC-SHA256 over the kind of file, its id and the expiry, under a key derived from
 * HOLON_FILE_SECRET with HKDF-SHA256 (its own salt and info: the sealing keys of shared/crypto/seal.ts are other keys
 * from the same secret). `sig` is base64url, 43 characters. A link is bound to one file and one expiry;
 * changing either, or the kind, breaks it.
 *
 * Kinds: `upload` (POST /v0/files) is served today; `eval` is for the evaluator's fixtures
 * (`holon://evals/<capability>/<name>`), which will be signed by the same function.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** How long a link stays valid (15 minutes). */
export const LINK_TTL_S = 15 * 60;

export interface LinkTarget {
  kind: 'upload' | 'eval';
  /** An upload id (`f_…`), or an eval fixture's `<capability>/<name>`. */
  id: string;
}

const SALT = 'holon files';
const INFO = 'holon file link v1';
const SIG = /^[A-Za-z0-9_-]{43}$/;
const EXP = /^[0-9]{1,12}$/;

const keys = new Map<string, Buffer>();

function linkKey(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, SALT, INFO, 32));
    if (keys.size > 8) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

function mac(secret: string, target: LinkTarget, exp: number): Buffer {
  return createHmac('sha256', linkKey(secret)).update(`${target.kind}\n${target.id}\n${exp}`, 'utf8').digest();
}

/** The signature of a link to `target` valid until `exp` (unix seconds). */
export function signFileLink(secret: string, target: LinkTarget, exp: number): string {
  if (!Number.isSafeInteger(exp) || exp < 0) throw new TypeError('exp must be a whole number of seconds');
  return mac(secret, target, exp).toString('base64url');
}

export type LinkVerdict = 'ok' | 'expired' | 'invalid';

/** A link's `exp` and `sig` query parameters, as given (anything: they come from the URL). */
interface SignedLink {
  exp: unknown;
  sig: unknown;
}

/**
 * Is (`exp`, `sig`) a link to `target`, still valid at `nowMs`? The signature is compared in constant time, and
 * before the expiry is looked at: an expired link says `expired` only when it was a real one.
 */
export function verifyFileLink(secret: string, target: LinkTarget, link: SignedLink, nowMs: number): LinkVerdict {
  const { exp, sig } = link;
  if (typeof exp !== 'string' || typeof sig !== 'string' || !EXP.test(exp) || !SIG.test(sig)) return 'invalid';
  // Compared as text: base64url has several spellings of the last character for the same bytes, and only ours counts.
  const expected = Buffer.from(mac(secret, target, Number(exp)).toString('base64url'), 'ascii');
  const given = Buffer.from(sig, 'ascii');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return Number(exp) * 1000 > nowMs ? 'ok' : 'expired';
}

/** The download URL of an upload: `<origin>/v0/files/<id>?exp=…&sig=…`. */
export function uploadLinkUrl(secret: string, origin: string, id: string, exp: number): string {
  return `${origin.replace(/\/+$/, '')}/v0/files/${encodeURIComponent(id)}?exp=${exp}&sig=${signFileLink(secret, { kind: 'upload', id }, exp)}`;
}

/** The download URL of an evaluation fixture: `<origin>/v0/files/evals/<capability>/<name>?exp=…&sig=…`. */
export function evalLinkUrl(secret: string, origin: string, fixture: { capability: string; name: string }, exp: number): string {
  const { capability, name } = fixture;
  const id = `${capability}/${name}`;
  return `${origin.replace(/\/+$/, '')}/v0/files/evals/${encodeURIComponent(capability)}/${encodeURIComponent(name)}?exp=${exp}&sig=${signFileLink(secret, { kind: 'eval', id }, exp)}`;
}
