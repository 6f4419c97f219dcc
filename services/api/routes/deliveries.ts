/**
 * A call's webhook delivery (docs/webhooks.md); the same principals as GET /v0/calls/{id} (another's call is a 404):
 *   GET  /v0/calls/{id}/deliveries   → {call: {id}, delivery: null | {id (= webhook-id), state, reason, next_attempt_at,
 *                                      attempts: [{attempt, resend, at, status_code, error, duration_ms, next_attempt_at}]}}
 *   POST /v0/calls/{id}/deliveries   → 202 {delivery, resend}: one more attempt, outside the schedule (rate-limited:
 *                                      HOLON_RATE_REDELIVERIES_PER_HOUR per account); 409 when there is no delivery yet.
 *                                      An output no longer kept goes as `output: null, output_expired: true`.
 */
import { Router, type Response } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import { readCall } from '../../../shared/calls/transitions.js';
import { askResend, deliveryOfCall, deliveryView, enqueueAttempt } from '../../../shared/webhooks/deliveries.js';
import { ownOrNotFound, requireKind, scopeOf } from '../principal.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { DELIVERY } from '../openapi/author-schemas.js';
import { closed, failure } from '../openapi/schemas.js';

const CALL_ID = { id: { description: 'The call id', example: 'r_0000000001abcdefabcdef' } } as const;

export const deliveryOperations = defineOperations({
  read: {
    id: 'readDelivery',
    method: 'get',
    path: '/v0/calls/{id}/deliveries',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: "A call's webhook delivery and its attempts",
    params: CALL_ID,
    responses: {
      200: {
        description: 'The delivery (null when the call named no callback_url or has not finished)',
        schema: closed('The delivery', { call: closed('The call', { id: { type: 'string' } }), delivery: { oneOf: [DELIVERY, { type: 'null' }] } }),
      },
      404: failure('No such call of yours', 'not_found'),
    },
  },
  resend: {
    id: 'resendDelivery',
    method: 'post',
    path: '/v0/calls/{id}/deliveries',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: 'One more delivery attempt, outside the schedule (rate-limited)',
    params: CALL_ID,
    responses: {
      202: {
        description: 'Queued',
        schema: closed('The re-send', { delivery: DELIVERY, resend: { type: 'integer', minimum: 1, description: 'Its number: 1, 2, …' } }),
      },
      404: failure('No such call of yours', 'not_found'),
      409: failure('No delivery yet', 'no_delivery'),
      429: failure('Too many re-sends', 'rate_limited'),
    },
  },
});

/** The call, when this principal may see it: GET /v0/calls/{id}'s rule (its mandate), and its 404 otherwise. */
async function visibleCall(ctx: ServiceContext, res: Response, id: string) {
  const p = requireKind(res, ['operator', 'human', 'agent'], 'read calls');
  return ownOrNotFound(scopeOf(p), await readCall(ctx.db, id), (call) => call.mandateId, `there is no call ${id.slice(0, 100)}`);
}

export function deliveryRoutes(ctx: ServiceContext): Router {
  const router = Router();

  mount(router, deliveryOperations.read, async (req, res) => {
    const call = await visibleCall(ctx, res, String(req.params.id));
    const d = await deliveryOfCall(ctx.db, call.id);
    res.json({ call: { id: call.id }, delivery: d ? await deliveryView(ctx.db, d) : null });
  });

  mount(router, deliveryOperations.resend, async (req, res) => {
    const call = await visibleCall(ctx, res, String(req.params.id));
    const d = await deliveryOfCall(ctx.db, call.id);
    if (!d) throw new HolonError('no_delivery', 'this call has no delivery: it named no callback_url, or it has not finished yet');
    const resend = await askResend(ctx.db, d.id);
    await enqueueAttempt(ctx.messaging.queues, { callId: call.id, deliveryId: d.id, resend });
    res.status(202).json({ delivery: await deliveryView(ctx.db, d), resend });
  });

  return router;
}
