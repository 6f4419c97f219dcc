/**
 * The receipt log's public side (docs/receipts.md "The log"): GET /v0/log/checkpoint, the newest signed checkpoint,
 * and GET /v0/log/consistency?from=&to=, the proof that a later tree extends an earlier one. No key: a checkpoint
 * and a consistency proof reveal only counts and hashes. A receipt's own proof (GET /v0/receipts/{id}/proof) is
 * scoped like the receipt (routes/receipts.ts).
 */
import { type Request, Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { checkpointNow, latestCheckpoint } from '../../../shared/receipts/checkpoints.js';
import { consistencyProof, treeSize } from '../../../shared/receipts/log.js';
import { badQuery, queryString } from '../query.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { CHECKPOINT, CONSISTENCY_PROOF, failure } from '../openapi/schemas.js';

const SIZE = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

export const logOperations = defineOperations({
  checkpoint: {
    id: 'readLogCheckpoint',
    method: 'get',
    path: '/v0/log/checkpoint',
    tag: 'receipts',
    auth: ['none'],
    summary: 'The newest signed checkpoint of the receipt log',
    description:
      'A C2SP tlog-checkpoint signed as a C2SP signed note with the gateway’s Ed25519 key, whose key name is the origin (docs/receipts.md). The settler signs one every HOLON_CHECKPOINT_S while receipts arrive; before the first, one is signed on the spot.',
    responses: { 200: { description: 'The checkpoint', schema: CHECKPOINT, headers: { 'Cache-Control': '`no-cache`' } } },
  },
  consistency: {
    id: 'readLogConsistency',
    method: 'get',
    path: '/v0/log/consistency',
    tag: 'receipts',
    auth: ['none'],
    summary: 'The consistency proof between two sizes of the receipt log',
    query: {
      from: { description: 'The earlier tree size (0 ≤ from ≤ to)', schema: SIZE, required: true },
      to: { description: 'The later tree size, at most the log’s size now', schema: SIZE, required: true },
    },
    responses: {
      200: { description: 'The proof', schema: CONSISTENCY_PROOF },
      400: failure('from or to missing, not a size, from > to, or to beyond the log', 'invalid_request'),
    },
  },
});

/** A tree size in the query: a decimal integer from 0, safe in JavaScript. */
export function querySize(req: Request, name: string, required: boolean): number | undefined {
  const raw = queryString(req, name, 20);
  if (raw === undefined) {
    if (required) throw badQuery(name, 'is required: a tree size, 0 or more');
    return undefined;
  }
  const n = Number(raw);
  if (!/^(0|[1-9][0-9]*)$/.test(raw) || !Number.isSafeInteger(n)) throw badQuery(name, 'must be a tree size: a whole number, 0 or more');
  return n;
}

export function logRoutes(ctx: ServiceContext): Router {
  const router = Router();
  mount(router, logOperations.checkpoint, async (_req, res) => {
    res.set('Cache-Control', 'no-cache').json((await latestCheckpoint(ctx.db)) ?? (await checkpointNow(ctx)));
  });
  mount(router, logOperations.consistency, async (req, res) => {
    const from = querySize(req, 'from', true)!;
    const to = querySize(req, 'to', true)!;
    if (from > to) throw badQuery('from', `must not exceed to (${from} > ${to})`);
    const size = await treeSize(ctx.db);
    if (to > size) throw badQuery('to', `must not exceed the log's size, ${size}`);
    const proof = await consistencyProof(ctx.db, from, to);
    res.json({ from, to, proof: proof.map((h) => h.toString('base64')) });
  });
  return router;
}
