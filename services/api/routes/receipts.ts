/**
 * Reads: receipts (trees, paged), mandates with their budget, accounts, agents (search and one agent).
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { loadMandate, mandateView } from '../../../shared/mandates/store.js';
import { listReceipts, loadReceiptTree } from '../../../shared/receipts/store.js';
import { readBalances } from '../../../shared/ledger/accounts.js';
import { formatAmount } from '../../../shared/core/money.js';
import { assertSeesMandate, requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';
import { agentRoutes } from './agents.js';

export function readRoutes(gateway: ServiceContext): Router {
  const router = Router();

  router.get('/v0/receipts', asyncRoute(async (req, res) => {
    const limitRaw = req.query.limit === undefined ? '50' : String(req.query.limit);
    const limit = Number(limitRaw);
    if (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 200) throw new HolonError('invalid_request', 400, 'limit must be an integer from 1 to 200');
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
    let mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
    if (mandate !== undefined) assertSeesMandate(p, mandate, `there is no mandate ${mandate.slice(0, 300)}`);
    // An agent key reads its mandate's receipts; a human key those of the mandates they issued.
    if (p.kind === 'agent') mandate = p.mandateId;
    const before = req.query.before === undefined ? undefined : String(req.query.before);
    res.json(await listReceipts(gateway.db, { limit, ...(mandate ? { mandate } : {}), ...(p.kind === 'human' ? { issuer: p.account } : {}), ...(before ? { before } : {}) }));
  }));

  router.get('/v0/receipts/:id', asyncRoute(async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
    const id = String(req.params.id);
    const receipt = await loadReceiptTree(gateway.db, id);
    if (!receipt) throw new HolonError('not_found', 404, `there is no receipt ${id.slice(0, 100)}`);
    assertSeesMandate(p, receipt.mandate, `there is no receipt ${id.slice(0, 100)}`);
    res.json(receipt);
  }));

  router.get(/^\/v0\/mandates\/(.+)$/, asyncRoute(async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read mandates');
    const id = String((req.params as Record<string, string>)[0]);
    assertSeesMandate(p, id, `there is no mandate ${id.slice(0, 300)}`);
    const stored = await loadMandate(gateway.db, id);
    if (!stored) throw new HolonError('not_found', 404, `there is no mandate ${id.slice(0, 300)}`);
    res.json(mandateView(stored));
  }));

  router.get('/v0/accounts', asyncRoute(async (_req, res) => {
    // Balances: the admin sees all, a human their own account's.
    const p = requireKind(res, ['operator', 'admin', 'human'], 'read balances');
    const balances = await readBalances(gateway.db, p.kind === 'human' ? p.account : undefined);
    res.json({
      accounts: balances.map((b) => ({
        account: b.account,
        currency: b.currency,
        balance: formatAmount(b.balance),
        held: formatAmount(b.held),
        available: formatAmount(b.available),
      })),
    });
  }));

  router.use(agentRoutes(gateway));
  return router;
}
