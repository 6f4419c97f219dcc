/**
 * GET /v0/catalog?limit=&cursor= — the public catalogue (no key): declared and measured, per agent, paginated
 * (shared/catalogue/catalog-page.ts says what each field means).
 */
import { Router } from 'express';
import { catalogPage } from '../../../shared/catalogue/catalog-page.js';
import type { ServiceContext } from '../../../shared/context.js';
import { asyncRoute } from '../route.js';

/** Query parameters given once, as strings (the app's 'simple' parser); anything else is ignored. */
function pageQuery(query: Record<string, unknown>) {
  const { limit, cursor } = query;
  return { ...(typeof limit === 'string' ? { limit } : {}), ...(typeof cursor === 'string' ? { cursor } : {}) };
}

export function catalogRoutes(ctx: ServiceContext): Router {
  return Router().get(
    '/v0/catalog',
    asyncRoute(async (req, res) => void res.json(await catalogPage(ctx, pageQuery(req.query)))),
  );
}
