/**
 * POST /v0/mandates (create a mandate; its issuer gets demo credit once) and POST /v0/admin/credit.
 * Dev mode has no authentication: the principal is the local operator, who may do everything.
 */
import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { HolonError } from '../../../shared/errors.js';
import type { GatewayContext } from '../../../shared/gateway/context.js';
import { creditSignup, loadMandate, mandateView, saveMandate } from '../../../shared/gateway/mandates.js';
import { DEMO_CREDIT_ACCOUNT, ensureAccount, readBalances } from '../../../shared/ledger/accounts.js';
import { postEntry } from '../../../shared/ledger/entries.js';
import { validateMandate } from '../../../shared/mandate/validate.js';
import { formatAmount } from '../../../shared/money.js';
import { BodyReader, findNul, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export interface ManageDeps {
  gateway: GatewayContext;
  /** Demo credit for a new issuer (HOLON_SIGNUP_CREDIT), in EUR. */
  signupCredit: bigint;
}

export function manageRoutes(deps: ManageDeps): Router {
  const router = Router();
  const { gateway } = deps;

  router.post('/v0/mandates', asyncRoute(async (req, res) => {
    const body = requireObject(req.body);
    const nul = findNul(body);
    if (nul) throw new HolonError('invalid_request', 400, 'the mandate contains a NUL character', [{ path: nul, message: 'contains a NUL character' }]);
    const v = validateMandate(body, { caller: true });
    if (!v.ok) throw new HolonError('invalid_mandate', 400, `the mandate has ${v.problems.length} problem${v.problems.length === 1 ? '' : 's'}`, v.problems);
    const { created } = await saveMandate(gateway.db, v.mandate);
    await creditSignup(gateway.db, v.mandate.issuer, deps.signupCredit, 'EUR');
    const stored = (await loadMandate(gateway.db, v.mandate.id))!;
    res.status(created ? 201 : 200).json(mandateView(stored));
  }));

  router.post('/v0/admin/credit', asyncRoute(async (req, res) => {
    const r = new BodyReader(requireObject(req.body), ['account', 'amount', 'currency']);
    const account = r.string('account', { required: true, max: 100 });
    const amount = r.amount('amount', { required: true, allowZero: false });
    const currency = r.string('currency', { max: 3 }) ?? 'EUR';
    if (!/^[A-Z]{3}$/.test(currency)) r.problems.push({ path: '$.currency', message: 'must be an ISO 4217 code such as "EUR"' });
    r.done();
    if (account!.startsWith('external:') || account === 'holon') throw new HolonError('invalid_request', 400, `demo credit goes to user accounts, not ${account}`);
    const exists = await gateway.db('accounts').where({ handle: account }).first('handle');
    if (!exists) throw new HolonError('not_found', 404, `there is no account ${account}`);
    // The Idempotency-Key makes a retried top-up land once; without one, every request is its own.
    const requestKey = req.get('idempotency-key') ?? randomUUID();
    if (requestKey.length > 200) throw new HolonError('invalid_request', 400, 'the Idempotency-Key is longer than 200 characters');
    await ensureAccount(gateway.db, DEMO_CREDIT_ACCOUNT);
    const posted = await postEntry(gateway.db, {
      key: `admin-credit:${requestKey}`,
      kind: 'admin-credit',
      lines: [
        { account: DEMO_CREDIT_ACCOUNT, currency, amount: -amount! },
        { account: account!, currency, amount: amount! },
      ],
    });
    const balances = await readBalances(gateway.db, account);
    res.status(posted.created ? 201 : 200).json({
      replayed: !posted.created,
      accounts: balances.map((b) => ({ account: b.account, currency: b.currency, balance: formatAmount(b.balance), available: formatAmount(b.available) })),
    });
  }));

  return router;
}
