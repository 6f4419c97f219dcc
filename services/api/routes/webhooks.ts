/**
 * Webhook signing secrets (docs/webhooks.md), hosted only:
 *   POST /v0/webhooks/secret/rotate   human → {webhook_secret, previous_valid_until}: a new secret, shown once; the
 *                                     previous one keeps signing until the end of the rotation window (24 h default)
 * An account made before per-account secrets gets its first one here. Dev mode signs with one local secret
 * (HOLON_CALLBACK_SECRET) and has no such route (404).
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import type { WebhookSecrets } from '../../../shared/webhooks/secrets.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { ROTATED_SECRET } from '../openapi/author-schemas.js';
import { failure } from '../openapi/schemas.js';

const NO_FIELDS = { type: 'object', additionalProperties: false, properties: {} } as const;

export const webhookOperations = defineOperations({
  rotate: {
    id: 'rotateWebhookSecret',
    method: 'post',
    path: '/v0/webhooks/secret/rotate',
    tag: 'webhooks',
    auth: ['human'],
    hostedOnly: true,
    summary: 'A new webhook signing secret (shown once); the previous one signs until the end of the rotation window',
    body: { schema: NO_FIELDS, required: false, example: {} },
    responses: {
      200: { description: 'The new secret', schema: ROTATED_SECRET },
      400: failure('A body with fields', 'invalid_request'),
      403: failure('Not a human key', 'forbidden'),
      503: failure('Webhook secrets are not available on this gateway', 'webhooks_unavailable'),
    },
  },
});

const readRotate = bodyReader(NO_FIELDS);

export interface WebhookRouteDeps {
  ctx: ServiceContext;
  hosted: boolean;
  webhooks?: WebhookSecrets;
}

export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();
  const { webhooks } = deps;
  if (!deps.hosted || !webhooks) return router;
  mount(router, webhookOperations.rotate, async (req, res) => {
    const p = requireKind(res, ['human'], 'rotate the webhook secret');
    if (req.body !== undefined) readRotate(req.body).done();
    const rotated = await webhooks.rotate(deps.ctx.db, p.account);
    res.set('Cache-Control', 'no-store');
    res.json({ ...rotated, note: 'the secret is shown once: keep it now. Until previous_valid_until, deliveries carry both signatures.' });
  });
  return router;
}
