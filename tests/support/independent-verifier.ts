/**
 * tests/support/independent-verifier.ts: an independent, third-party verifier of what the Holon gateway publishes —
 * its key set, its signed receipts (and mandates), the Merkle log's inclusion and consistency proofs, and its
 * checkpoints.
 *
 * It deliberately imports NOTHING from the project (no `shared/`, no `services/`, no other `tests/support/` module):
 * only `node:crypto`, `jose` and `canonicalize` (the RFC 8785 reference implementation). Everything here is written
 * from the public formats — RFC 7515/7638/8037 (JWS, JWK thumbprint, EdDSA), RFC 8785 (JCS), RFC 6962 / RFC 9162
 * (Merkle tree hashing and proof verification) and C2SP tlog-checkpoint + signed-note — so that a bug shared by the
 * gateway's code and its own tests cannot hide here.
 *
 * Formats checked:
 * - Key set: `{"keys":[{"kty":"OKP","crv":"Ed25519","x":…,"kid":<RFC 7638 thumbprint>,"alg":"EdDSA","use":"sig",
 *   "retired_at"?:<RFC 3339>}]}`, no other members.
 * - Receipt signature: a compact JWS with a detached payload (`<header>..<signature>`), protected header exactly
 *   `{"alg":"EdDSA","kid":…,"typ":"holon-receipt"}`, over the UTF-8 bytes of the RFC 8785 canonical JSON of the
 *   receipt without its `signature` and `children` fields. Mandates: same scheme, `typ` `holon-mandate`.
 * - Merkle log: leaf = SHA-256(0x00 ‖ canonical receipt bytes), node = SHA-256(0x01 ‖ left ‖ right).
 * - Checkpoint: `<origin>\n<size>\n<base64 root>\n` + `\n` + lines `— <origin> <base64(key id ‖ Ed25519 sig)>\n`,
 *   key id = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[0:4].
 *
 * Verifiers never throw: malformed input is a failure with a `reason`.
 */
import { createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import reference from 'canonicalize';
import { calculateJwkThumbprint, flattenedVerify, importJWK } from 'jose';

const canonicalize = reference as unknown as (v: unknown) => string | undefined;

export type VerifyResult = { ok: true } | { ok: false; reason: string };

/** One entry of the gateway's key set (`GET /.well-known/jwks.json`). */
export interface KeySetKey {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: string;
  use: string;
  retired_at?: string;
}

export interface KeySet {
  keys: KeySetKey[];
}

const RECEIPT_TYP = 'holon-receipt';
export const MANDATE_TYP = 'holon-mandate';

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------------------------
// Strict encodings
// ---------------------------------------------------------------------------------------------------------------

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Unpadded base64url (RFC 7515 §2), canonical only (re-encoding gives the same text); null otherwise. */
function decodeBase64url(text: unknown): Buffer | null {
  if (typeof text !== 'string' || !BASE64URL.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** Padded standard base64 (RFC 4648 §4), canonical only; null otherwise. */
export function decodeBase64(text: unknown): Buffer | null {
  if (typeof text !== 'string' || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function isRfc3339(v: unknown): boolean {
  return typeof v === 'string' && RFC3339.test(v) && !Number.isNaN(Date.parse(v));
}

// ---------------------------------------------------------------------------------------------------------------
// Key set
// ---------------------------------------------------------------------------------------------------------------

const KEY_MEMBERS = new Set(['kty', 'crv', 'x', 'kid', 'alg', 'use', 'retired_at']);

/** The synchronous part of a key-set entry's check: its shape. A reason, or null when the shape is right. */
function keyShapeProblem(entry: unknown): string | null {
  if (!isObject(entry)) return 'key is not an object';
  for (const name of Object.keys(entry)) if (!KEY_MEMBERS.has(name)) return `key member ${name}`;
  if (entry.kty !== 'OKP') return 'key kty';
  if (entry.crv !== 'Ed25519') return 'key crv';
  if (decodeBase64url(entry.x)?.length !== 32) return 'key x';
  if (typeof entry.kid !== 'string' || entry.kid === '') return 'key kid';
  if (entry.alg !== 'EdDSA') return 'key alg';
  if (entry.use !== 'sig') return 'key use';
  if ('retired_at' in entry && !isRfc3339(entry.retired_at)) return 'key retired_at';
  return null;
}

/** Shape, and that `kid` is the RFC 7638 thumbprint (SHA-256, base64url) of `{crv, kty, x}`. */
async function keyProblem(entry: unknown): Promise<string | null> {
  const shape = keyShapeProblem(entry);
  if (shape !== null) return shape;
  const key = entry as KeySetKey;
  const thumbprint = await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x }, 'sha256');
  return thumbprint === key.kid ? null : 'kid is not the key thumbprint';
}

/** The whole key set: `{"keys":[…]}` and nothing else, every entry well formed with its thumbprint as kid, no kid twice. */
export async function verifyKeySet(keySet: unknown): Promise<VerifyResult> {
  try {
    if (!isObject(keySet)) return fail('key set is not an object');
    if (Object.keys(keySet).some((name) => name !== 'keys')) return fail('key set member');
    if (!Array.isArray(keySet.keys) || keySet.keys.length === 0) return fail('key set keys');
    const seen = new Set<string>();
    for (const entry of keySet.keys) {
      const problem = await keyProblem(entry);
      if (problem !== null) return fail(problem);
      const kid = (entry as KeySetKey).kid;
      if (seen.has(kid)) return fail('duplicate kid');
      seen.add(kid);
    }
    return { ok: true };
  } catch {
    return fail('key set');
  }
}

function keysOf(keySet: unknown): unknown[] | null {
  return isObject(keySet) && Array.isArray(keySet.keys) ? keySet.keys : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Detached JWS (receipts, mandates)
// ---------------------------------------------------------------------------------------------------------------

const HEADER_MEMBERS = new Set(['alg', 'kid', 'typ']);

/**
 * A compact JWS with a detached payload (`<b64url header>..<b64url signature>`), protected header exactly
 * `{"alg":"EdDSA","kid":…,"typ":<typ>}`, verified over `payload` with the key-set key whose kid matches (and whose kid
 * is its thumbprint). Reasons: 'jws not a string', 'malformed jws', 'not detached', 'header', 'alg', 'typ', 'kid',
 * 'unknown key', 'duplicate kid', a key problem ('kid is not the key thumbprint', 'key x', …), 'signature'.
 */
export async function verifyDetachedJws(
  jws: string,
  payload: Uint8Array,
  keySet: KeySet,
  typ: string,
): Promise<VerifyResult & { header?: Record<string, unknown> }> {
  try {
    if (typeof jws !== 'string') return fail('jws not a string');
    const parts = jws.split('.');
    if (parts.length !== 3) return fail('malformed jws');
    const [protectedHeader, body, signature] = parts as [string, string, string];
    if (body !== '') return fail('not detached');
    if (protectedHeader === '' || signature === '' || decodeBase64url(signature) === null) return fail('malformed jws');
    const headerBytes = decodeBase64url(protectedHeader);
    if (headerBytes === null) return fail('malformed jws');
    let header: unknown;
    try {
      header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
    } catch {
      return fail('header');
    }
    if (!isObject(header) || Object.keys(header).some((name) => !HEADER_MEMBERS.has(name))) return fail('header');
    if (header.alg !== 'EdDSA') return fail('alg');
    if (header.typ !== typ) return fail('typ');
    if (typeof header.kid !== 'string' || header.kid === '') return fail('kid');
    if (!(payload instanceof Uint8Array)) return fail('payload');
    const keys = keysOf(keySet);
    if (keys === null) return fail('key set');
    const matching = keys.filter((entry) => isObject(entry) && entry.kid === header.kid);
    if (matching.length === 0) return fail('unknown key');
    if (matching.length > 1) return fail('duplicate kid');
    const problem = await keyProblem(matching[0]);
    if (problem !== null) return fail(problem);
    const entry = matching[0] as KeySetKey;
    const key = await importJWK({ kty: entry.kty, crv: entry.crv, x: entry.x }, 'EdDSA');
    try {
      await flattenedVerify({ protected: protectedHeader, payload: Buffer.from(payload).toString('base64url'), signature }, key, {
        algorithms: ['EdDSA'],
      });
    } catch {
      return fail('signature');
    }
    return { ok: true, header };
  } catch {
    return fail('jws');
  }
}

/** The bytes a receipt's signature and leaf hash cover: RFC 8785 JSON of the receipt without `signature` and `children`. */
function receiptPayload(receipt: unknown): Buffer | null {
  try {
    if (!isObject(receipt)) return null;
    const signed = Object.fromEntries(Object.entries(receipt).filter(([name]) => name !== 'signature' && name !== 'children'));
    const text = canonicalize(signed);
    return typeof text === 'string' ? Buffer.from(text, 'utf8') : null;
  } catch {
    return null;
  }
}

/** One receipt's own signature (`typ` `holon-receipt`); its children are not looked at. */
export async function verifyReceiptSignature(receipt: unknown, keySet: KeySet): Promise<VerifyResult> {
  if (!isObject(receipt)) return fail('receipt is not an object');
  if (typeof receipt.signature !== 'string') return fail('unsigned');
  const payload = receiptPayload(receipt);
  if (payload === null) return fail('canonical form');
  const result = await verifyDetachedJws(receipt.signature, payload, keySet, RECEIPT_TYP);
  return result.ok ? { ok: true } : fail(result.reason);
}

/**
 * A receipt and, recursively, every receipt in its `children` (absent = none), and the tree's own rules, which no
 * signature covers (a signature leaves `children` out): every child's `parent` is the receipt it is listed under
 * (`children[i]: parent`), no receipt id appears twice in the tree (`children[i]: duplicate id`), and where a
 * receipt's `cost.downstream` is not zero — it passed its children's costs through — its children's `cost.total`
 * add up to it exactly, in its currency (`downstream`). A child's failure is reported with its path:
 * `children[1].children[0]: signature`.
 */
export async function verifyReceiptTree(receipt: unknown, keySet: KeySet): Promise<VerifyResult> {
  return verifyTreeAt(receipt, keySet, '', new Set());
}

/** A decimal amount string in micro-units (at most 6 decimals), or null. */
function micros(v: unknown): bigint | null {
  if (typeof v !== 'string') return null;
  const m = /^(\d+)\.(\d{1,6})$/.exec(v);
  return m ? BigInt(m[1]!) * 1_000_000n + BigInt(m[2]!.padEnd(6, '0')) : null;
}

/** `cost.downstream` non-zero: the sum of the children's `cost.total` in the same currency. */
function downstreamAddsUp(receipt: Record<string, unknown>, children: unknown[]): boolean {
  // A receipt that states no downstream cost (another format's) has no sum to check.
  if (!isObject(receipt.cost) || !('downstream' in receipt.cost)) return true;
  const downstream = micros(receipt.cost.downstream);
  if (downstream === null) return false;
  if (downstream === 0n) return true;
  let sum = 0n;
  for (const child of children) {
    if (!isObject(child) || child.currency !== receipt.currency || !isObject(child.cost)) return false;
    const total = micros(child.cost.total);
    if (total === null) return false;
    sum += total;
  }
  return sum === downstream;
}

async function verifyTreeAt(receipt: unknown, keySet: KeySet, path: string, seen: Set<unknown>): Promise<VerifyResult> {
  const at = (reason: string) => fail(path === '' ? reason : `${path}: ${reason}`);
  const own = await verifyReceiptSignature(receipt, keySet);
  if (!own.ok) return at(own.reason);
  const r = receipt as Record<string, unknown>;
  if (seen.has(r.id)) return at('duplicate id');
  seen.add(r.id);
  const children = r.children;
  if (children === undefined) return { ok: true };
  if (!Array.isArray(children)) return at('children is not an array');
  for (const [i, child] of children.entries()) {
    const childPath = `${path === '' ? '' : `${path}.`}children[${i}]`;
    if (!isObject(child) || child.parent !== r.id) return fail(`${childPath}: parent`);
    const result = await verifyTreeAt(child, keySet, childPath, seen);
    if (!result.ok) return result;
  }
  if (!downstreamAddsUp(r, children)) return at('downstream');
  return { ok: true };
}

/**
 * A mandate view (`GET /v0/mandates/{id}`): its statement's signature (`typ` `holon-mandate`, over the RFC 8785 JSON
 * of `statement`), and its unsigned `mandate` equal to the signed `statement.mandate`, `revoked` aside (revocation is
 * not in what was signed): otherwise `mandate differs from statement`.
 */
export async function verifyMandateView(view: unknown, keySet: KeySet): Promise<VerifyResult> {
  if (!isObject(view) || !isObject(view.statement) || typeof view.signature !== 'string') return fail('unsigned');
  const text = canonicalize(view.statement);
  if (typeof text !== 'string') return fail('canonical form');
  const signed = await verifyDetachedJws(view.signature, Buffer.from(text, 'utf8'), keySet, MANDATE_TYP);
  if (!signed.ok) return fail(signed.reason);
  const withoutRevoked = (doc: unknown) => (isObject(doc) ? Object.fromEntries(Object.entries(doc).filter(([name]) => name !== 'revoked')) : doc);
  const same = canonicalize(withoutRevoked(view.mandate)) === canonicalize(withoutRevoked(view.statement.mandate));
  return same ? { ok: true } : fail('mandate differs from statement');
}

// ---------------------------------------------------------------------------------------------------------------
// Merkle tree (RFC 6962 §2.1, RFC 9162 §2.1)
// ---------------------------------------------------------------------------------------------------------------

/** MTH({}) = SHA-256 of the empty string. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.from([0x00]))
    .update(data)
    .digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.from([0x01]))
    .update(left)
    .update(right)
    .digest();
}

/** A receipt's leaf hash: SHA-256(0x00 ‖ its canonical bytes without `signature` and `children`); null if it has none. */
export function receiptLeafHash(receipt: unknown): Buffer | null {
  const payload = receiptPayload(receipt);
  return payload === null ? null : leafHash(payload);
}

/** The naive MTH over leaf HASHES (each already SHA-256(0x00 ‖ entry)): split at the largest power of two below n. */
export function merkleRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return Buffer.from(leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

function isHash(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array && v.length === 32;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** RFC 9162 §2.1.3.2: is `leaf` at `index` in the tree of `size` leaves with root `root`, by the audit path `proof`? */
export function verifyInclusion(leaf: Buffer, index: number, size: number, proof: Buffer[], root: Buffer): boolean {
  try {
    if (!isHash(leaf) || !isHash(root) || !isCount(index) || !isCount(size)) return false;
    if (!Array.isArray(proof) || !proof.every(isHash)) return false;
    // 1. leaf_index must be below tree_size.
    if (index >= size) return false;
    // 2. fn = leaf_index, sn = tree_size - 1 (BigInt: JavaScript's bitwise operators are 32-bit).
    let fn = BigInt(index);
    let sn = BigInt(size - 1);
    // 3. r = hash.
    let r: Buffer = Buffer.from(leaf);
    // 4. For each p in inclusion_path:
    for (const p of proof) {
      // a. sn 0 with path left: fail.
      if (sn === 0n) return false;
      // b. LSB(fn) set, or fn == sn: r = HASH(0x01 ‖ p ‖ r), then (if LSB(fn) unset) shift until LSB(fn) set or fn 0.
      if ((fn & 1n) === 1n || fn === sn) {
        r = nodeHash(p, r);
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      } else {
        //    otherwise r = HASH(0x01 ‖ r ‖ p).
        r = nodeHash(r, p);
      }
      // c. shift both once.
      fn >>= 1n;
      sn >>= 1n;
    }
    // 5. sn must be 0 and r the root.
    return sn === 0n && sameBytes(r, root);
  } catch {
    return false;
  }
}

/**
 * RFC 9162 §2.1.4.2: is the tree of `size1` leaves with root `root1` a prefix of the tree of `size2` leaves with root
 * `root2`, by `proof`? Edge cases outside §2.1.4.2's 0 < size1 < size2: size1 == size2 needs an empty proof and equal
 * roots; size1 == 0 needs an empty proof and `root1` the empty-tree hash; size1 > size2 fails.
 */
export function verifyConsistency(size1: number, size2: number, proof: Buffer[], root1: Buffer, root2: Buffer): boolean {
  try {
    if (!isCount(size1) || !isCount(size2) || !isHash(root1) || !isHash(root2)) return false;
    if (!Array.isArray(proof) || !proof.every(isHash)) return false;
    if (size1 > size2) return false;
    if (size1 === size2) return proof.length === 0 && sameBytes(root1, root2);
    if (size1 === 0) return proof.length === 0 && sameBytes(root1, EMPTY_ROOT);
    // 1. An empty consistency_path fails.
    if (proof.length === 0) return false;
    // 2. first an exact power of 2: prepend first_hash.
    const first = BigInt(size1);
    const path: Uint8Array[] = (first & (first - 1n)) === 0n ? [root1, ...proof] : [...proof];
    // 3. fn = first - 1, sn = second - 1.
    let fn = first - 1n;
    let sn = BigInt(size2 - 1);
    // 4. LSB(fn) set: shift both until it is not.
    while ((fn & 1n) === 1n) {
      fn >>= 1n;
      sn >>= 1n;
    }
    // 5. fr = sr = the first value of the path.
    let fr: Buffer = Buffer.from(path[0]!);
    let sr: Buffer = Buffer.from(path[0]!);
    // 6. For each subsequent value c:
    for (const c of path.slice(1)) {
      // a. sn 0: fail.
      if (sn === 0n) return false;
      // b. LSB(fn) set or fn == sn: fr = HASH(0x01 ‖ c ‖ fr), sr = HASH(0x01 ‖ c ‖ sr); then (LSB(fn) unset) shift
      //    both until LSB(fn) set or fn 0.
      if ((fn & 1n) === 1n || fn === sn) {
        fr = nodeHash(c, fr);
        sr = nodeHash(c, sr);
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      } else {
        //    otherwise sr = HASH(0x01 ‖ sr ‖ c).
        sr = nodeHash(sr, c);
      }
      // c. shift both once.
      fn >>= 1n;
      sn >>= 1n;
    }
    // 7. fr == first_hash, sr == second_hash, sn == 0.
    return sameBytes(fr, root1) && sameBytes(sr, root2) && sn === 0n;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Checkpoints (C2SP tlog-checkpoint, signed-note)
// ---------------------------------------------------------------------------------------------------------------

export type CheckpointResult = { ok: true; origin: string; size: number; root: Buffer; kid: string } | { ok: false; reason: string };

/** signed-note key id of an Ed25519 key: SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)[0:4]. */
export function noteKeyId(name: string, publicKey: Uint8Array): Buffer {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, 0x01]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

const SIGNATURE_LINE = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/;
const SIZE = /^(?:0|[1-9][0-9]*)$/;
// Control characters other than newline (signed-note forbids them in the text and signatures).
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/;

/**
 * A checkpoint note: body exactly `<origin>\n<size>\n<base64 root>\n`, a blank line, then signature lines
 * `— <name> <base64(key id ‖ signature)>\n`. Lines whose name is not the origin are other signers' and ignored; a line
 * named after the origin is tried against every key-set key (the one whose note key id matches first). Needs one
 * line that verifies under a key whose note key id it carries. Reasons: 'not a string', 'control character',
 * 'missing blank line', 'signature lines', 'malformed signature line', 'body lines', 'origin', 'size', 'root',
 * 'key set' / a key problem, 'no known signer' (no line from a key of the set), 'invalid signature' (a line carries
 * the id of a known key but does not verify), 'key id mismatch' (verifies only under a key whose id it does not carry).
 */
export function verifyCheckpointNote(note: string, keySet: KeySet): CheckpointResult {
  try {
    if (typeof note !== 'string') return fail('not a string');
    if (CONTROL.test(note)) return fail('control character');
    const split = note.lastIndexOf('\n\n');
    if (split < 0) return fail('missing blank line');
    const text = note.slice(0, split + 1);
    const signatures = note.slice(split + 2);
    if (signatures === '' || !signatures.endsWith('\n')) return fail('signature lines');

    const body = text.split('\n');
    if (body.length !== 4 || body[3] !== '') return fail('body lines');
    const [origin, sizeText, rootText] = body as [string, string, string, string];
    if (origin === '') return fail('origin');
    if (!SIZE.test(sizeText)) return fail('size');
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size)) return fail('size');
    const root = decodeBase64(rootText);
    if (root === null || root.length !== 32) return fail('root');

    const lines: { name: string; bytes: Buffer | null }[] = [];
    for (const line of signatures.slice(0, -1).split('\n')) {
      const match = SIGNATURE_LINE.exec(line);
      if (match === null) return fail('malformed signature line');
      lines.push({ name: match[1]!, bytes: decodeBase64(match[2]) });
    }

    const keys = keysOf(keySet);
    if (keys === null || keys.length === 0) return fail('key set');
    const candidates: { kid: string; id: Buffer; key: KeyObject }[] = [];
    for (const entry of keys) {
      const problem = keyShapeProblem(entry);
      if (problem !== null) return fail(problem);
      const { x, kid } = entry as KeySetKey;
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      candidates.push({ kid, id: noteKeyId(origin, decodeBase64url(x)!), key });
    }

    const textBytes = Buffer.from(text, 'utf8');
    let knownIdSeen = false;
    let idMismatch = false;
    for (const { name, bytes } of lines) {
      if (name !== origin) continue; // another signer's line (a witness, say): not ours to check.
      const id = bytes !== null && bytes.length >= 4 ? bytes.subarray(0, 4) : null;
      const carriesKnownId = id !== null && candidates.some((c) => c.id.equals(id));
      if (carriesKnownId) knownIdSeen = true;
      if (bytes === null || bytes.length !== 68) continue;
      const signature = bytes.subarray(4);
      const ordered = [...candidates.filter((c) => c.id.equals(id!)), ...candidates.filter((c) => !c.id.equals(id!))];
      for (const candidate of ordered) {
        if (!cryptoVerify(null, textBytes, candidate.key, signature)) continue;
        if (candidate.id.equals(id!)) return { ok: true, origin, size, root, kid: candidate.kid };
        idMismatch = true;
      }
    }
    if (idMismatch) return fail('key id mismatch');
    return fail(knownIdSeen ? 'invalid signature' : 'no known signer');
  } catch {
    return fail('checkpoint');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A receipt's proof, end to end
// ---------------------------------------------------------------------------------------------------------------

/** What the gateway serves as a receipt's proof. */
interface ReceiptProof {
  receipt: string;
  leaf_index: number;
  leaf_hash: string;
  inclusion: string[];
  checkpoint: { origin: string; size: number; root_hash: string; note: string; created_at: string };
}

type ProofCheck = 'key set' | 'proof' | 'receipt id' | 'signature' | 'leaf' | 'checkpoint signature' | 'checkpoint fields' | 'inclusion';

export type ProofResult = { ok: true } | { ok: false; reason: ProofCheck; detail?: string };

const proofFail = (reason: ProofCheck, detail?: string): ProofResult => (detail === undefined ? { ok: false, reason } : { ok: false, reason, detail });

function proofShapeProblem(proof: unknown): string | null {
  if (!isObject(proof)) return 'not an object';
  if (typeof proof.receipt !== 'string') return 'receipt';
  if (!isCount(proof.leaf_index)) return 'leaf_index';
  if (typeof proof.leaf_hash !== 'string') return 'leaf_hash';
  if (!Array.isArray(proof.inclusion) || !proof.inclusion.every((p) => typeof p === 'string')) return 'inclusion';
  const c = proof.checkpoint;
  if (!isObject(c)) return 'checkpoint';
  if (typeof c.origin !== 'string') return 'checkpoint.origin';
  if (!isCount(c.size)) return 'checkpoint.size';
  if (typeof c.root_hash !== 'string') return 'checkpoint.root_hash';
  if (typeof c.note !== 'string') return 'checkpoint.note';
  if (!isRfc3339(c.created_at)) return 'checkpoint.created_at';
  return null;
}

/**
 * End to end, in this order: the key set ('key set'); the proof's shape ('proof'); `receipt.id === proof.receipt`
 * ('receipt id'); the receipt's signature and its children's ('signature'); the leaf hash recomputed from the receipt
 * equals `leaf_hash` ('leaf'); the checkpoint note's signature ('checkpoint signature'); the note's origin, size and
 * root equal the checkpoint's fields ('checkpoint fields'); the inclusion proof of the recomputed leaf at `leaf_index`
 * up to the note's root ('inclusion'). `detail` says more where there is more to say.
 */
export async function verifyReceiptProof({ receipt, proof, keySet }: { receipt: unknown; proof: unknown; keySet: unknown }): Promise<ProofResult> {
  try {
    const keys = await verifyKeySet(keySet);
    if (!keys.ok) return proofFail('key set', keys.reason);
    const shape = proofShapeProblem(proof);
    if (shape !== null) return proofFail('proof', shape);
    const p = proof as ReceiptProof;
    const ks = keySet as KeySet;
    if (!isObject(receipt) || receipt.id !== p.receipt) return proofFail('receipt id');

    const signature = await verifyReceiptTree(receipt, ks);
    if (!signature.ok) return proofFail('signature', signature.reason);

    const leaf = receiptLeafHash(receipt);
    const given = decodeBase64(p.leaf_hash);
    if (leaf === null || given === null || !leaf.equals(given)) return proofFail('leaf');

    const note = verifyCheckpointNote(p.checkpoint.note, ks);
    if (!note.ok) return proofFail('checkpoint signature', note.reason);
    if (note.origin !== p.checkpoint.origin) return proofFail('checkpoint fields', 'origin');
    if (note.size !== p.checkpoint.size) return proofFail('checkpoint fields', 'size');
    const root = decodeBase64(p.checkpoint.root_hash);
    if (root === null || !root.equals(note.root)) return proofFail('checkpoint fields', 'root_hash');

    const path = p.inclusion.map((h) => decodeBase64(h));
    if (path.some((h) => h === null || h.length !== 32)) return proofFail('inclusion', 'malformed hash');
    if (!verifyInclusion(leaf, p.leaf_index, note.size, path as Buffer[], note.root)) return proofFail('inclusion');
    return { ok: true };
  } catch {
    return proofFail('proof', 'unexpected');
  }
}
