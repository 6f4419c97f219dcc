/**
 * GET /v0/openapi.json (no key): the OpenAPI 3.1 document of this gateway's REST routes, built once from the route
 * table (services/api/openapi/). A dev gateway leaves out the hosted-only routes. Public and read-only, so any page
 * may read it (Access-Control-Allow-Origin: *, no credentials).
 */
import { Router } from 'express';
import { buildOpenApiDocument } from '../openapi/document.js';
import { metaOperations, ROUTE_OPERATIONS } from '../openapi/index.js';
import { mount } from '../openapi/operations.js';

export function openApiRoutes(options: { hosted: boolean; publicUrl?: string }): Router {
  const router = Router();
  const body = JSON.stringify(
    buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: options.hosted, ...(options.publicUrl ? { serverUrl: options.publicUrl } : {}) }),
  );
  mount(router, metaOperations.openapi, (_req, res) => {
    res.set({ 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' }).type('application/json').send(body);
  });
  return router;
}
