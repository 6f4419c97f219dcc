/**
 * Endpoint credentials (gateway.md §7 "Authentication"), hosted only (dev mode: 404), the author's human key (the
 * account whose handle is the namespace; another namespace is a 404, an agent key a 403):
 *   PUT    /v0/agents/{ns}/{name}/credential  {"token": "…"}  → {agent, credential: {set: true, set_at}}
 *   DELETE /v0/agents/{ns}/{name}/credential                  → {agent, credential: {set: false}}
 *   GET    /v0/agents/{ns}/{name}/credential                  → {set, set_at}
 * Write-only: no answer contains the token. Without HOLON_FILE_SECRET every route answers 503.
 */
import { Router, type Request, type Response } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { deleteCredential, MAX_TOKEN_LENGTH, ownAgentId, setCredential, viewCredential } from '../../../shared/publishing/credentials.js';
import { requireKind } from '../principal.js';
import { captured } from '../captures.js';
import { defineOperations, mount, type Operation } from '../openapi/operations.js';
import { CREDENTIAL_SET, CREDENTIAL_STATE, CREDENTIAL_UNSET, credentialAnswer } from '../openapi/author-schemas.js';
import { failure } from '../openapi/schemas.js';

export interface CredentialDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_FILE_SECRET: the key the credentials are encrypted under. */
  fileSecret: string | undefined;
}

const PATH = /^\/v0\/agents\/([^/]+)\/([^/@]+)\/credential$/;

/** `{token}`: checked by shared/publishing/credentials.ts (`tokenProblem`), whose words the 400 uses. */
const TOKEN_BODY = {
  type: 'object',
  required: ['token'],
  properties: {
    token: { type: 'string', minLength: 1, maxLength: MAX_TOKEN_LENGTH, pattern: '^[\\x21-\\x7e]+$', description: 'Printable ASCII, no whitespace' },
  },
  'x-holon-validated-by': 'shared/publishing/credentials.ts',
} as const;

const OWN = {
  method: 'get',
  path: '/v0/agents/{ns}/{name}/credential',
  route: PATH,
  tag: 'credentials',
  auth: ['human'],
  hostedOnly: true,
  params: { ns: { description: 'Your namespace (your handle)', example: 'alice' }, name: { description: 'The agent’s name', example: 'tables' } },
} as const satisfies Partial<Operation>;
const ERRORS = {
  403: failure('Not a human key', 'forbidden'),
  404: failure('Not your namespace', 'not_found'),
  503: failure('HOLON_FILE_SECRET is not set on this gateway'),
} as const;

export const credentialOperations = defineOperations({
  set: {
    ...OWN,
    id: 'setCredential',
    method: 'put',
    summary: 'Set the token sent as `Authorization: Bearer` to your agent’s endpoint (write-only)',
    body: { schema: TOKEN_BODY, example: { token: 'sk_live_51Hx0c2eXaMpLeToKeN' } },
    responses: {
      200: {
        description: 'Set',
        schema: credentialAnswer(CREDENTIAL_SET),
      },
      400: failure('A bad token', 'invalid_request'),
      ...ERRORS,
    },
  },
  remove: {
    ...OWN,
    id: 'deleteCredential',
    method: 'delete',
    summary: 'Remove your agent’s endpoint credential',
    responses: {
      200: {
        description: 'Removed',
        schema: credentialAnswer(CREDENTIAL_UNSET),
      },
      ...ERRORS,
    },
  },
  read: {
    ...OWN,
    id: 'readCredential',
    summary: 'Whether your agent has an endpoint credential set',
    responses: { 200: { description: 'The state', schema: CREDENTIAL_STATE }, ...ERRORS },
  },
});

export function credentialRoutes(deps: CredentialDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx, fileSecret } = deps;
  const own = (req: Request, res: Response, what: string): { handle: string; agentId: string } => {
    const p = requireKind(res, ['human'], what);
    return { handle: p.account, agentId: ownAgentId(p.account, captured(req, 0), captured(req, 1)) };
  };

  mount(router, credentialOperations.set, async (req, res) => {
    const { handle, agentId } = own(req, res, 'set endpoint credentials');
    const token = req.body && typeof req.body === 'object' ? (req.body as { token?: unknown }).token : undefined;
    res.json({ agent: agentId, credential: await setCredential(ctx, fileSecret, { handle, agentId, token }) });
  });

  mount(router, credentialOperations.remove, async (req, res) => {
    const { agentId } = own(req, res, 'delete endpoint credentials');
    res.json({ agent: agentId, credential: await deleteCredential(ctx, fileSecret, agentId) });
  });

  mount(router, credentialOperations.read, async (req, res) => {
    const { agentId } = own(req, res, 'read endpoint credentials');
    res.json(await viewCredential(ctx.db, fileSecret, agentId));
  });

  return router;
}
