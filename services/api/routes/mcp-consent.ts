/**
 * The console's side of an MCP client signing in (docs/mcp.md, "Signing in from an MCP client"), hosted only, with
 * the human key:
 *   GET  /v0/oauth/requests/{id}                       which client asks (its name, the host of its metadata document,
 *                                                      where the answer goes), while the request waits (10 minutes)
 *   POST /v0/oauth/requests/{id} {decision, mandate?}  approve under one of your root mandates, or deny; once. The
 *                                                      answer is where the console sends the browser: the client's
 *                                                      redirect URI with `code` (or `error=access_denied`), `state`, `iss`
 * The id is the one `GET /oauth/authorize` put in the console's address (`#/authorize/<id>`); an unknown, expired
 * or answered request is one 404. Another account's mandate is a 404 too. The code is traded by the client at
 * POST /oauth/token (routes/oauth.ts); the rules: shared/accounts/mcp-sign-in.ts.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import { loadMandate } from '../../../shared/mandates/store.js';
import { isLoopbackRedirect } from '../../../shared/accounts/client-metadata.js';
import { decideRequest, pendingRequest, type Decision } from '../../../shared/accounts/mcp-sign-in.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { issuerOf, withParams } from '../oauth-urls.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { failure, text } from '../openapi/schemas.js';
import { SIGN_IN_DECIDED, SIGN_IN_REQUEST } from '../openapi/oauth-schemas.js';

const DECISION_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: {
    decision: { enum: ['approve', 'deny'], description: 'Let the client act under the mandate, or refuse', 'x-messages': { enum: 'must be approve or deny' } },
    mandate: text(300, 'To approve: one of your root mandates, which the client’s new agent key acts under'),
  },
} as const;

const ID = {
  id: { description: 'The sign-in request, from the console’s address (#/authorize/<id>)', example: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
};
const GONE = failure('No such request waiting: unknown, expired (10 minutes) or answered already; or, to approve, no such mandate of yours', 'not_found');

export const consentOperations = defineOperations({
  read: {
    id: 'readSignInRequest',
    method: 'get',
    path: '/v0/oauth/requests/{id}',
    tag: 'oauth',
    auth: ['human'],
    hostedOnly: true,
    summary: 'An MCP client’s request to sign in: which client asks, and where the answer goes',
    params: ID,
    responses: { 200: { description: 'The request, waiting for a decision', schema: SIGN_IN_REQUEST }, 404: GONE },
  },
  decide: {
    id: 'decideSignInRequest',
    method: 'post',
    path: '/v0/oauth/requests/{id}',
    tag: 'oauth',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Approve an MCP client under one of your root mandates, or deny it (once): where to send the browser',
    description:
      'Approval records a one-time code (5 minutes, stored as its hash) bound to the client, its redirect URI, its PKCE challenge, the resource, your account and the mandate; the client trades it at POST /oauth/token for a new agent key under that mandate.',
    params: ID,
    body: { schema: DECISION_BODY, example: { decision: 'approve', mandate: 'alice/sandbox' } },
    responses: {
      200: { description: 'Decided: the browser goes back to the client', schema: SIGN_IN_DECIDED },
      400: failure('A bad body (`approve` without a mandate), or a revoked mandate', 'invalid_request'),
      404: GONE,
    },
  },
});

const readDecision = bodyReader<{ decision: 'approve' | 'deny'; mandate?: string }>(DECISION_BODY);

export interface ConsentDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_PUBLIC_URL: the issuer named by `iss` (else the request's own origin). */
  publicUrl?: string;
}

/** One of the account's root mandates, live; else the 404 (another's is answered exactly as none) or a 400 (revoked). */
async function ownRootMandate(ctx: ServiceContext, account: string, id: string): Promise<string> {
  const stored = await loadMandate(ctx.db, id);
  if (stored?.mandate.depth !== 0 || stored.mandate.issuer !== account) throw new HolonError('not_found', `you have no mandate ${id.slice(0, 300)}`);
  if (stored.mandate.revoked)
    throw new HolonError('invalid_request', `the mandate ${id} is revoked: choose another`, [{ path: '$.mandate', message: 'is revoked' }]);
  return id;
}

export function consentRoutes(deps: ConsentDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;

  mount(router, consentOperations.read, async (req, res) => {
    requireKind(res, ['human'], 'answer a sign-in request');
    const pending = await pendingRequest(ctx.db, String(req.params.id), ctx.now());
    res.set('Cache-Control', 'no-store').json({
      client: { id: pending.client.id, name: pending.client.name, host: new URL(pending.client.id).host },
      redirect_uri: pending.redirectUri,
      redirect_host: new URL(pending.redirectUri).host,
      loopback: isLoopbackRedirect(pending.redirectUri),
      resource: pending.resource,
      expires_at: pending.expiresAt.toISOString(),
    });
  });

  mount(router, consentOperations.decide, async (req, res) => {
    const p = requireKind(res, ['human'], 'answer a sign-in request');
    const r = readDecision(req.body);
    if (r.body.decision === 'approve' && r.body.mandate === undefined) r.problems.push({ path: '$.mandate', message: 'is required to approve' });
    r.done();
    const decision: Decision =
      r.body.decision === 'approve'
        ? { approve: true, account: p.account, mandateId: await ownRootMandate(ctx, p.account, r.body.mandate!) }
        : { approve: false };
    const decided = await decideRequest(ctx.db, String(req.params.id), decision, ctx.now());
    const answer = decided.code ? { code: decided.code } : { error: 'access_denied', error_description: 'the person did not allow the client to sign in' };
    if (decided.code) ctx.log.info({ account: p.account, mandate: (decision as { mandateId: string }).mandateId }, 'MCP client approved');
    res
      .set('Cache-Control', 'no-store')
      .json({ redirect_to: withParams(decided.redirectUri, { ...answer, state: decided.state, iss: issuerOf(req, deps.publicUrl) }) });
  });

  return router;
}
