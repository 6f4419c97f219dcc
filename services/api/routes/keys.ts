/**
 * API keys (gateway.md §7), hosted only:
 *   POST   /v0/keys {mandate, ask_in_client?}  human → a new agent key for one of their root mandates
 *   DELETE /v0/keys/{prefix}                   human: revoke one of their keys (404 for anyone else's)
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { loadMandate } from '../../../shared/mandates/store.js';
import { createKey, revokeKey } from '../../../shared/accounts/keys.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { BOOLEAN, exact, failure, MINTED_KEY, text } from '../openapi/schemas.js';

const CREATE_KEY_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['mandate'],
  properties: {
    mandate: text(300, 'One of your root mandates'),
    ask_in_client: { ...BOOLEAN, description: 'Whether a human is at the client to answer approval forms (default false)' },
  },
} as const;

export const keyOperations = defineOperations({
  create: {
    id: 'createKey',
    method: 'post',
    path: '/v0/keys',
    tag: 'keys',
    auth: ['human'],
    hostedOnly: true,
    summary: 'A new agent key for one of your root mandates (shown once)',
    body: {
      schema: CREATE_KEY_BODY,
      example: { mandate: 'alice/sandbox', ask_in_client: false },
    },
    responses: {
      201: { description: 'The key, shown once', schema: MINTED_KEY },
      400: failure('A bad body', 'invalid_request'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  revoke: {
    id: 'revokeKey',
    method: 'delete',
    path: '/v0/keys/{prefix}',
    tag: 'keys',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Revoke one of your keys',
    params: { prefix: { description: 'The key’s prefix (as GET /v0/me lists it)', example: 'hlk_a_abcd1234' } },
    responses: {
      200: { description: 'Revoked', schema: exact('The revoked key', { prefix: { type: 'string' }, state: { const: 'revoked' } }, ['prefix', 'state']) },
      404: failure('No live key of yours with this prefix', 'not_found'),
    },
  },
});

const readCreate = bodyReader<{ mandate: string; ask_in_client?: boolean }>(CREATE_KEY_BODY);

export function keyRoutes(deps: { ctx: ServiceContext; hosted: boolean }): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;

  mount(router, keyOperations.create, async (req, res) => {
    const p = requireKind(res, ['human'], 'create keys');
    const r = readCreate(req.body);
    r.done();
    const mandate = r.body.mandate;
    const ask = r.body.ask_in_client;
    // An agent key acts under one of the caller's own root mandates.
    const stored = await loadMandate(ctx.db, mandate);
    if (stored?.mandate.depth !== 0 || stored.mandate.issuer !== p.account) throw new HolonError('not_found', `you have no mandate ${mandate}`);
    const minted = await createKey(ctx.db, { kind: 'agent', account: p.account, mandateId: mandate, askInClient: ask === true });
    res.status(201).json({ ...minted, note: 'the key is shown once: keep it now' });
  });

  mount(router, keyOperations.revoke, async (req, res) => {
    const p = requireKind(res, ['human'], 'revoke keys');
    const prefix = String(req.params.prefix);
    if (!(await revokeKey(ctx.db, p.account, prefix))) throw new HolonError('not_found', `you have no live key ${prefix.slice(0, 40)}`);
    res.json({ prefix, state: 'revoked' });
  });

  return router;
}
