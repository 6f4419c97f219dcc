/**
 * Reads: receipts (trees, paged), mandates with their budget, accounts, agents (search and one agent).
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/errors.js';
import type { GatewayContext } from '../../../shared/gateway/context.js';
import { loadMandate, mandateView } from '../../../shared/gateway/mandates.js';
import { listReceipts, loadReceiptTree } from '../../../shared/gateway/receipts.js';
import { readBalances } from '../../../shared/ledger/accounts.js';
import { formatAmount } from '../../../shared/money.js';
import { asyncRoute } from '../route.js';
import { agentRoutes } from './agents.js';

export function readRoutes(gateway: GatewayContext): Router {
  const router = Router();

  router.get('/v0/receipts', asyncRoute(async (req, res) => {
    const limitRaw = req.query.limit === undefined ? '50' : String(req.query.limit);
    const limit = Number(limitRaw);
    if (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 200) throw new HolonError('invalid_request', 400, 'limit must be an integer from 1 to 200');
    const mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
    const before = req.query.before === undefined ? undefined : String(req.query.before);
    res.json(await listReceipts(gateway.db, { limit, ...(mandate ? { mandate } : {}), ...(before ? { before } : {}) }));
  }));

  router.get('/v0/receipts/:id', asyncRoute(async (req, res) => {
    const receipt = await loadReceiptTree(gateway.db, String(req.params.id));
    if (!receipt) throw new HolonError('not_found', 404, `there is no receipt ${String(req.params.id)}`);
    res.json(receipt);
  }));

  router.get(/^\/v0\/mandates\/(.+)$/, asyncRoute(async (req, res) => {
    const id = String((req.params as Record<string, string>)[0]);
    const stored = await loadMandate(gateway.db, id);
    if (!stored) throw new HolonError('not_found', 404, `there is no mandate ${id}`);
    res.json(mandateView(stored));
  }));

  router.get('/v0/accounts', asyncRoute(async (_req, res) => {
    const balances = await readBalances(gateway.db);
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
