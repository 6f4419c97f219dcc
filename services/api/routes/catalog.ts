/**
 * GET /v0/catalog?limit=&cursor= — the public catalogue (no key): declared and measured, per agent, paginated
 * (shared/catalogue/catalog-page.ts says what each field means).
 */
import { type Request, Router } from 'express';
import { catalogPage } from '../../../shared/catalogue/catalog-page.js';
import type { ServiceContext } from '../../../shared/context.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { CATALOG_PAGE } from '../openapi/catalogue-schemas.js';
import { failure } from '../openapi/schemas.js';

export const catalogOperations = defineOperations({
  page: {
    id: 'readCatalog',
    method: 'get',
    path: '/v0/catalog',
    tag: 'agents',
    auth: ['none'],
    summary: 'The public catalogue: declared and measured, per agent, paged',
    query: {
      limit: { description: 'Page size', schema: { type: 'integer', minimum: 1 } },
      cursor: { description: 'The `next_cursor` of the previous page', schema: { type: 'string' } },
    },
    responses: {
      200: {
        description: 'A page of the catalogue',
        schema: CATALOG_PAGE,
      },
      400: failure('A bad limit or cursor', 'invalid_request'),
    },
  },
});

/** Query parameters given once, as strings (the app's 'simple' parser); anything else is ignored. */
function pageQuery(query: Request['query']) {
  const { limit, cursor } = query;
  return { ...(typeof limit === 'string' ? { limit } : {}), ...(typeof cursor === 'string' ? { cursor } : {}) };
}

export function catalogRoutes(ctx: ServiceContext): Router {
  const router = Router();
  mount(router, catalogOperations.page, async (req, res) => void res.json(await catalogPage(ctx, pageQuery(req.query))));
  return router;
}
