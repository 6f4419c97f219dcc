/**
 * Receipts (receipts.md): GET /v0/receipts[?mandate=&limit=&before=] (trees, newest first, paged) and
 * GET /v0/receipts/{id}. A principal reads only the receipts of mandates it sees.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { listReceipts, loadReceiptTree } from '../../../shared/receipts/store.js';
import { assertSeesMandate, requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { failure, object, RECEIPT } from '../openapi/schemas.js';

export const receiptOperations = defineOperations({
  list: {
    id: 'listReceipts',
    method: 'get',
    path: '/v0/receipts',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'Receipt trees, newest first, paged',
    query: {
      mandate: { description: 'Only this mandate’s', schema: { type: 'string' } },
      limit: { description: '1 to 200 (default 50)', schema: { type: 'string', pattern: '^[0-9]+$' } },
      before: { description: 'The `next_before` of the previous page', schema: { type: 'string' } },
    },
    responses: {
      200: { description: 'A page of receipts', schema: object('Receipts', { receipts: { type: 'array', items: RECEIPT } }, ['receipts']) },
      400: failure('A bad limit', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  read: {
    id: 'readReceipt',
    method: 'get',
    path: '/v0/receipts/{id}',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'One receipt tree',
    params: { id: { description: 'The receipt id', example: 'r4' } },
    responses: {
      200: { description: 'The receipt', schema: RECEIPT },
      401: failure('No key', 'unauthorized'),
      404: failure('No such receipt of yours', 'not_found'),
    },
  },
});

export function receiptRoutes(ctx: ServiceContext): Router {
  const router = Router();

  mount(
    router,
    receiptOperations.list,
    asyncRoute(async (req, res) => {
      const limitRaw = req.query.limit === undefined ? '50' : String(req.query.limit);
      const limit = Number(limitRaw);
      if (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 200) throw new HolonError('invalid_request', 400, 'limit must be an integer from 1 to 200');
      const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
      let mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
      if (mandate !== undefined) assertSeesMandate(p, mandate, `there is no mandate ${mandate.slice(0, 300)}`);
      // An agent key reads its mandate's receipts; a human key those of the mandates they issued.
      if (p.kind === 'agent') mandate = p.mandateId;
      const before = req.query.before === undefined ? undefined : String(req.query.before);
      res.json(
        await listReceipts(ctx.db, {
          limit,
          ...(mandate ? { mandate } : {}),
          ...(p.kind === 'human' ? { issuer: p.account } : {}),
          ...(before ? { before } : {}),
        }),
      );
    }),
  );

  mount(
    router,
    receiptOperations.read,
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
      const id = String(req.params.id);
      const receipt = await loadReceiptTree(ctx.db, id);
      if (!receipt) throw new HolonError('not_found', 404, `there is no receipt ${id.slice(0, 100)}`);
      assertSeesMandate(p, receipt.mandate, `there is no receipt ${id.slice(0, 100)}`);
      res.json(receipt);
    }),
  );

  return router;
}
