/**
 * Accounts:
 *   GET    /v0/accounts                   balances: the admin (and the local operator) all, a human their own
 * Hosted only (gateway.md §7; dev mode has one principal and no accounts to sign up):
 *   POST   /v0/signup {handle, email}     none   → account, demo credit, starter mandate, human + agent key (once)
 *   GET    /v0/me                         human: account, balance, mandates, keys · agent: its mandate and budget
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { listRootMandates, loadMandate, mandateView } from '../../../shared/mandates/store.js';
import { keyView, listKeys } from '../../../shared/hosted/keys.js';
import { signup } from '../../../shared/hosted/signup.js';
import { readAccount, readBalances } from '../../../shared/ledger/accounts.js';
import { formatAmount } from '../../../shared/core/money.js';
import { requireKind } from '../principal.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export interface AccountDeps {
  ctx: ServiceContext;
  signupCredit: bigint;
  hosted: boolean;
}

export function accountRoutes(deps: AccountDeps): Router {
  const router = Router();
  router.get(
    '/v0/accounts',
    asyncRoute(async (_req, res) => {
      // Balances: the admin sees all, a human their own account's.
      const p = requireKind(res, ['operator', 'admin', 'human'], 'read balances');
      const balances = await readBalances(deps.ctx.db, p.kind === 'human' ? p.account : undefined);
      res.json({
        accounts: balances.map((b) => ({
          account: b.account,
          currency: b.currency,
          balance: formatAmount(b.balance),
          held: formatAmount(b.held),
          available: formatAmount(b.available),
        })),
      });
    }),
  );

  if (!deps.hosted) return router;
  const { ctx } = deps;

  router.post(
    '/v0/signup',
    asyncRoute(async (req, res) => {
      const r = new BodyReader(requireObject(req.body), ['handle', 'email']);
      const handle = r.string('handle', { required: true, max: 100 });
      const email = r.string('email', { required: true, max: 254 });
      r.done();
      const made = await signup(ctx.db, { handle: handle!, email: email! }, { credit: deps.signupCredit, registry: ctx.registry });
      res.status(201).json({
        ...made,
        note: 'the keys are shown once: keep them now. The human key decides approvals; the agent key acts under the sandbox mandate.',
      });
    }),
  );

  router.get(
    '/v0/me',
    asyncRoute(async (_req, res) => {
      const p = requireKind(res, ['human', 'agent'], 'read an account');
      if (p.kind === 'agent') {
        const stored = await loadMandate(ctx.db, p.mandateId);
        res.json({ kind: 'agent', account: p.account, key: p.keyPrefix, ask_in_client: p.askInClient, ...(stored ? mandateView(stored) : { mandate: null }) });
        return;
      }
      const account = (await readAccount(ctx.db, p.account))!;
      const balances = await readBalances(ctx.db, p.account);
      const views = (await listRootMandates(ctx.db, { issuer: p.account, limit: 500 })).map((stored) => ({
        id: stored.mandate.id,
        grantee: stored.mandate.grantee,
        ...mandateView(stored).budget,
      }));
      res.json({
        kind: 'human',
        account: { handle: account.handle, email: account.email, created_at: account.createdAt.toISOString() },
        key: p.keyPrefix,
        balances: balances.map((b) => ({
          currency: b.currency,
          balance: formatAmount(b.balance),
          held: formatAmount(b.held),
          available: formatAmount(b.available),
        })),
        mandates: views,
        keys: (await listKeys(ctx.db, p.account)).map((k) => keyView(k, ctx.now())),
      });
    }),
  );

  return router;
}
