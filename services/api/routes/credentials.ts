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
import { deleteCredential, ownAgentId, setCredential, viewCredential } from '../../../shared/hosted/credentials.js';
import { requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';

export interface CredentialDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_FILE_SECRET: the key the credentials are encrypted under. */
  fileSecret: string | undefined;
}

const PATH = /^\/v0\/agents\/([^/]+)\/([^/@]+)\/credential$/;

export function credentialRoutes(deps: CredentialDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx, fileSecret } = deps;
  const own = (req: Request, res: Response, what: string): { handle: string; agentId: string } => {
    const p = requireKind(res, ['human'], what);
    const m = req.params as unknown as Record<string, string>;
    return { handle: p.account, agentId: ownAgentId(p.account, String(m[0]), String(m[1])) };
  };

  router.put(
    PATH,
    asyncRoute(async (req, res) => {
      const { handle, agentId } = own(req, res, 'set endpoint credentials');
      const token = req.body && typeof req.body === 'object' ? (req.body as { token?: unknown }).token : undefined;
      res.json({ agent: agentId, credential: await setCredential(ctx, fileSecret, handle, agentId, token) });
    }),
  );

  router.delete(
    PATH,
    asyncRoute(async (req, res) => {
      const { agentId } = own(req, res, 'delete endpoint credentials');
      res.json({ agent: agentId, credential: await deleteCredential(ctx, fileSecret, agentId) });
    }),
  );

  router.get(
    PATH,
    asyncRoute(async (req, res) => {
      const { agentId } = own(req, res, 'read endpoint credentials');
      res.json(await viewCredential(ctx.db, fileSecret, agentId));
    }),
  );

  return router;
}
