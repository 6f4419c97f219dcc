/**
 * GET /v0/agents?q=&capability=&mandate= — the catalogue, ranked (shared/catalogue/catalogue.ts says what each
 *   field means; `q` is full-text search, shared/catalogue/text-search.ts).
 * GET /v0/agents/{ns}/{name}[@range] — one agent: manifest, Agent Record, versions.
 */
import { Router } from 'express';
import { describeAgent, searchCatalogue } from '../../../shared/catalogue/catalogue.js';
import { MAX_QUERY_LENGTH } from '../../../shared/catalogue/text-search.js';
import type { ServiceContext } from '../../../shared/context.js';
import { assertSeesMandate, principalOf } from '../principal.js';
import { queryString } from '../query.js';
import { capture } from '../captures.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { AGENT_VIEW, SEARCH_RESULT } from '../openapi/catalogue-schemas.js';
import { failure } from '../openapi/schemas.js';

export const agentOperations = defineOperations({
  search: {
    id: 'searchAgents',
    method: 'get',
    path: '/v0/agents',
    tag: 'agents',
    auth: ['none', 'human', 'agent'],
    summary: 'Ranked search; with `mandate`, costs converted and denied agents listed with a reason',
    query: {
      q: {
        description:
          'Words, e.g. `profile this CSV`: agents matching ANY of them, stemmed, over id, name, summary, description, capabilities and ' +
          'examples, the agent whose id is `q` first, then by relevance, then by cost per successful run. Only stop words or ' +
          `punctuation match nothing. At most ${MAX_QUERY_LENGTH} characters, given once`,
        schema: { type: 'string', maxLength: MAX_QUERY_LENGTH },
      },
      capability: { description: 'An exact capability class, or `prefix.*`', schema: { type: 'string' } },
      mandate: { description: 'One of your mandates: rank under it', schema: { type: 'string' } },
    },
    responses: {
      200: { description: 'Matching agents', schema: SEARCH_RESULT },
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  describe: {
    id: 'describeAgent',
    method: 'get',
    path: '/v0/agents/{ns}/{name}',
    route: /^\/v0\/agents\/([^/]+)\/([^/@]+)(?:@(.+))?$/,
    tag: 'agents',
    auth: ['none', 'human', 'agent'],
    summary: 'One agent: manifest, Agent Record (declared and measured), versions',
    description: 'The name may end with `@<semver range>` (`csv-profile@^1`): the highest listed version in range.',
    params: {
      ns: { description: 'Namespace', example: 'holon-labs' },
      name: { description: 'Agent name, optionally `@<range>`', example: 'csv-profile' },
    },
    responses: {
      200: {
        description: 'The agent',
        schema: AGENT_VIEW,
      },
      404: failure('No such agent or version is listed'),
    },
  },
});

const optional = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

export function agentRoutes(ctx: ServiceContext): Router {
  const router = Router();

  mount(router, agentOperations.search, async (req, res) => {
    const q = queryString(req, 'q', MAX_QUERY_LENGTH);
    const capability = optional(req.query.capability);
    const mandateId = optional(req.query.mandate);
    if (mandateId !== undefined) assertSeesMandate(principalOf(res), mandateId, `there is no mandate ${mandateId.slice(0, 300)}`);
    res.json(await searchCatalogue(ctx, { ...(q ? { q } : {}), ...(capability ? { capability } : {}), ...(mandateId ? { mandateId } : {}) }));
  });

  mount(router, agentOperations.describe, async (req, res) => {
    const [ns, name, version] = [capture(req, 0), capture(req, 1), capture(req, 2)];
    res.json(await describeAgent(ctx, `${ns}/${name}${version ? `@${decodeURIComponent(version)}` : ''}`));
  });

  return router;
}
