/**
 * Endpoint credentials (gateway.md §7 "Authentication"): the token an author's server requires, sent by the hosted
 * gateway as `Authorization: Bearer <token>` on every request to that agent's endpoint. Write-only: nothing here
 * returns it except `credentialLookup`, for the runner's request headers.
 *
 * Stored in `agent_credentials` (migration 011), sealed (shared/crypto/seal.ts: AES-256-GCM under a key derived from
 * HOLON_FILE_SECRET, this purpose's HKDF info below). A row written under another secret is recognised by its key id
 * and reported ("set it again"), never decrypted to garbage. The AAD is the agent id, so a row copied to another
 * agent does not decrypt either.
 */
import { HolonError } from '../core/errors.js';
import { isAgentId } from '../core/identifiers.js';
import { fromColumns, type Sealed, type SealedColumns, type SealingKey, seal, sealingKey, toColumns, unseal, UnsealError } from '../crypto/seal.js';
import type { Db } from '../db/connect.js';
import type { Notifier } from '../messaging/types.js';

/** Announces `<agent id>` when its credential is set or deleted: every runner drops what it cached for it. */
const CREDENTIALS_CHANNEL = 'agent-credentials';

interface Ctx {
  db: Db;
  messaging: { notifier: Notifier };
}

const INFO = 'holon endpoint credential v1';
export const MAX_TOKEN_LENGTH = 4096;

export const NO_SECRET_MESSAGE = 'credentials need HOLON_FILE_SECRET';
export const OTHER_SECRET_MESSAGE = 'the credential was set under another HOLON_FILE_SECRET: set it again';

/** A stored credential that cannot be used: another secret, or a row that does not authenticate. */
export class CredentialUnreadableError extends Error {
  override readonly name = 'CredentialUnreadableError';
}

/** The key credentials are sealed under (webhook signing secrets have their own: shared/webhooks/secrets.ts). */
export function credentialKey(secret: string): SealingKey {
  return sealingKey(secret, INFO);
}

/** The token rules: 1–4096 printable ASCII characters, no whitespace. The message never repeats the token. */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string') return 'token must be a string';
  if (token.length === 0) return 'token must not be empty';
  if (token.length > MAX_TOKEN_LENGTH) return `token must be at most ${MAX_TOKEN_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(token)) return 'token must be printable ASCII characters without whitespace';
  return undefined;
}

/** The token, or CredentialUnreadableError (another key id; a tampered row). */
export function openCredential(key: SealingKey, agentId: string, sealed: Sealed): string {
  try {
    return unseal(key, agentId, sealed);
  } catch (e) {
    if (!(e instanceof UnsealError)) throw e;
    if (e.reason === 'other_key') throw new CredentialUnreadableError(OTHER_SECRET_MESSAGE);
    throw new CredentialUnreadableError('the stored credential does not authenticate: set it again');
  }
}

interface Row extends SealedColumns {
  agent_id: string;
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

function keyOrUnavailable(secret: string | undefined): SealingKey {
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
  const row = { agent_id: agentId, ...toColumns(seal(key, agentId, token as string)), set_by: handle };
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
    return openCredential(key, agentId, fromColumns(row));
  };
  return Object.assign(lookup, { forget: (agentId: string) => void cache.delete(agentId) });
}

/** Follow CREDENTIALS_CHANNEL: each announced agent's cached row is dropped. Returns the unsubscribe. */
export function watchCredentials(notifier: Notifier, lookup: CredentialLookup): Promise<() => Promise<void>> {
  return notifier.subscribe(CREDENTIALS_CHANNEL, (agentId) => lookup.forget(agentId));
}
