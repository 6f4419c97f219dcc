/**
 * Publishing (gateway.md §7 "Publishing agents"), hosted only (dev mode: 404), a human key:
 *   POST   /v0/agents                          the manifest as JSON → 201 the listed version, or every failed condition
 *   DELETE /v0/agents/{ns}/{name}@{version}    the author yanks one of their versions (never frees the number)
 *   POST   /v0/agents/{ns}/{name}@{version}/evaluate   the author re-runs its evaluation → 202 (shared/evaluation/rerun.ts)
 * The rules and statuses are shared/hosted/publish.ts.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import type { GitHubSettings } from '../../../shared/hosted/github.js';
import { publishVersion, yankOwnVersion } from '../../../shared/hosted/publish.js';
import { rerunEvaluation } from '../../../shared/evaluation/rerun.js';
import type { SuiteSummary } from '../../../shared/evaluation/store.js';
import { requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';

export interface PublishingDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** The GitHub app; without it publishing answers 503. */
  github: GitHubSettings | undefined;
  allowPrivate: boolean;
  /** The evaluation suites by capability (shared/evaluation/suites.ts); none when absent. */
  suites?: (capabilities: readonly string[]) => SuiteSummary[];
}

export function publishingRoutes(deps: PublishingDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;
  const suites = deps.suites ?? (() => []);
  const settings = { github: deps.github, allowPrivate: deps.allowPrivate, suites };

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

  router.post(
    /^\/v0\/agents\/([^/]+)\/([^/@]+)@([^/]+)\/evaluate$/,
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['human'], 're-run evaluations');
      const m = req.params as unknown as Record<string, string>;
      res.status(202).json(await rerunEvaluation(ctx, suites, p.account, `${m[0]}/${m[1]}`, String(m[2])));
    }),
  );

  return router;
}
