/**
 * Moderation (gateway.md §7), admin key only (and the local operator in dev mode):
 *   POST /v0/admin/accounts/{handle}/disable {reason, yank_agents?}   revoke every key, block the email, yank
 *   POST /v0/admin/agents/{ns}/{name}@{version}/yank {reason}         withdraw one published version
 *   GET  /v0/admin/accounts?q=&limit=                                 user accounts, newest first
 *   GET  /v0/admin/log?limit=&before=                                 the moderation log, newest first
 *   POST /v0/admin/credit {account, amount, currency?}                demo credit, once per Idempotency-Key
 * Every action is logged with its reason (shared/publishing/moderation.ts).
 */
import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { disableAccount, listAccounts, MAX_REASON_LENGTH, readLog, yankVersion } from '../../../shared/publishing/moderation.js';
import { readBalances } from '../../../shared/ledger/accounts.js';
import { giveDemoCredit } from '../../../shared/ledger/demo-credit.js';
import { formatAmount, parseAmount } from '../../../shared/core/money.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { captured } from '../captures.js';
import { defineOperations, mount, type QuerySpec } from '../openapi/operations.js';
import { ACCOUNTS_PAGE, creditAnswer, DISABLED, LOG_PAGE, YANKED } from '../openapi/author-schemas.js';
import { amount, BOOLEAN, failure, text } from '../openapi/schemas.js';

/** `{reason}`: required, non-empty, not blank, at most 1000 characters. */
const REASON = text(MAX_REASON_LENGTH, 'Why, for the moderation log', { pattern: '\\S', 'x-messages': { pattern: 'must not be blank' } });

const DISABLE_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: { reason: REASON, yank_agents: { ...BOOLEAN, description: 'Also withdraw every version the account listed' } },
} as const;

const YANK_BODY = { type: 'object', additionalProperties: false, required: ['reason'], properties: { reason: REASON } } as const;

const CREDIT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['account', 'amount'],
  properties: {
    account: text(100, 'The account handle'),
    amount: amount('Demo credit to give, more than zero', { allowZero: false }),
    currency: text(3, 'ISO 4217, default EUR', { pattern: '^[A-Z]{3}$', 'x-messages': { pattern: 'must be an ISO 4217 code such as "EUR"' } }),
  },
} as const;

const LIMIT: QuerySpec = { description: 'Page size, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200 } };
const ADMIN_ERRORS = { 401: failure('No key', 'unauthorized'), 403: failure('Not the admin key', 'forbidden') } as const;

export const adminOperations = defineOperations({
  disable: {
    id: 'disableAccount',
    method: 'post',
    path: '/v0/admin/accounts/{handle}/disable',
    tag: 'admin',
    auth: ['admin'],
    summary: 'Disable an account: revoke every key, block its email, optionally withdraw its agents',
    params: { handle: { description: 'The account handle', example: 'mallory' } },
    body: { schema: DISABLE_BODY, example: { reason: 'spam', yank_agents: true } },
    responses: {
      200: { description: 'Disabled', schema: DISABLED },
      400: failure('A bad body, or not a user account (`not_a_user_account`)', 'invalid_request'),
      404: failure('No such account', 'not_found'),
      409: failure('Disabled already', 'already_disabled'),
      ...ADMIN_ERRORS,
    },
  },
  yank: {
    id: 'moderateVersion',
    method: 'post',
    path: '/v0/admin/agents/{ns}/{name}@{version}/yank',
    route: /^\/v0\/admin\/agents\/([^/]+)\/([^/@]+)@([^/]+)\/yank$/,
    tag: 'admin',
    auth: ['admin'],
    summary: 'Withdraw one published version',
    params: {
      ns: { description: 'Namespace', example: 'mallory' },
      name: { description: 'Agent name', example: 'scraper' },
      version: { description: 'Exact version', example: '1.0.0' },
    },
    body: { schema: YANK_BODY, example: { reason: 'malware' } },
    responses: {
      200: { description: 'Withdrawn', schema: YANKED },
      400: failure('A bad body', 'invalid_request'),
      404: failure('No such version is listed', 'not_found'),
      409: failure('Yanked already (`already_yanked`), or an agent shipped with the gateway (`shipped_agent`)', 'already_yanked', 'shipped_agent'),
      ...ADMIN_ERRORS,
    },
  },
  accounts: {
    id: 'listAccounts',
    method: 'get',
    path: '/v0/admin/accounts',
    tag: 'admin',
    auth: ['admin'],
    summary: 'User accounts, newest first',
    query: { q: { description: 'Part of a handle or email, at most 100 characters', schema: { type: 'string', maxLength: 100 } }, limit: LIMIT },
    responses: {
      200: { description: 'Accounts', schema: ACCOUNTS_PAGE },
      400: failure('A bad query', 'invalid_request'),
      ...ADMIN_ERRORS,
    },
  },
  log: {
    id: 'readModerationLog',
    method: 'get',
    path: '/v0/admin/log',
    tag: 'admin',
    auth: ['admin'],
    summary: 'The moderation log, newest first',
    query: { limit: LIMIT, before: { description: 'Entries before this log entry id', schema: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' } } },
    responses: {
      200: { description: 'A page of the log', schema: LOG_PAGE },
      400: failure('A bad query', 'invalid_request'),
      ...ADMIN_ERRORS,
    },
  },
  credit: {
    id: 'giveDemoCredit',
    method: 'post',
    path: '/v0/admin/credit',
    tag: 'admin',
    auth: ['admin'],
    summary: 'Give demo credit, once per Idempotency-Key',
    headers: { 'Idempotency-Key': { description: 'Makes a retried top-up land once (at most 200 characters)' } },
    body: { schema: CREDIT_BODY, example: { account: 'alice', amount: '5.00' } },
    responses: {
      201: { description: 'Credited', schema: creditAnswer(false) },
      200: { description: 'Already credited under this Idempotency-Key', schema: creditAnswer(true) },
      400: failure('A bad body', 'invalid_request'),
      404: failure('No such account', 'not_found'),
      ...ADMIN_ERRORS,
    },
  },
});

const readDisable = bodyReader<{ reason: string; yank_agents?: boolean }>(DISABLE_BODY);
const readYank = bodyReader<{ reason: string }>(YANK_BODY);
const readCredit = bodyReader<{ account: string; amount: string; currency?: string }>(CREDIT_BODY);

export interface AdminDeps {
  ctx: ServiceContext;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

/** A query parameter given at most once, as a string (the simple parser makes repeats arrays). */
function queryString(req: Request, name: string, max: number): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > max) {
    throw new HolonError('invalid_request', `the query parameter ${name} must be given once, at most ${max} characters`, [
      { path: `query.${name}`, message: `must be one string of at most ${max} characters` },
    ]);
  }
  return v;
}

function limitOf(req: Request): number {
  const raw = queryString(req, 'limit', 10);
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIMIT) {
    throw new HolonError('invalid_request', `limit must be a whole number from 1 to ${MAX_LIMIT}`, [
      { path: 'query.limit', message: `must be 1 to ${MAX_LIMIT}` },
    ]);
  }
  return Number(raw);
}

function disableHandler(deps: AdminDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    const p = requireKind(res, ['admin', 'operator'], 'disable accounts');
    const r = readDisable(req.body);
    r.done();
    const reason = r.body.reason;
    const yank = r.body.yank_agents;
    const handle = String(req.params.handle);
    if (handle.length > 100) throw new HolonError('not_found', 'there is no such account');
    res.json(await disableAccount(ctx, handle, { reason, yankAgents: yank === true, by: p.kind }));
  };
}

function yankHandler(deps: AdminDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    const p = requireKind(res, ['admin', 'operator'], 'yank agent versions');
    const r = readYank(req.body);
    r.done();
    const reason = r.body.reason;
    // Express has decoded the captures already.
    const id = `${captured(req, 0)}/${captured(req, 1)}`;
    const version = captured(req, 2);
    if (id.length > 200 || version.length > 100) throw new HolonError('not_found', 'no such version is listed');
    res.json(await yankVersion(ctx, id, version, { reason, by: p.kind }));
  };
}

function accountsHandler(deps: AdminDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    requireKind(res, ['admin', 'operator'], 'list accounts');
    const q = queryString(req, 'q', 100);
    const limit = limitOf(req);
    if (q?.includes('\u0000'))
      throw new HolonError('invalid_request', 'q contains a NUL character', [{ path: 'query.q', message: 'contains a NUL character' }]);
    res.json({ accounts: await listAccounts(ctx.db, q, limit) });
  };
}

function logHandler(deps: AdminDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    requireKind(res, ['admin', 'operator'], 'read the moderation log');
    const limit = limitOf(req);
    const before = queryString(req, 'before', 19);
    if (before !== undefined && !/^[1-9][0-9]{0,17}$/.test(before)) {
      throw new HolonError('invalid_request', 'before must be the id of a log entry', [{ path: 'query.before', message: 'must be a log entry id' }]);
    }
    res.json(await readLog(ctx.db, { limit, ...(before !== undefined ? { before } : {}) }));
  };
}

function creditHandler(deps: AdminDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    requireKind(res, ['admin', 'operator'], 'give demo credit');
    const r = readCredit(req.body);
    r.done();
    const account = r.body.account;
    const amount = parseAmount(r.body.amount);
    const currency = r.body.currency ?? 'EUR';
    // Demo credit and real money never mix (docs/payments.md): only money from outside is ever in the asset's currency.
    if (ctx.payments && currency === ctx.payments.asset.currency)
      throw new HolonError('invalid_request', `demo credit is never in ${currency}, the currency of money from outside (HOLON_X402_ASSET_CURRENCY)`);
    // The Idempotency-Key makes a retried top-up land once; without one, every request is its own.
    const requestKey = req.get('idempotency-key') ?? randomUUID();
    if (requestKey.length > 200) throw new HolonError('invalid_request', 'the Idempotency-Key is longer than 200 characters');
    const posted = await giveDemoCredit(ctx.db, { account, amount, currency, requestKey });
    const balances = await readBalances(ctx.db, account);
    res.status(posted.created ? 201 : 200).json({
      replayed: !posted.created,
      accounts: balances.map((b) => ({ account: b.account, currency: b.currency, balance: formatAmount(b.balance), available: formatAmount(b.available) })),
    });
  };
}

export function adminRoutes(deps: AdminDeps): Router {
  const router = Router();
  mount(router, adminOperations.disable, disableHandler(deps));
  mount(router, adminOperations.yank, yankHandler(deps));
  mount(router, adminOperations.accounts, accountsHandler(deps));
  mount(router, adminOperations.log, logHandler(deps));
  mount(router, adminOperations.credit, creditHandler(deps));
  return router;
}
