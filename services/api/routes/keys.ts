/**
 * API keys (gateway.md §7), hosted only:
 *   POST   /v0/keys {mandate, ask_in_client?}  human → a new agent key for one of their root mandates
 *   DELETE /v0/keys/{prefix}                   human: revoke one of their keys (404 for anyone else's)
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { loadMandate } from '../../../shared/mandates/store.js';
import { createKey, revokeKey } from '../../../shared/hosted/keys.js';
import { requireKind } from '../principal.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export function keyRoutes(deps: { ctx: ServiceContext; hosted: boolean }): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;

  router.post(
    '/v0/keys',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 'create keys');
      const r = new BodyReader(requireObject(req.body), ['mandate', 'ask_in_client']);
      const mandate = r.string('mandate', { required: true, max: 300 });
      const ask = r.body.ask_in_client;
      if (ask !== undefined && typeof ask !== 'boolean') r.problems.push({ path: '$.ask_in_client', message: 'must be true or false' });
      r.done();
      // An agent key acts under one of the caller's own root mandates.
      const stored = await loadMandate(ctx.db, mandate!);
      if (stored?.mandate.depth !== 0 || stored.mandate.issuer !== p.account) throw new HolonError('not_found', 404, `you have no mandate ${mandate}`);
      const minted = await createKey(ctx.db, { kind: 'agent', account: p.account, mandateId: mandate!, askInClient: ask === true });
      res.status(201).json({ ...minted, note: 'the key is shown once: keep it now' });
    }),
  );

  router.delete(
    '/v0/keys/:prefix',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 'revoke keys');
      const prefix = String(req.params.prefix);
      if (!(await revokeKey(ctx.db, p.account, prefix))) throw new HolonError('not_found', 404, `you have no live key ${prefix.slice(0, 40)}`);
      res.json({ prefix, state: 'revoked' });
    }),
  );

  return router;
}
