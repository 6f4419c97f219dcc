/**
 * Drafting a listing (gateway.md §7, "Webhook agents"), hosted only (dev mode: 404), a human key:
 *   POST /v0/agents/draft  {name, endpoint, input, summary?, price?}  → 200 {manifest, yaml}
 * The endpoint is called once (shared/hosted/draft.ts); nothing is stored or published. Registered before the
 * publishing and agent routes, so that `/v0/agents/draft` is never read as an agent id.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { isHandle } from '../../../shared/core/identifiers.js';
import { draftListing, type DraftRequest, type DraftSettings } from '../../../shared/hosted/draft.js';
import { requireKind } from '../principal.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export interface DraftDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: private addresses and http:// endpoints may be drafted. */
  allowPrivate: boolean;
  /** HOLON_FILE_SECRET: to send the endpoint credential, when one is set. */
  fileSecret: string | undefined;
}

/** The body, every problem listed with its path (400 `invalid_request`). */
export function readDraftRequest(body: unknown): DraftRequest {
  const r = new BodyReader(requireObject(body), ['name', 'endpoint', 'input', 'summary', 'price']);
  const name = r.string('name', { required: true, max: 39 });
  if (name !== undefined && !isHandle(name)) {
    r.problems.push({ path: '$.name', message: 'must be 2–39 characters of a-z, 0-9 and "-", not starting or ending with "-"' });
  }
  if (r.body.endpoint === undefined) r.problems.push({ path: '$.endpoint', message: 'is required' });
  const endpoint = r.url('endpoint');
  if (!Object.hasOwn(r.body, 'input')) r.problems.push({ path: '$.input', message: 'is required: the example input sent to the endpoint' });
  const summary = r.string('summary', { max: 140 });
  if (summary !== undefined && /[\r\n]/.test(summary)) r.problems.push({ path: '$.summary', message: 'must be one line' });
  const price = r.amount('price', { allowZero: false });
  r.done();
  return { name: name!, endpoint: new URL(endpoint!), input: r.body.input, summary, price };
}

export function draftRoutes(deps: DraftDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const settings: DraftSettings = { allowPrivate: deps.allowPrivate, fileSecret: deps.fileSecret };

  router.post(
    '/v0/agents/draft',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 'draft listings');
      res.json(await draftListing(deps.ctx.db, settings, p.account, readDraftRequest(req.body)));
    }),
  );

  return router;
}
