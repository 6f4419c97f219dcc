/**
 * Publishing (gateway.md §7 "Publishing agents"), hosted only (dev mode: 404), a human key:
 *   POST   /v0/agents                          the manifest as JSON → 201 the listed version, or every failed condition
 *   DELETE /v0/agents/{ns}/{name}@{version}    the author yanks one of their versions (never frees the number)
 * The rules and statuses are shared/hosted/publish.ts.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import type { GitHubSettings } from '../../../shared/hosted/github.js';
import { publishVersion, yankOwnVersion } from '../../../shared/hosted/publish.js';
import { requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';

export interface PublishingDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** The GitHub app; without it publishing answers 503. */
  github: GitHubSettings | undefined;
  allowPrivate: boolean;
}

export function publishingRoutes(deps: PublishingDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;
  const settings = { github: deps.github, allowPrivate: deps.allowPrivate };

  router.post(
    '/v0/agents',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 'publish agents');
      res.status(201).json(await publishVersion(ctx, settings, p.account, req.body));
    }),
  );

  router.delete(
    /^\/v0\/agents\/([^/]+)\/([^/@]+)@([^/]+)$/,
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 'yank agent versions');
      // Express has decoded the captures already.
      const m = req.params as unknown as Record<string, string>;
      res.json(await yankOwnVersion(ctx, p.account, `${m[0]}/${m[1]}`, String(m[2])));
    }),
  );

  return router;
}
