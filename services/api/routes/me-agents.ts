/**
 * GET /v0/me/agents — the author's published versions and what each earned, computed from the journal
 * (shared/catalogue/earnings.ts has the definition). Hosted only (dev mode: 404); a human key (an agent key is
 * 403, none 401).
 */
import { Router } from 'express';
import { authorAgents } from '../../../shared/catalogue/earnings.js';
import type { ServiceContext } from '../../../shared/context.js';
import { requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';

export interface MeAgentsDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_FILE_SECRET: whether a credential is set can only be read with it. */
  fileSecret: string | undefined;
}

export function meAgentRoutes(deps: MeAgentsDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  router.get(
    '/v0/me/agents',
    asyncRoute(async (_req, res) => {
      const p = requireKind(res, ['human'], 'see your agents and earnings');
      res.json(await authorAgents(deps.ctx, p.account, { fileSecret: deps.fileSecret }));
    }),
  );
  return router;
}
