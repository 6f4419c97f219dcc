/**
 * Who is asking (gateway.md §7 Principals). Dev mode: always the local operator, who may do everything. Hosted
 * mode (`--hosted`): `Authorization: Bearer <key>` —
 *   hlk_h_…   human: the issuer; their mandates (and sub-mandates), receipts, approvals and balance
 *   hlk_a_…   agent: ONE mandate; search, call, read its receipts and approvals; never decides approvals
 *   HOLON_ADMIN_KEY  admin: demo credit, balances, moderation; never calls under a user's mandate or decides
 *   (none)    the catalogue and sign-up
 * A key that is unknown, revoked or expired, or whose account is disabled, is a 401 at once (no cache).
 *
 * Every 401 carries `WWW-Authenticate: Bearer realm="holon", …` (RFC 6750 §3); on /mcp of a hosted gateway it also
 * names the protected resource metadata (`resource_metadata`, RFC 9728 §5.1), where an MCP client finds the
 * gateway's authorization server and signs in (docs/mcp.md, "Signing in from an MCP client").
 *
 * Scoping (DESIGN §3.7, docs/hosted.md "Principals and scoping"): another principal's mandate, receipt, approval,
 * call, task or balance answers exactly as one that does not exist — the same 404, the same words, and nothing read
 * from it first. What a principal sees is its `Scope` (below; a receipt: `receiptScopeOf`): every lookup by id goes
 * through `ownOrNotFound`, and admission, which answers with a receipt rather than a 404, is handed the scope
 * (`approval.inScope`).
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Db } from '../../shared/db/connect.js';
import { HolonError } from '../../shared/core/errors.js';
import { authenticateKey } from '../../shared/accounts/keys.js';
import type { ReceiptOwner, ReceiptScope } from '../../shared/receipts/store.js';
import { resourceMetadataOf } from './oauth-urls.js';

export type Principal =
  | { kind: 'operator' }
  | { kind: 'human'; account: string; keyPrefix: string }
  | { kind: 'agent'; account: string; keyPrefix: string; mandateId: string; askInClient: boolean }
  | { kind: 'admin' }
  | { kind: 'none' };

export type PrincipalKind = Principal['kind'];

export interface AuthSettings {
  hosted: boolean;
  adminKey?: string;
  now(): number;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

function isAdminKey(token: string, adminKey: string | undefined): boolean {
  return adminKey !== undefined && adminKey.length > 0 && timingSafeEqual(digest(token), digest(adminKey));
}

const KEY_HINT = 'send Authorization: Bearer <key>; /mcp takes an agent key (hlk_a_...)';

/**
 * The challenge of a 401: `error="invalid_token"` when a key was sent and refused, none when there was no key;
 * `resource_metadata` where an MCP client signs in (RFC 9728 §5.1).
 */
export function bearerChallenge(description: string, error?: 'invalid_token', resourceMetadata?: string): string {
  const words = description
    .replace(/…/g, '...')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/["\\]/g, "'");
  const metadata = resourceMetadata ? `, resource_metadata="${resourceMetadata.replace(/["\\]/g, '')}"` : '';
  return `Bearer realm="holon"${metadata}${error ? `, error="${error}"` : ''}, error_description="${words}"`;
}

/** A 401 with its challenge; a refused key's challenge also says which key to send. */
function unauthorized(res: Response, message: string, error?: 'invalid_token'): HolonError {
  res.set('WWW-Authenticate', bearerChallenge(error ? `${message}: ${KEY_HINT}` : message, error, resourceMetadataOf(res)));
  return new HolonError('unauthorized', message);
}

export function authenticate(db: Db, settings: AuthSettings): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!settings.hosted) {
      res.locals.principal = { kind: 'operator' } satisfies Principal;
      next();
      return;
    }
    const header = req.get('authorization');
    // `Authorization: Payment …` (MPP) is a payment, not a key: the paid call's route reads it (docs/payments.md).
    if (header === undefined || /^Payment\s/i.test(header)) {
      res.locals.principal = { kind: 'none' } satisfies Principal;
      next();
      return;
    }
    // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are Bearer too.
    const m = /^Bearer +([\x21-\x7e]{1,200})$/i.exec(header);
    if (!m) {
      next(unauthorized(res, 'the Authorization header must be "Bearer <key>"', 'invalid_token'));
      return;
    }
    const token = m[1]!;
    if (isAdminKey(token, settings.adminKey)) {
      res.locals.principal = { kind: 'admin' } satisfies Principal;
      next();
      return;
    }
    authenticateKey(db, token, settings.now())
      .then((key) => {
        if (!key) throw unauthorized(res, 'the key is unknown, revoked or expired', 'invalid_token');
        res.locals.principal = (
          key.kind === 'human'
            ? { kind: 'human', account: key.account, keyPrefix: key.prefix }
            : { kind: 'agent', account: key.account, keyPrefix: key.prefix, mandateId: key.mandateId!, askInClient: key.askInClient }
        ) satisfies Principal;
        next();
      })
      .catch(next);
  };
}

export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** The principal, if it is one of `kinds`; else 401 (no key) or 403 (a key that may not do this). */
export function requireKind<K extends PrincipalKind>(res: Response, kinds: readonly K[], what: string): Extract<Principal, { kind: K }> {
  const p = principalOf(res);
  if ((kinds as readonly string[]).includes(p.kind)) return p as Extract<Principal, { kind: K }>;
  if (p.kind === 'none') throw unauthorized(res, `${what} needs a key: Authorization: Bearer <key>`);
  throw new HolonError('forbidden', `${/^[aeiou]/.test(p.kind) ? 'an' : 'a'} ${p.kind} key cannot ${what}`);
}

/** The root of a mandate id: `alice/q4.r_1.r_2` → `alice/q4`. */
function rootMandateOf(mandateId: string): string {
  const dot = mandateId.indexOf('.');
  return dot < 0 ? mandateId : mandateId.slice(0, dot);
}

/** Is `mandateId` the mandate `root` or one of the sub-mandates derived from it? */
function inMandateTree(root: string, mandateId: string | null): boolean {
  return mandateId !== null && (mandateId === root || mandateId.startsWith(`${root}.`));
}

/**
 * May this principal see (and act under) the mandate? Humans: every mandate whose root they issued (a root
 * mandate's id starts with its issuer). Agents: their key's mandate and the sub-mandates derived from it.
 */
function seesMandate(p: Principal, mandateId: string): boolean {
  switch (p.kind) {
    case 'operator':
      return true;
    case 'human':
      return rootMandateOf(mandateId).startsWith(`${p.account}/`);
    case 'agent':
      return inMandateTree(p.mandateId, mandateId);
    default:
      return false;
  }
}

/** The mandates whose things (calls, receipts, approvals…) a principal sees: the one rule every lookup by id uses. */
export type Scope = (mandateId: string | null) => boolean;

/** A principal's scope: `seesMandate`. */
export function scopeOf(p: Principal): Scope {
  return (mandateId) => mandateId !== null && seesMandate(p, mandateId);
}

/**
 * Who reads a receipt by id (and its proof, and the call it closed): whoever sees its mandate. A receipt with none —
 * its request named a mandate that does not exist — is read by the account whose key sent that request (a human key:
 * `requester`, docs/receipts.md "Who reads a receipt") and by the dev operator, who reads every receipt. An agent key
 * reads its mandate's only: its requests always name its mandate, which exists (mandates are never deleted). The
 * receipt list (shared/receipts/store.ts `ReceiptScope`, `receiptListScope` below) lists by the same rule.
 */
export function receiptScopeOf(p: Principal): (owner: ReceiptOwner) => boolean {
  const sees = scopeOf(p);
  return ({ mandate, requester }) => {
    if (mandate !== null) return sees(mandate);
    return p.kind === 'operator' || (p.kind === 'human' && requester === p.account);
  };
}

/** The receipts a principal lists, in SQL: the operator all, a human its own (`receiptScopeOf`), an agent key its mandate's. */
export function receiptListScope(p: Extract<Principal, { kind: 'operator' | 'human' | 'agent' }>): ReceiptScope {
  return p.kind === 'agent' ? { mandate: p.mandateId } : p.kind === 'human' ? { issuer: p.account } : {};
}

/** An MCP connection's scope: its one mandate and the sub-mandates derived from it (an agent key's, as `seesMandate`). */
export function mandateTreeScope(root: string): Scope {
  return (mandateId) => inMandateTree(root, mandateId);
}

/**
 * What an id names, if it is in the scope; else the 404 of an id that names nothing. Both answers are one: the same
 * code and the same words (`notFound` may echo the id asked for, never anything of what was found), decided before
 * anything of the thing is looked at, so that no answer tells another tenant's thing from none. The owner is a mandate
 * id (`Scope`), or for a receipt its `ReceiptOwner` (`receiptScopeOf`).
 */
export function ownOrNotFound<T, Owner = string | null>(
  scope: (owner: Owner) => boolean,
  found: T | null | undefined,
  ownerOf: (thing: T) => Owner,
  notFound: string,
): T {
  if (found === null || found === undefined || !scope(ownerOf(found))) throw new HolonError('not_found', notFound);
  return found;
}

/** 404 unless the principal sees the mandate (another principal's mandate does not exist for it). */
export function assertSeesMandate(p: Principal, mandateId: string | null, notFound: string): void {
  if (!scopeOf(p)(mandateId)) throw new HolonError('not_found', notFound);
}
