/**
 * Signed notes (c2sp.org/signed-note) with Ed25519 keys, and the checkpoint body of a transparency log
 * (c2sp.org/tlog-checkpoint), as golang.org/x/mod/sumdb/note writes and reads them.
 *
 * A signed note is its text (valid UTF-8, ending in a newline, no ASCII control character but newline), one blank
 * line, then one or more signature lines `— <key name> <base64(4-byte key ID ‖ signature)>\n` (U+2014 EM DASH, a
 * space). A key name is non-empty, without Unicode white space or "+". For Ed25519 (signature type 0x01) the key ID is
 * SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)[:4] and the signature is Ed25519 (RFC 8032) over the text's
 * UTF-8 bytes, the final newline included, the blank line and signature lines not. A verifier key ("vkey") is written
 * `<name>+<8 hex digits of key ID>+<base64(0x01 ‖ public key)>`.
 *
 * `signNote` signs with an Ed25519 private KeyObject, or with a `NoteSigner` (a public key and a signing function, for
 * a key held elsewhere), whose signature it checks against that public key before writing it.
 *
 * `openNote` follows the spec's rules for readers: signatures by unknown keys (name and key ID not both those of a
 * known key) are ignored; a signature by a known key that fails to verify rejects the whole note (the spec's SHOULD,
 * as the Go implementation does); a note with no verified signature is rejected. It also refuses more than 100
 * signature lines (the spec asks for a limit of at least 16; 100 is Go's). Every rejection is `null`.
 *
 * A checkpoint body is exactly three lines: the origin, the tree size in decimal (no leading zeros but "0"), and the
 * standard padded base64 of the 32-byte RFC 6962 root hash. This module writes no extension lines and, parsing
 * strictly, accepts none.
 *
 * Pure: no I/O, only `node:crypto`.
 */
import { createHash, createPublicKey, KeyObject, sign, verify } from 'node:crypto';

/** A log's tree head, the content of a checkpoint body. */
export interface Checkpoint {
  origin: string;
  /** Leaves in the tree: a safe integer. */
  size: number;
  /** RFC 6962 root hash: 32 bytes. */
  rootHash: Uint8Array;
}

/** A key whose signatures `openNote` checks: its name and raw 32-byte Ed25519 public key. */
export interface NoteVerifier {
  name: string;
  publicKey: Uint8Array;
}

/** A signer that keeps its private key to itself: its raw 32-byte Ed25519 public key and a function signing bytes. */
export interface NoteSigner {
  publicKey: Uint8Array;
  /** The 64-byte Ed25519 signature of `data`. */
  sign(data: Uint8Array): Uint8Array;
}

/** What `openNote` returns for a note it accepts. */
export interface OpenedNote {
  /** The note text, its final newline included. */
  text: string;
  /** The names of the known keys whose signatures verified, in order of appearance, each once. */
  verifiedBy: string[];
}

const ED25519_TYPE = 0x01;
const ED25519_KEY_BYTES = 32;
const KEY_ID_BYTES = 4;
const ROOT_HASH_BYTES = 32;
const SIGNATURE_PREFIX = '\u2014 ';
const MAX_SIGNATURES = 100;

/** ASCII control characters other than newline, which signed notes must not contain. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
/** A UTF-16 surrogate without its other half: a string that has no UTF-8 encoding. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Unicode white space (what Go's unicode.IsSpace matches), or "+". */
const NOT_IN_NAME = /[\p{White_Space}+]/u;
/** Standard base64 with padding, of at least one byte. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;

// ---- small checks ---------------------------------------------------------------------------------------------------

/** Whether `text` is well-formed UTF-16 (so has a UTF-8 encoding) with no control character but newline. */
function isNoteSafe(text: string): boolean {
  return !LONE_SURROGATE.test(text) && !CONTROL.test(text);
}

/** Whether `name` is a valid key name: non-empty, well-formed, no white space, no "+". */
function isKeyName(name: string): boolean {
  return typeof name === 'string' && name.length > 0 && isNoteSafe(name) && !NOT_IN_NAME.test(name);
}

/** Throws unless `name` is a valid key name. */
function checkKeyName(name: string): void {
  if (!isKeyName(name)) throw new Error(`invalid key name ${JSON.stringify(name)}: it must be non-empty, without spaces or "+"`);
}

/** Throws unless `publicKey` is a raw 32-byte Ed25519 public key. */
function checkPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_KEY_BYTES) {
    throw new Error(`an Ed25519 public key is ${ED25519_KEY_BYTES} bytes`);
  }
}

/** Strict standard base64: padded, canonical (re-encodes to the same text), else null. */
function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

// ---- checkpoints ----------------------------------------------------------------------------------------------------

/** Throws unless `origin` can be a checkpoint's first line: non-empty, no newline or other control character. */
function checkOrigin(origin: string): void {
  if (typeof origin !== 'string' || origin.length === 0) throw new Error('checkpoint origin is empty');
  if (origin.includes('\n')) throw new Error('checkpoint origin contains a newline');
  if (!isNoteSafe(origin)) throw new Error('checkpoint origin contains a control character or an unpaired surrogate');
}

/** The note text of a checkpoint: origin, tree size and base64 root hash, one per line. */
export function checkpointBody({ origin, size, rootHash }: Checkpoint): string {
  checkOrigin(origin);
  if (!Number.isSafeInteger(size) || size < 0) throw new Error(`checkpoint tree size must be a non-negative safe integer, got ${String(size)}`);
  if (!(rootHash instanceof Uint8Array) || rootHash.length !== ROOT_HASH_BYTES) throw new Error(`checkpoint root hash must be ${ROOT_HASH_BYTES} bytes`);
  return `${origin}\n${size}\n${Buffer.from(rootHash).toString('base64')}\n`;
}

/** The tree size line as a number: decimal, no sign, no leading zero unless "0", a safe integer. */
function parseTreeSize(line: string): number {
  if (!/^(?:0|[1-9][0-9]*)$/.test(line)) throw new Error(`checkpoint tree size ${JSON.stringify(line)} is not a decimal number without leading zeros`);
  const size = Number(line);
  if (!Number.isSafeInteger(size)) throw new Error(`checkpoint tree size ${line} is larger than 2^53 - 1`);
  return size;
}

/** The root hash line as bytes: standard padded base64 of 32 bytes. */
function parseRootHash(line: string): Buffer {
  const root = decodeBase64(line);
  if (root === null) throw new Error(`checkpoint root hash ${JSON.stringify(line)} is not standard padded base64`);
  if (root.length !== ROOT_HASH_BYTES) throw new Error(`checkpoint root hash is ${root.length} bytes, not ${ROOT_HASH_BYTES}`);
  return root;
}

/** Parses a checkpoint body strictly (three newline-terminated lines, no extension lines); throws on anything else. */
export function parseCheckpointBody(text: string): Checkpoint & { rootHash: Buffer } {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new Error('checkpoint body does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new Error(`checkpoint body has ${lines.length} lines, not 3`);
  if (lines.length > 3) throw new Error('checkpoint body has extension lines, which are not accepted');
  const [origin, size, root] = lines as [string, string, string];
  checkOrigin(origin);
  return { origin, size: parseTreeSize(size), rootHash: parseRootHash(root) };
}

// ---- keys -----------------------------------------------------------------------------------------------------------

/** The Ed25519 key ID: SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)[:4]. */
export function ed25519KeyId(name: string, publicKey: Uint8Array): Buffer {
  checkKeyName(name);
  checkPublicKey(publicKey);
  const digest = createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, ED25519_TYPE]))
    .update(publicKey)
    .digest();
  return digest.subarray(0, KEY_ID_BYTES);
}

/** The verifier key string `<name>+<key ID in 8 hex digits>+<base64(0x01 ‖ public key)>`. */
export function verifierKey(name: string, publicKey: Uint8Array): string {
  const id = ed25519KeyId(name, publicKey).toString('hex');
  return `${name}+${id}+${Buffer.concat([Buffer.from([ED25519_TYPE]), publicKey]).toString('base64')}`;
}

/** A raw 32-byte Ed25519 public key as a KeyObject. */
function publicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
}

/** The raw 32-byte public key of an Ed25519 private key. */
function rawPublicKey(privateKey: KeyObject): Buffer {
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('the private key has no Ed25519 public key');
  return Buffer.from(x, 'base64url');
}

// ---- signing and opening --------------------------------------------------------------------------------------------

/** Throws unless `text` can be a note's text: ends with a newline, valid UTF-8, no control character but newline. */
function checkNoteText(text: string): void {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new Error('note text must end with a newline');
  if (!isNoteSafe(text)) throw new Error('note text must be valid UTF-8 without control characters other than newline');
}

/** The raw public key and signature of `data` by an Ed25519 private KeyObject. */
function signWithKeyObject(privateKey: KeyObject, data: Buffer): { publicKey: Buffer; signature: Buffer } {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') throw new Error('signing a note needs an Ed25519 private key');
  return { publicKey: rawPublicKey(privateKey), signature: sign(null, data, privateKey) };
}

/** The public key and signature of `data` by a NoteSigner, the signature checked against that public key. */
function signWithSigner(signer: NoteSigner, data: Buffer): { publicKey: Buffer; signature: Buffer } {
  checkPublicKey(signer.publicKey);
  const signature = Buffer.from(signer.sign(data));
  if (!ed25519Verifies(publicKeyObject(signer.publicKey), data, signature)) throw new Error("the signer's signature does not verify with its public key");
  return { publicKey: Buffer.from(signer.publicKey), signature };
}

/**
 * The signed note of `text` with one Ed25519 signature under key name `name`, by a private KeyObject (signed with
 * `node:crypto` `sign(null, text, key)`) or by a NoteSigner (whose signature is checked against its public key before
 * it is used). Throws when the text does not end with a newline or contains a control character (other than newline)
 * or an unpaired surrogate, when the name is invalid, or when the key is not an Ed25519 private key.
 */
export function signNote(text: string, name: string, key: KeyObject | NoteSigner): string {
  checkNoteText(text);
  checkKeyName(name);
  const data = Buffer.from(text, 'utf8');
  const { publicKey, signature } = key instanceof KeyObject ? signWithKeyObject(key, data) : signWithSigner(key, data);
  const keyId = ed25519KeyId(name, publicKey);
  return `${text}\n${SIGNATURE_PREFIX}${name} ${Buffer.concat([keyId, signature]).toString('base64')}\n`;
}

/** One parsed signature line. */
interface SignatureLine {
  name: string;
  keyId: Buffer;
  signature: Buffer;
}

/** A signature line (without its newline) parsed, or null when malformed. */
function parseSignatureLine(line: string): SignatureLine | null {
  if (!line.startsWith(SIGNATURE_PREFIX)) return null;
  const rest = line.slice(SIGNATURE_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space < 0) return null;
  const name = rest.slice(0, space);
  const blob = decodeBase64(rest.slice(space + 1));
  if (!isKeyName(name) || blob === null || blob.length <= KEY_ID_BYTES) return null;
  return { name, keyId: blob.subarray(0, KEY_ID_BYTES), signature: blob.subarray(KEY_ID_BYTES) };
}

/** The note split into its text and parsed signature lines, or null when malformed. */
function splitNote(signed: string): { text: string; lines: SignatureLine[] } | null {
  if (typeof signed !== 'string' || !isNoteSafe(signed)) return null;
  const blank = signed.lastIndexOf('\n\n');
  if (blank < 0) return null;
  const text = signed.slice(0, blank + 1);
  const block = signed.slice(blank + 2);
  if (block.length === 0 || !block.endsWith('\n')) return null;
  const rawLines = block.slice(0, -1).split('\n');
  if (rawLines.length > MAX_SIGNATURES) return null;
  const lines: SignatureLine[] = [];
  for (const raw of rawLines) {
    const line = parseSignatureLine(raw);
    if (line === null) return null;
    lines.push(line);
  }
  return { text, lines };
}

/** A known key, ready to check signatures. */
interface KnownKey {
  name: string;
  keyId: Buffer;
  key: KeyObject;
}

/** Whether `signature` is a valid Ed25519 signature of `data` by `key` (false for a signature of the wrong length). */
function ed25519Verifies(key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verify(null, data, key, signature);
  } catch {
    return false;
  }
}

/**
 * Parses a signed note and checks its signatures against `verifiers`: the text and the names of the known keys whose
 * signatures verified, or null when the note is malformed, when a known key's signature fails to verify, or when no
 * known key signed it. Signature lines by unknown keys are ignored. Throws only for an invalid verifier (bad name, a
 * public key that is not 32 bytes): that is a configuration error, not a bad note.
 */
export function openNote(signed: string, verifiers: NoteVerifier[]): OpenedNote | null {
  const known: KnownKey[] = verifiers.map(({ name, publicKey }) => ({ name, keyId: ed25519KeyId(name, publicKey), key: publicKeyObject(publicKey) }));
  const note = splitNote(signed);
  if (note === null) return null;
  const data = Buffer.from(note.text, 'utf8');
  const verifiedBy: string[] = [];
  for (const line of note.lines) {
    const candidates = known.filter((k) => k.name === line.name && k.keyId.equals(line.keyId));
    if (candidates.length === 0) continue; // an unknown key: ignored
    if (!candidates.some((k) => ed25519Verifies(k.key, data, line.signature))) return null;
    if (!verifiedBy.includes(line.name)) verifiedBy.push(line.name);
  }
  return verifiedBy.length > 0 ? { text: note.text, verifiedBy } : null;
}
