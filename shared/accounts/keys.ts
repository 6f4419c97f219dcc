/**
 * API keys (gateway.md §7 Principals): `hlk_h_…` human keys (the issuer; may expire) and `hlk_a_…` agent keys
 * (one mandate; `ask_in_client` or not). A key is `<prefix>_<secret>`: the prefix (`hlk_a_AbCd1234`) names it in
 * listings and for revocation; the whole key is shown once and only its SHA-256 is stored.
 *
 * Every request looks its key up in Postgres (one indexed read, no cache), so a revoked or expired key, or a
 * disabled account, is refused at once by every API process.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/connect.js';

type KeyKind = 'human' | 'agent';

export interface KeyRow {
  prefix: string;
  kind: KeyKind;
  account: string;
  mandateId: string | null;
  askInClient: boolean;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The MCP client an agent key was issued to by signing in from it (shared/accounts/mcp-sign-in.ts); null otherwise. */
  client: KeyClient | null;
}

/** An MCP client as its client ID metadata document names it: the document's URL and its `client_name`. */
interface KeyClient {
  id: string;
  name: string;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Human keys made by signing in with GitHub expire after 30 days (gateway.md §7 Accounts). */
export const HUMAN_KEY_TTL_MS = 30 * 24 * 3600 * 1000;
/** Anything that could be a key: bounded, so a huge header is not hashed. */
const KEY_SHAPE = /^hlk_[ha]_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}$/;

/** Unbiased base62 from the CSPRNG. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function looksLikeKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

export interface NewKey {
  kind: KeyKind;
  account: string;
  mandateId?: string;
  askInClient?: boolean;
  expiresAt?: Date;
  /** The MCP client the key is issued to (an agent key from signing in from an MCP client). */
  client?: KeyClient;
}

export interface MintedKey {
  /** The key itself: returned once, never stored. */
  key: string;
  prefix: string;
  kind: KeyKind;
  mandate: string | null;
  ask_in_client: boolean;
  expires_at: string | null;
}

export async function createKey(db: Queryable, k: NewKey): Promise<MintedKey> {
  const letter = k.kind === 'human' ? 'h' : 'a';
  for (let attempt = 0; ; attempt++) {
    const prefix = `hlk_${letter}_${randomBase62(8)}`;
    const key = `${prefix}_${randomBase62(40)}`;
    const inserted = await db.raw<{ rows: unknown[] }>(
      `INSERT INTO api_keys (prefix, hash, kind, account, mandate_id, ask_in_client, expires_at, client_id, client_name)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (prefix) DO NOTHING RETURNING prefix`,
      [prefix, hashKey(key), k.kind, k.account, k.mandateId ?? null, k.askInClient ?? false, k.expiresAt ?? null, k.client?.id ?? null, k.client?.name ?? null],
    );
    if (inserted.rows.length === 1) {
      return {
        key,
        prefix,
        kind: k.kind,
        mandate: k.mandateId ?? null,
        ask_in_client: k.askInClient ?? false,
        expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
      };
    }
    if (attempt > 5) throw new Error('could not find a free key prefix');
  }
}

/** An `api_keys` row as the drivers return it (shared/db/connect.ts), its hash left out. */
interface KeyColumns {
  prefix: string;
  kind: KeyKind;
  account: string;
  mandate_id: string | null;
  ask_in_client: boolean;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  client_id: string | null;
  client_name: string | null;
}

function keyFromRow(r: KeyColumns): KeyRow {
  return {
    prefix: r.prefix,
    kind: r.kind,
    account: r.account,
    mandateId: r.mandate_id ?? null,
    askInClient: Boolean(r.ask_in_client),
    createdAt: new Date(r.created_at),
    expiresAt: r.expires_at ? new Date(r.expires_at) : null,
    revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
    client: r.client_id && r.client_name ? { id: r.client_id, name: r.client_name } : null,
  };
}

/** The live key for `key`: not revoked, not expired, its account not disabled. */
export async function authenticateKey(db: Queryable, key: string, now: number): Promise<KeyRow | null> {
  if (!looksLikeKey(key)) return null;
  const r = await db.raw<{ rows: KeyColumns[] }>(
    `SELECT k.* FROM api_keys k JOIN accounts a ON a.handle = k.account
      WHERE k.hash = ? AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?) AND a.disabled_at IS NULL`,
    [hashKey(key), new Date(now)],
  );
  return r.rows[0] ? keyFromRow(r.rows[0]) : null;
}

export async function listKeys(db: Queryable, account: string): Promise<KeyRow[]> {
  const rows: KeyColumns[] = await db('api_keys').where({ account }).orderBy('created_at', 'asc');
  return rows.map(keyFromRow);
}

/** Revoke one of `account`'s keys; false when it has no such live key. */
export async function revokeKey(db: Queryable, account: string, prefix: string): Promise<boolean> {
  const n = await db('api_keys').where({ account, prefix }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  return n > 0;
}

export async function revokeAccountKeys(db: Queryable, account: string): Promise<number> {
  return db('api_keys').where({ account }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

export function keyView(k: KeyRow, now: number) {
  const state = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= now ? 'expired' : 'active';
  return {
    prefix: k.prefix,
    kind: k.kind,
    mandate: k.mandateId,
    ask_in_client: k.askInClient,
    state,
    created_at: k.createdAt.toISOString(),
    expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
    revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
    client: k.client,
  };
}
