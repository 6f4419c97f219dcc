/**
 * Signing in from an MCP client (docs/mcp.md, "Signing in from an MCP client"): the gateway's own OAuth 2.1
 * authorization server, authorization code with PKCE (S256), whose access token is a new agent key. Every step is
 * a row of `oauth_requests` in Postgres, so that any API process can take any step:
 *
 *   1. `recordRequest` (`GET /oauth/authorize`, its client's metadata document checked by the route): a random
 *      request id (256 bits) stored as its SHA-256, with the client, the redirect URI, the client's `state`, the
 *      PKCE challenge and the resource, for REQUEST_TTL_MS. The browser goes to the console with the id.
 *   2. `pendingRequest`, `decideRequest` (the console, with the human key): the person sees which client asks and
 *      approves under one of their root mandates, or refuses. Approval writes a one-time code (256 bits, stored as
 *      its SHA-256, CODE_TTL_MS) bound to the request's client, redirect URI, challenge and resource, and to the
 *      account and mandate. A request is decided once.
 *   3. `redeemCode` (`POST /oauth/token`): the code with its client_id, redirect URI, resource and PKCE verifier,
 *      once, for a new agent key under the chosen mandate (`ask_in_client`, expiring after TOKEN_TTL_MS, labelled
 *      with the client): every check an agent key meets applies to it, and the console lists and revokes it. A
 *      refusal (`GrantRefused`) spends nothing; a code is spent only by the exchange that succeeds, and a second
 *      use is refused (it revokes nothing). No human key is ever issued here.
 *
 * Nothing secret is stored or logged: not the request id, not the code, not the key (only hashes).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db, Queryable } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { createKey, type MintedKey } from './keys.js';
import type { ClientDocument } from './client-metadata.js';

/** An authorization request waits 10 minutes for the person to sign in and decide. */
const REQUEST_TTL_MS = 10 * 60_000;
/** A code is traded within 5 minutes of the approval. */
const CODE_TTL_MS = 5 * 60_000;
/** The access token (an agent key) expires after 30 days; the client then signs in again. No refresh token. */
const TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;

/** 32 random bytes, base64url: a request id or a code (43 characters). */
export const OAUTH_SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const newSecret = (): string => randomBytes(32).toString('base64url');
const sha256hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** The PKCE S256 challenge of a verifier (RFC 7636 §4.2). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/**
 * A resource indicator in the form it is compared in (RFC 8707; the MCP spec's canonical URI): scheme and host in
 * lower case (the URL parser does it), no fragment, the path without a trailing slash. Undefined when it is none.
 */
export function canonicalResource(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.hash || value.includes('#') || u.username || u.password) return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}${u.search}`;
}

export interface NewRequest {
  client: Pick<ClientDocument, 'clientId' | 'name'>;
  redirectUri: string;
  /** The client's own `state`, echoed back as it came. */
  state?: string;
  codeChallenge: string;
  /** The canonical resource the token is for. */
  resource: string;
}

/** Step 1: the request, for REQUEST_TTL_MS; its id is returned once (the console's address carries it). */
export async function recordRequest(db: Queryable, r: NewRequest, now: number): Promise<string> {
  const at = new Date(now);
  // What has expired can be forgotten: an unknown request or code is refused exactly like an expired one.
  await db('oauth_requests')
    .where('expires_at', '<=', at)
    .andWhere((q) => q.whereNull('code_expires_at').orWhere('code_expires_at', '<=', at))
    .delete();
  const id = newSecret();
  await db('oauth_requests').insert({
    request_hash: sha256hex(id),
    client_id: r.client.clientId,
    client_name: r.client.name,
    redirect_uri: r.redirectUri,
    state: r.state ?? null,
    code_challenge: r.codeChallenge,
    resource: r.resource,
    expires_at: new Date(now + REQUEST_TTL_MS),
  });
  return id;
}

export interface PendingRequest {
  client: { id: string; name: string };
  redirectUri: string;
  resource: string;
  expiresAt: Date;
}

const gone = (id: string) =>
  new HolonError(
    'not_found',
    `there is no sign-in request ${id.slice(0, 43)} waiting: it is unknown, expired or answered already; start again from your MCP client`,
  );

/** Step 2: a request still waiting for its decision; else `not_found` (unknown, expired and decided alike). */
export async function pendingRequest(db: Queryable, id: string, now: number): Promise<PendingRequest> {
  const row = OAUTH_SECRET_SHAPE.test(id)
    ? ((await db('oauth_requests')
        .where({ request_hash: sha256hex(id) })
        .whereNull('decided_at')
        .where('expires_at', '>', new Date(now))
        .first('client_id', 'client_name', 'redirect_uri', 'resource', 'expires_at')) as
        | { client_id: string; client_name: string; redirect_uri: string; resource: string; expires_at: Date }
        | undefined)
    : undefined;
  if (!row) throw gone(id);
  return { client: { id: row.client_id, name: row.client_name }, redirectUri: row.redirect_uri, resource: row.resource, expiresAt: new Date(row.expires_at) };
}

export type Decision = { approve: true; account: string; mandateId: string } | { approve: false };

export interface Decided {
  redirectUri: string;
  state: string | null;
  /** The one-time code, when approved: returned once, stored as its hash. */
  code?: string;
}

/** Step 2: the person's decision, once. The route has checked that the mandate is one of the account's own. */
export async function decideRequest(db: Queryable, id: string, decision: Decision, now: number): Promise<Decided> {
  if (!OAUTH_SECRET_SHAPE.test(id)) throw gone(id);
  const at = new Date(now);
  const code = decision.approve ? newSecret() : undefined;
  const rows = (await db('oauth_requests')
    .where({ request_hash: sha256hex(id) })
    .whereNull('decided_at')
    .where('expires_at', '>', at)
    .update(
      decision.approve
        ? {
            decided_at: at,
            approved: true,
            account: decision.account,
            mandate_id: decision.mandateId,
            code_hash: sha256hex(code!),
            code_expires_at: new Date(now + CODE_TTL_MS),
          }
        : { decided_at: at, approved: false },
    )
    .returning(['redirect_uri', 'state'])) as Array<{ redirect_uri: string; state: string | null }>;
  if (rows.length !== 1) throw gone(id);
  return { redirectUri: rows[0]!.redirect_uri, state: rows[0]!.state, ...(code ? { code } : {}) };
}

/** Why a token request is refused: the OAuth error code (RFC 6749 §5.2, RFC 8707 §2) and the words. */
export class GrantRefused extends Error {
  override readonly name = 'GrantRefused';
  constructor(
    readonly error: 'invalid_grant' | 'invalid_target',
    message: string,
  ) {
    super(message);
  }
}

export interface CodeProof {
  code: string;
  verifier: string;
  clientId: string;
  redirectUri: string;
  /** The canonical resource the client names, when it names one. */
  resource?: string;
}

interface CodeRow {
  request_hash: string;
  client_id: string;
  client_name: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  account: string;
  mandate_id: string;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What binds the code: its client, its redirect URI, its resource, its PKCE challenge; a refusal when one differs. */
function checkBinding(row: CodeRow, proof: CodeProof): void {
  if (row.client_id !== proof.clientId) throw new GrantRefused('invalid_grant', 'the code was issued to another client_id');
  if (row.redirect_uri !== proof.redirectUri) throw new GrantRefused('invalid_grant', 'redirect_uri is not the one the code was issued with');
  if (proof.resource !== undefined && proof.resource !== row.resource) throw new GrantRefused('invalid_target', `the code is for the resource ${row.resource}`);
  if (!sameText(s256(proof.verifier), row.code_challenge)) throw new GrantRefused('invalid_grant', 'code_verifier does not match the code_challenge');
}

/** Step 3: the code for a new agent key, once; a refusal spends nothing. */
export async function redeemCode(db: Db, proof: CodeProof, now: number): Promise<{ key: MintedKey; expiresInS: number }> {
  const unknown = new GrantRefused('invalid_grant', 'the code is unknown, used or expired');
  if (!OAUTH_SECRET_SHAPE.test(proof.code)) throw unknown;
  const at = new Date(now);
  return db.transaction(async (trx) => {
    // Locked: the code is checked and spent by one exchange at a time.
    const row = (await trx('oauth_requests')
      .where({ code_hash: sha256hex(proof.code) })
      .whereNull('redeemed_at')
      .where('code_expires_at', '>', at)
      .forUpdate()
      .first('request_hash', 'client_id', 'client_name', 'redirect_uri', 'code_challenge', 'resource', 'account', 'mandate_id')) as CodeRow | undefined;
    if (!row) throw unknown;
    checkBinding(row, proof);
    const account = (await trx('accounts').where({ handle: row.account }).forUpdate().first('disabled_at')) as { disabled_at: Date | null } | undefined;
    if (!account || account.disabled_at) throw new GrantRefused('invalid_grant', 'the account that approved the code is disabled');
    const key = await createKey(trx, {
      kind: 'agent',
      account: row.account,
      mandateId: row.mandate_id,
      askInClient: true,
      expiresAt: new Date(now + TOKEN_TTL_MS),
      client: { id: row.client_id, name: row.client_name },
    });
    await trx('oauth_requests').where({ request_hash: row.request_hash }).update({ redeemed_at: at, key_prefix: key.prefix });
    return { key, expiresInS: Math.floor(TOKEN_TTL_MS / 1000) };
  });
}
