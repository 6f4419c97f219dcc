/**
 * Hosted accounts and keys (gateway.md §7):
 *   POST   /v0/signup {handle, email}     none   → account, demo credit, starter mandate, human + agent key (once)
 *   GET    /v0/me                         human: account, balance, mandates, keys · agent: its mandate and budget
 *   POST   /v0/keys {mandate, ask_in_client?}  human → a new agent key for one of their root mandates
 *   DELETE /v0/keys/{prefix}              human: revoke one of their keys (404 for anyone else's)
 * These routes exist in hosted mode only (dev mode has one principal and no keys).
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { listRootMandates, loadMandate, mandateView } from '../../../shared/mandates/store.js';
import { createKey, keyView, listKeys, revokeKey } from '../../../shared/hosted/keys.js';
import { signup } from '../../../shared/hosted/signup.js';
import { readBalances } from '../../../shared/ledger/accounts.js';
import { formatAmount } from '../../../shared/core/money.js';
import { requireKind } from '../principal.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export interface AccountDeps {
  gateway: ServiceContext;
  signupCredit: bigint;
  hosted: boolean;
}

export function accountRoutes(deps: AccountDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { gateway } = deps;

  router.post('/v0/signup', asyncRoute(async (req, res) => {
    const r = new BodyReader(requireObject(req.body), ['handle', 'email']);
    const handle = r.string('handle', { required: true, max: 100 });
    const email = r.string('email', { required: true, max: 254 });
    r.done();
    const made = await signup(gateway.db, { handle: handle!, email: email! }, { credit: deps.signupCredit, registry: gateway.registry });
    res.status(201).json({
      ...made,
      note: 'the keys are shown once: keep them now. The human key decides approvals; the agent key acts under the sandbox mandate.',
    });
  }));

  router.get('/v0/me', asyncRoute(async (_req, res) => {
    const p = requireKind(res, ['human', 'agent'], 'read an account');
    if (p.kind === 'agent') {
      const stored = await loadMandate(gateway.db, p.mandateId);
      res.json({ kind: 'agent', account: p.account, key: p.keyPrefix, ask_in_client: p.askInClient, ...(stored ? mandateView(stored) : { mandate: null }) });
      return;
    }
    const account = await gateway.db('accounts').where({ handle: p.account }).first('handle', 'email', 'created_at');
    const balances = await readBalances(gateway.db, p.account);
    const views = (await listRootMandates(gateway.db, { issuer: p.account, limit: 500 }))
      .map((stored) => ({ id: stored.mandate.id, grantee: stored.mandate.grantee, ...mandateView(stored).budget }));
    res.json({
      kind: 'human',
      account: { handle: account.handle, email: account.email, created_at: new Date(account.created_at).toISOString() },
      key: p.keyPrefix,
      balances: balances.map((b) => ({ currency: b.currency, balance: formatAmount(b.balance), held: formatAmount(b.held), available: formatAmount(b.available) })),
      mandates: views,
      keys: (await listKeys(gateway.db, p.account)).map((k) => keyView(k, gateway.now())),
    });
  }));

  router.post('/v0/keys', asyncRoute(async (req, res) => {
    const p = requireKind(res, ['human'], 'create keys');
    const r = new BodyReader(requireObject(req.body), ['mandate', 'ask_in_client']);
    const mandate = r.string('mandate', { required: true, max: 300 });
    const ask = r.body.ask_in_client;
    if (ask !== undefined && typeof ask !== 'boolean') r.problems.push({ path: '$.ask_in_client', message: 'must be true or false' });
    r.done();
    // An agent key acts under one of the caller's own root mandates.
    const stored = await loadMandate(gateway.db, mandate!);
    if (!stored || stored.mandate.depth !== 0 || stored.mandate.issuer !== p.account) throw new HolonError('not_found', 404, `you have no mandate ${mandate}`);
    const minted = await createKey(gateway.db, { kind: 'agent', account: p.account, mandateId: mandate!, askInClient: ask === true });
    res.status(201).json({ ...minted, note: 'the key is shown once: keep it now' });
  }));

  router.delete('/v0/keys/:prefix', asyncRoute(async (req, res) => {
    const p = requireKind(res, ['human'], 'revoke keys');
    const prefix = String(req.params.prefix);
    if (!(await revokeKey(gateway.db, p.account, prefix))) throw new HolonError('not_found', 404, `you have no live key ${prefix.slice(0, 40)}`);
    res.json({ prefix, state: 'revoked' });
  }));

  return router;
}
