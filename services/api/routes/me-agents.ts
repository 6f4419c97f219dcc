/**
 * GET /v0/me/agents — the author's published versions and what each earned, computed from the journal
 * (shared/catalogue/earnings.ts has the definition). Hosted only (dev mode: 404); a human key (an agent key is
 * 403, none 401).
 */
import { Router } from 'express';
import { authorAgents } from '../../../shared/catalogue/earnings.js';
import type { ServiceContext } from '../../../shared/context.js';
import { requireKind } from '../principal.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { AUTHOR_AGENTS } from '../openapi/author-schemas.js';
import { failure } from '../openapi/schemas.js';

export const meAgentOperations = defineOperations({
  list: {
    id: 'listMyAgents',
    method: 'get',
    path: '/v0/me/agents',
    tag: 'publishing',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Your published versions, their evaluations and what each earned (from the journal)',
    responses: {
      200: { description: 'Your agents', schema: AUTHOR_AGENTS },
      401: failure('No key', 'unauthorized'),
      403: failure('Not a human key', 'forbidden'),
    },
  },
});

export interface MeAgentsDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_FILE_SECRET: whether a credential is set can only be read with it. */
  fileSecret: string | undefined;
}

export function meAgentRoutes(deps: MeAgentsDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  mount(router, meAgentOperations.list, async (_req, res) => {
    const p = requireKind(res, ['human'], 'see your agents and earnings');
    res.json(await authorAgents(deps.ctx, p.account, { fileSecret: deps.fileSecret }));
  });
  return router;
}
