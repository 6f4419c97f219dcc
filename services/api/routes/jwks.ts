/**
 * GET /.well-known/jwks.json (no key): the gateway's public signing keys (shared/signing/key-set.ts, docs/receipts.md):
 * the key receipts are signed with, then the retired ones with `retired_at`, then the keys other processes of the
 * gateway registered (one each, on Postgres without HOLON_SIGNING_KEY). Public halves only; cached five minutes,
 * readable by any page (Access-Control-Allow-Origin: *, no credentials).
 */
import { Router } from 'express';
import type { Queryable } from '../../../shared/db/connect.js';
import type { KeySet } from '../../../shared/signing/key-set.js';
import { fullKeySet } from '../../../shared/signing/key-store.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { KEY_SET } from '../openapi/schemas.js';

export const jwksOperations = defineOperations({
  jwks: {
    id: 'readJwks',
    method: 'get',
    path: '/.well-known/jwks.json',
    tag: 'meta',
    auth: ['none'],
    summary: "The gateway's public signing keys (RFC 7517): the current one first, then the retired ones with retired_at",
    responses: { 200: { description: 'The key set', schema: KEY_SET, headers: { 'Cache-Control': '`public, max-age=300`: five minutes' } } },
  },
});

/** The configured keys, then those the gateway's other processes registered (shared/signing/key-store.ts). */
export function jwksRoutes(db: Queryable, keySet: KeySet): Router {
  const router = Router();
  mount(router, jwksOperations.jwks, async (_req, res) => {
    const body = JSON.stringify(await fullKeySet(db, keySet));
    res.set({ 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' }).type('application/json').send(body);
  });
  return router;
}
