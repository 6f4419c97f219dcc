/**
 * Endpoint credentials (gateway.md §7 "Authentication"): the token an author's server requires, sent by the hosted
 * gateway as `Authorization: Bearer <token>` on every request to that agent's endpoint. Write-only: nothing here
 * returns it except `credentialLookup`, for the runner's request headers.
 *
 * Stored in `agent_credentials` (migration 011), AES-256-GCM with a random 12-byte IV and the auth tag, under a key
 * derived from HOLON_FILE_SECRET with HKDF-SHA256 (salt and info fixed, below). The row keeps a key id (the first
 * 16 hex characters of SHA-256 of the derived key): a row written under another secret is recognised by its key id
 * and reported ("set it again"), never decrypted to garbage. The AAD is the agent id, so a row copied to another
 * agent does not decrypt either.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { HolonError } from '../core/errors.js';
import { isAgentId } from '../core/identifiers.js';
import type { Db } from '../db/connect.js';
import type { Notifier } from '../messaging/types.js';

/** Announces `<agent id>` when its credential is set or deleted: every runner drops what it cached for it. */
const CREDENTIALS_CHANNEL = 'agent-credentials';

interface Ctx {
  db: Db;
  messaging: { notifier: Notifier };
}

const SALT = 'holon agent_credentials';
const INFO = 'holon endpoint credential v1';
export const MAX_TOKEN_LENGTH = 4096;

export const NO_SECRET_MESSAGE = 'credentials need HOLON_FILE_SECRET';
export const OTHER_SECRET_MESSAGE = 'the credential was set under another HOLON_FILE_SECRET: set it again';

export interface CredentialKey {
  key: Buffer;
  /** A short hash of the derived key, stored with each row. */
  id: string;
}

export interface SealedCredential {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** A stored credential that cannot be used: another secret, or a row that does not authenticate. */
export class CredentialUnreadableError extends Error {
  override readonly name = 'CredentialUnreadableError';
}

/** `info` separates purposes (HKDF): webhook signing secrets use their own (shared/webhooks/secrets.ts). */
export function credentialKey(secret: string, info: string = INFO): CredentialKey {
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, info, 32));
  return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 16) };
}

/** The token rules: 1–4096 printable ASCII characters, no whitespace. The message never repeats the token. */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string') return 'token must be a string';
  if (token.length === 0) return 'token must not be empty';
  if (token.length > MAX_TOKEN_LENGTH) return `token must be at most ${MAX_TOKEN_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(token)) return 'token must be printable ASCII characters without whitespace';
  return undefined;
}

export function sealCredential(key: CredentialKey, agentId: string, token: string): SealedCredential {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(agentId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return { keyId: key.id, iv, ciphertext, tag: cipher.getAuthTag() };
}

/** The token, or CredentialUnreadableError (another key id; a tampered row). */
export function openCredential(key: CredentialKey, agentId: string, sealed: SealedCredential): string {
  if (sealed.keyId !== key.id) throw new CredentialUnreadableError(OTHER_SECRET_MESSAGE);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.iv);
    decipher.setAAD(Buffer.from(agentId, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new CredentialUnreadableError('the stored credential does not authenticate: set it again');
  }
}

interface Row {
  agent_id: string;
  key_id: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
  set_at: Date;
  set_by: string;
}

export interface CredentialView {
  set: boolean;
  set_at?: string;
}

const notYours = (agentId: string) => new HolonError('not_found', `no agent ${agentId.slice(0, 200)} in your namespace`);

/** The agent id of `{ns}/{name}` when `handle` is its author (the namespace's account); else a 404. */
export function ownAgentId(handle: string, ns: string, name: string): string {
  const agentId = `${ns}/${name}`;
  if (ns !== handle || !isAgentId(agentId)) throw notYours(agentId);
  return agentId;
}

function keyOrUnavailable(secret: string | undefined): CredentialKey {
  if (!secret) throw new HolonError('credentials_unavailable', NO_SECRET_MESSAGE);
  return credentialKey(secret);
}

/** Who sets which agent's credential, and the token as sent (checked here). */
interface CredentialChange {
  handle: string;
  agentId: string;
  token: unknown;
}

/** Set (or replace) the credential of an agent of `handle`'s; the agent need not be published yet. */
export async function setCredential(ctx: Ctx, secret: string | undefined, change: CredentialChange): Promise<CredentialView> {
  const { handle, agentId, token } = change;
  const { db } = ctx;
  const key = keyOrUnavailable(secret);
  const problem = tokenProblem(token);
  if (problem) throw new HolonError('invalid_request', problem, [{ path: '$.token', message: problem }]);
  const sealed = sealCredential(key, agentId, token as string);
  const row = { agent_id: agentId, key_id: sealed.keyId, iv: sealed.iv, ciphertext: sealed.ciphertext, tag: sealed.tag, set_by: handle };
  const [stored] = (await db('agent_credentials')
    .insert({ ...row, set_at: db.fn.now() })
    .onConflict('agent_id')
    .merge({ ...row, set_at: db.fn.now() })
    .returning('set_at')) as Array<{ set_at: Date }>;
  await ctx.messaging.notifier.publish(CREDENTIALS_CHANNEL, agentId);
  return { set: true, set_at: new Date(stored!.set_at).toISOString() };
}

export async function deleteCredential(ctx: Ctx, secret: string | undefined, agentId: string): Promise<CredentialView> {
  keyOrUnavailable(secret);
  await ctx.db('agent_credentials').where({ agent_id: agentId }).delete();
  await ctx.messaging.notifier.publish(CREDENTIALS_CHANNEL, agentId);
  return { set: false };
}

export async function viewCredential(db: Db, secret: string | undefined, agentId: string): Promise<CredentialView> {
  keyOrUnavailable(secret);
  const row = (await db('agent_credentials').where({ agent_id: agentId }).first('set_at')) as Pick<Row, 'set_at'> | undefined;
  return row ? { set: true, set_at: new Date(row.set_at).toISOString() } : { set: false };
}

/** The runner's lookup: the token of an agent (undefined: none set), or CredentialUnreadableError. */
export interface CredentialLookup {
  (agentId: string): Promise<string | undefined>;
  /** Drop what is cached for an agent (its credential changed: CREDENTIALS_CHANNEL). */
  forget(agentId: string): void;
}

/** Stored rows are re-read at most this often per agent and process: a DELETE or a new token is seen within it. */
const CREDENTIAL_CACHE_MS = 2000;

/**
 * The lookup over the table, with a per-process cache of the row for `ttlMs`. A change is announced on
 * CREDENTIALS_CHANNEL and drops the entry at once (`watchCredentials`); the TTL bounds how long a lost announcement
 * can keep an old row. Without a secret, a stored row cannot be read: the call fails, saying so.
 */
export function credentialLookup(db: Db, secret: string | undefined, options: { ttlMs?: number; now?: () => number } = {}): CredentialLookup {
  const ttl = options.ttlMs ?? CREDENTIAL_CACHE_MS;
  const now = options.now ?? Date.now;
  const key = secret ? credentialKey(secret) : undefined;
  const cache = new Map<string, { at: number; row: Row | undefined }>();
  const lookup = async (agentId: string): Promise<string | undefined> => {
    let entry = cache.get(agentId);
    if (!entry || now() - entry.at >= ttl) {
      const row = (await db('agent_credentials').where({ agent_id: agentId }).first()) as Row | undefined;
      entry = { at: now(), row };
      cache.set(agentId, entry);
      if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
    }
    const { row } = entry;
    if (!row) return undefined;
    if (!key) throw new CredentialUnreadableError(`the agent's endpoint credential cannot be read: ${NO_SECRET_MESSAGE}`);
    return openCredential(key, agentId, { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, tag: row.tag });
  };
  return Object.assign(lookup, { forget: (agentId: string) => void cache.delete(agentId) });
}

/** Follow CREDENTIALS_CHANNEL: each announced agent's cached row is dropped. Returns the unsubscribe. */
export function watchCredentials(notifier: Notifier, lookup: CredentialLookup): Promise<() => Promise<void>> {
  return notifier.subscribe(CREDENTIALS_CHANNEL, (agentId) => lookup.forget(agentId));
}
