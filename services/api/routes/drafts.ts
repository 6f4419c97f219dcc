/**
 * Drafting a listing (gateway.md §7, "Webhook agents"), hosted only (dev mode: 404), a human key:
 *   POST /v0/agents/draft  {name, endpoint, input, summary?, price?}  → 200 {manifest, yaml}
 * The endpoint is called once (shared/publishing/draft.ts); nothing is stored or published. Registered before the
 * publishing and agent routes, so that `/v0/agents/draft` is never read as an agent id.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HANDLE_PATTERN } from '../../../shared/core/identifiers.js';
import { parseAmount } from '../../../shared/core/money.js';
import { draftListing, type DraftRequest, type DraftSettings } from '../../../shared/publishing/draft.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { DRAFT } from '../openapi/author-schemas.js';
import { amount, failure, httpUrl, text } from '../openapi/schemas.js';

const DRAFT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'endpoint', 'input'],
  properties: {
    name: text(39, 'The agent’s name in your namespace', {
      pattern: HANDLE_PATTERN,
      'x-messages': { pattern: 'must be 2–39 characters of a-z, 0-9 and "-", not starting or ending with "-"' },
    }),
    endpoint: httpUrl('The webhook to call once with the example input'),
    input: { description: 'The example input sent to the endpoint', 'x-messages': { required: 'is required: the example input sent to the endpoint' } },
    summary: text(140, 'One line', { pattern: '^[^\\r\\n]*$', 'x-messages': { pattern: 'must be one line' } }),
    price: amount('Per run, EUR, more than zero', { allowZero: false }),
  },
} as const;

export const draftOperations = defineOperations({
  draft: {
    id: 'draftListing',
    method: 'post',
    path: '/v0/agents/draft',
    tag: 'publishing',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Call a webhook once with an example input and get a draft manifest (nothing is stored or published)',
    body: { schema: DRAFT_BODY, example: { name: 'invoice-total', endpoint: 'https://hooks.example.com/total', input: { text: 'Total: 12.50' } } },
    responses: {
      200: { description: 'The draft', schema: DRAFT },
      400: failure('A bad body, every problem listed', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      403: failure('Not a human key', 'forbidden'),
      422: failure(
        'The endpoint was refused (not public, http://, a redirect: `endpoint_refused`), could not be reached in time (`endpoint_unreachable`), answered no 2xx (`endpoint_failed`), more than 10 MB (`endpoint_too_large`) or no JSON (`endpoint_not_json`); its credential is unusable (`credential_unusable`); or its answer makes no valid manifest (`invalid_draft`)',
      ),
      429: failure('Too many drafts', 'rate_limited'),
    },
  },
});

const readDraft = bodyReader<{ name: string; endpoint: string; input: unknown; summary?: string; price?: string }>(DRAFT_BODY);

export interface DraftDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: private addresses and http:// endpoints may be drafted. */
  allowPrivate: boolean;
  /** HOLON_FILE_SECRET: to send the endpoint credential, when one is set. */
  fileSecret: string | undefined;
}

/** The body, every problem listed with its path (400 `invalid_request`). */
function readDraftRequest(body: unknown): DraftRequest {
  const r = readDraft(body);
  r.done();
  const { name, endpoint, summary, price } = r.body;
  return { name, endpoint: new URL(endpoint), input: r.body.input, summary, price: price === undefined ? undefined : parseAmount(price) };
}

export function draftRoutes(deps: DraftDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const settings: DraftSettings = { allowPrivate: deps.allowPrivate, fileSecret: deps.fileSecret };

  mount(router, draftOperations.draft, async (req, res) => {
    const p = requireKind(res, ['human'], 'draft listings');
    res.json(await draftListing(deps.ctx.db, settings, p.account, readDraftRequest(req.body)));
  });

  return router;
}
