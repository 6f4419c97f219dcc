/**
 * GET /v0/agents?q=&capability=&mandate= — the catalogue, ranked (shared/catalogue/catalogue.ts says what each
 *   field means).
 * GET /v0/agents/{ns}/{name}[@range] — one agent: manifest, Agent Record, versions.
 */
import { Router } from 'express';
import { describeAgent, searchCatalogue } from '../../../shared/catalogue/catalogue.js';
import type { ServiceContext } from '../../../shared/context.js';
import { assertSeesMandate, principalOf } from '../principal.js';
import { asyncRoute } from '../route.js';

const optional = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

export function agentRoutes(ctx: ServiceContext): Router {
  const router = Router();

  router.get(
    '/v0/agents',
    asyncRoute(async (req, res) => {
      const q = optional(req.query.q);
      const capability = optional(req.query.capability);
      const mandateId = optional(req.query.mandate);
      if (mandateId !== undefined) assertSeesMandate(principalOf(res), mandateId, `there is no mandate ${mandateId.slice(0, 300)}`);
      res.json(await searchCatalogue(ctx, { ...(q ? { q } : {}), ...(capability ? { capability } : {}), ...(mandateId ? { mandateId } : {}) }));
    }),
  );

  router.get(
    /^\/v0\/agents\/([^/]+)\/([^/@]+)(?:@(.+))?$/,
    asyncRoute(async (req, res) => {
      const p = req.params as Record<string, string | undefined>;
      res.json(await describeAgent(ctx, `${p[0]}/${p[1]}${p[2] ? `@${decodeURIComponent(p[2])}` : ''}`));
    }),
  );

  return router;
}
