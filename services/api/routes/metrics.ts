/**
 * GET /metrics: this process's metrics in Prometheus text (shared/platform/metrics.ts). Hosted: the admin key only
 * (`Authorization: Bearer <HOLON_ADMIN_KEY>`); dev: the local operator, like every route. Not a /v0 route, so not in
 * the OpenAPI document. The metrics port (HOLON_METRICS_PORT) serves the same text without a key, for the cluster.
 */
import { Router } from 'express';
import type { GatewayMetrics } from '../../../shared/platform/metrics.js';
import { requireKind } from '../principal.js';

export function metricsRoutes(metrics: GatewayMetrics): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    requireKind(res, ['admin', 'operator'], 'read the metrics');
    res.type(metrics.contentType).send(await metrics.text());
  });
  return router;
}
