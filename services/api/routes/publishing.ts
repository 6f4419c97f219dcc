/**
 * Publishing (gateway.md §7 "Publishing agents"), hosted only (dev mode: 404), a human key:
 *   POST   /v0/agents                          the manifest as JSON → 201 the listed version, or every failed condition
 *   DELETE /v0/agents/{ns}/{name}@{version}    the author yanks one of their versions (never frees the number)
 *   POST   /v0/agents/{ns}/{name}@{version}/evaluate   the author re-runs its evaluation → 202 (shared/evaluation/rerun.ts)
 * The rules and statuses are shared/publishing/publish.ts.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import type { GitHubSettings } from '../../../shared/accounts/github.js';
import { publishVersion, yankOwnVersion } from '../../../shared/publishing/publish.js';
import { rerunEvaluation } from '../../../shared/evaluation/rerun.js';
import type { SuiteSummary } from '../../../shared/evaluation/store.js';
import { requireKind } from '../principal.js';
import { captured } from '../captures.js';
import { manifestSchema } from '../../../shared/core/manifest/index.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { PUBLISHED, RERUN, YANKED } from '../openapi/author-schemas.js';
import { failure } from '../openapi/schemas.js';

const VERSION_PARAMS = {
  ns: { description: 'Your namespace (your handle)', example: 'alice' },
  name: { description: 'The agent’s name', example: 'tables' },
  version: { description: 'The exact version', example: '1.0.0' },
} as const;
const AUTHOR_ERRORS = {
  401: failure('No key', 'unauthorized'),
  403: failure('Not a human key', 'forbidden'),
  404: failure('No such version of yours', 'not_found'),
} as const;

export const publishingOperations = defineOperations({
  publish: {
    id: 'publishVersion',
    method: 'post',
    path: '/v0/agents',
    tag: 'publishing',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Publish a version of one of your agents: the manifest as JSON',
    description: 'Listed at once when every condition of gateway.md §7 "Publishing agents" holds; otherwise every failed condition is listed.',
    // The manifest schema shared/core/manifest/validate.ts validates with (plus its rules).
    body: { schema: manifestSchema, description: 'The manifest (spec manifest.md), as JSON' },
    responses: {
      201: { description: 'The listed version', schema: PUBLISHED },
      401: failure('No key', 'unauthorized'),
      403: failure(
        'Not a human key, not your namespace (`foreign_namespace`), or an account not linked to GitHub (`github_not_linked`)',
        'foreign_namespace',
        'github_not_linked',
      ),
      409: failure('The version was published before', 'version_taken'),
      422: failure('The version cannot be listed: the manifest, its runtime, endpoint or repository; every problem listed', 'invalid_manifest'),
      429: failure('Too many publishes', 'rate_limited'),
      502: failure('GitHub failed while checking the repository; nothing was listed', 'github_error'),
      503: failure(
        'Publishing needs the GitHub app on this gateway (`publishing_off`), or GitHub did not answer (`github_unavailable`)',
        'publishing_off',
        'github_unavailable',
      ),
    },
  },
  yank: {
    id: 'yankVersion',
    method: 'delete',
    path: '/v0/agents/{ns}/{name}@{version}',
    route: /^\/v0\/agents\/([^/]+)\/([^/@]+)@([^/]+)$/,
    tag: 'publishing',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Yank a version you published: no longer listed; its number is never freed',
    params: VERSION_PARAMS,
    responses: {
      200: { description: 'Yanked', schema: YANKED },
      ...AUTHOR_ERRORS,
      409: failure('Yanked already', 'already_yanked'),
    },
  },
  evaluate: {
    id: 'rerunEvaluation',
    method: 'post',
    path: '/v0/agents/{ns}/{name}@{version}/evaluate',
    route: /^\/v0\/agents\/([^/]+)\/([^/@]+)@([^/]+)\/evaluate$/,
    tag: 'publishing',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Re-run the evaluation of one of your versions',
    params: VERSION_PARAMS,
    responses: {
      202: { description: 'Queued', schema: RERUN },
      ...AUTHOR_ERRORS,
      409: failure(
        'An evaluation is still running (`evaluation_running`), the version is yanked (`yanked`), or no suite applies (`no_suite`)',
        'evaluation_running',
        'yanked',
        'no_suite',
      ),
      429: failure('Too many re-runs', 'rate_limited'),
    },
  },
});

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

  mount(router, publishingOperations.publish, async (req, res) => {
    const p = requireKind(res, ['human'], 'publish agents');
    res.status(201).json(await publishVersion(ctx, settings, p.account, req.body));
  });

  mount(router, publishingOperations.yank, async (req, res) => {
    const p = requireKind(res, ['human'], 'yank agent versions');
    // Express has decoded the captures already.
    res.json(await yankOwnVersion(ctx, p.account, `${captured(req, 0)}/${captured(req, 1)}`, captured(req, 2)));
  });

  mount(router, publishingOperations.evaluate, async (req, res) => {
    const p = requireKind(res, ['human'], 're-run evaluations');
    res
      .status(202)
      .json(await rerunEvaluation(ctx, suites, { author: p.account, agentId: `${captured(req, 0)}/${captured(req, 1)}`, version: captured(req, 2) }));
  });

  return router;
}
