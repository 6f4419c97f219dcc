/**
 * Moderation (gateway.md §7), admin key only (and the local operator in dev mode):
 *   POST /v0/admin/accounts/{handle}/disable {reason, yank_agents?}   revoke every key, block the email, yank
 *   POST /v0/admin/agents/{ns}/{name}@{version}/yank {reason}         withdraw one published version
 *   GET  /v0/admin/accounts?q=&limit=                                 user accounts, newest first
 *   GET  /v0/admin/log?limit=&before=                                 the moderation log, newest first
 *   POST /v0/admin/credit {account, amount, currency?}                demo credit, once per Idempotency-Key
 * Every action is logged with its reason (shared/hosted/moderation.ts).
 */
import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { disableAccount, listAccounts, MAX_REASON_LENGTH, readLog, yankVersion } from '../../../shared/hosted/moderation.js';
import { readBalances } from '../../../shared/ledger/accounts.js';
import { giveDemoCredit } from '../../../shared/ledger/demo-credit.js';
import { formatAmount } from '../../../shared/core/money.js';
import { requireKind } from '../principal.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

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
    throw new HolonError('invalid_request', 400, `the query parameter ${name} must be given once, at most ${max} characters`, [
      { path: `query.${name}`, message: `must be one string of at most ${max} characters` },
    ]);
  }
  return v;
}

function limitOf(req: Request): number {
  const raw = queryString(req, 'limit', 10);
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIMIT) {
    throw new HolonError('invalid_request', 400, `limit must be a whole number from 1 to ${MAX_LIMIT}`, [
      { path: 'query.limit', message: `must be 1 to ${MAX_LIMIT}` },
    ]);
  }
  return Number(raw);
}

/** `{reason}`: required, non-empty, at most 1000 characters, no NUL (BodyReader refuses NUL and unknown fields). */
function readReason(r: BodyReader): string | undefined {
  const reason = r.string('reason', { required: true, max: MAX_REASON_LENGTH });
  if (reason !== undefined && reason.trim() === '') r.problems.push({ path: '$.reason', message: 'must not be blank' });
  return reason;
}

export function adminRoutes(deps: AdminDeps): Router {
  const router = Router();
  const { ctx } = deps;

  router.post(
    '/v0/admin/accounts/:handle/disable',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['admin', 'operator'], 'disable accounts');
      const r = new BodyReader(requireObject(req.body), ['reason', 'yank_agents']);
      const reason = readReason(r);
      const yank = r.body.yank_agents;
      if (yank !== undefined && typeof yank !== 'boolean') r.problems.push({ path: '$.yank_agents', message: 'must be true or false' });
      r.done();
      const handle = String(req.params.handle);
      if (handle.length > 100) throw new HolonError('not_found', 404, 'there is no such account');
      res.json(await disableAccount(ctx, handle, { reason: reason!, yankAgents: yank === true, by: p.kind }));
    }),
  );

  router.post(
    /^\/v0\/admin\/agents\/([^/]+)\/([^/@]+)@([^/]+)\/yank$/,
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['admin', 'operator'], 'yank agent versions');
      const r = new BodyReader(requireObject(req.body), ['reason']);
      const reason = readReason(r);
      r.done();
      // Express has decoded the captures already.
      const params = req.params as unknown as Record<string, string>;
      const id = `${params[0]}/${params[1]}`;
      const version = String(params[2]);
      if (id.length > 200 || version.length > 100) throw new HolonError('not_found', 404, 'no such version is listed');
      res.json(await yankVersion(ctx, id, version, { reason: reason!, by: p.kind }));
    }),
  );

  router.get(
    '/v0/admin/accounts',
    asyncRoute(async (req, res) => {
      requireKind(res, ['admin', 'operator'], 'list accounts');
      const q = queryString(req, 'q', 100);
      const limit = limitOf(req);
      if (q?.includes('\u0000'))
        throw new HolonError('invalid_request', 400, 'q contains a NUL character', [{ path: 'query.q', message: 'contains a NUL character' }]);
      res.json({ accounts: await listAccounts(ctx.db, q, limit) });
    }),
  );

  router.get(
    '/v0/admin/log',
    asyncRoute(async (req, res) => {
      requireKind(res, ['admin', 'operator'], 'read the moderation log');
      const limit = limitOf(req);
      const before = queryString(req, 'before', 19);
      if (before !== undefined && !/^[1-9][0-9]{0,17}$/.test(before)) {
        throw new HolonError('invalid_request', 400, 'before must be the id of a log entry', [{ path: 'query.before', message: 'must be a log entry id' }]);
      }
      res.json(await readLog(ctx.db, { limit, ...(before !== undefined ? { before } : {}) }));
    }),
  );

  router.post(
    '/v0/admin/credit',
    asyncRoute(async (req, res) => {
      requireKind(res, ['admin', 'operator'], 'give demo credit');
      const r = new BodyReader(requireObject(req.body), ['account', 'amount', 'currency']);
      const account = r.string('account', { required: true, max: 100 });
      const amount = r.amount('amount', { required: true, allowZero: false });
      const currency = r.string('currency', { max: 3 }) ?? 'EUR';
      if (!/^[A-Z]{3}$/.test(currency)) r.problems.push({ path: '$.currency', message: 'must be an ISO 4217 code such as "EUR"' });
      r.done();
      // The Idempotency-Key makes a retried top-up land once; without one, every request is its own.
      const requestKey = req.get('idempotency-key') ?? randomUUID();
      if (requestKey.length > 200) throw new HolonError('invalid_request', 400, 'the Idempotency-Key is longer than 200 characters');
      const posted = await giveDemoCredit(ctx.db, { account: account!, amount: amount!, currency, requestKey });
      const balances = await readBalances(ctx.db, account);
      res.status(posted.created ? 201 : 200).json({
        replayed: !posted.created,
        accounts: balances.map((b) => ({ account: b.account, currency: b.currency, balance: formatAmount(b.balance), available: formatAmount(b.available) })),
      });
    }),
  );

  return router;
}
