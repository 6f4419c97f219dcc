/**
 * The hosted gateway's own OAuth authorization server, for MCP clients that sign in instead of sending an agent key
 * (the MCP authorization spec, revision 2026-07-28; docs/mcp.md, "Signing in from an MCP client"), hosted only; no
 * key needed (the principal `none`):
 *   GET  /.well-known/oauth-protected-resource/mcp   RFC 9728: /mcp is protected by this gateway's authorization server
 *   GET  /.well-known/oauth-authorization-server     RFC 8414: the endpoints; code + PKCE S256 only, public clients, client
 *                                                    ID metadata documents, `iss` in the authorization response (RFC 9207)
 *   GET  /oauth/authorize                            checks the client (its metadata document, fetched through the guarded
 *                                                    client) and the request, records it, sends the browser to the console
 *                                                    (#/authorize/<id>), where the person approves with their human key
 *                                                    (routes/mcp-consent.ts)
 *   POST /oauth/token                                the code with its PKCE verifier, once, for an agent key (the access token)
 * No dynamic client registration (RFC 7591): the 2026-07-28 spec makes it a deprecated MAY, kept for servers without
 * client ID metadata documents. Refusals are OAuth's error JSON (`{error, error_description}`), 4xx; an authorization
 * request whose client and redirect URI are good is refused by a redirect to the client (`error`, `state`, `iss`).
 * The metadata documents and the token endpoint answer any web page (`Access-Control-Allow-Origin: *`, no
 * credentials): browser-based clients read them. The rules: shared/accounts/mcp-sign-in.ts, client-metadata.ts.
 */
import express, { Router, type Request, type Response } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { ClientRefused, fetchClientDocument, redirectAllowed, type ClientDocument } from '../../../shared/accounts/client-metadata.js';
import { canonicalResource, GrantRefused, OAUTH_SECRET_SHAPE, recordRequest, redeemCode } from '../../../shared/accounts/mcp-sign-in.js';
import type { FetchFunction } from '../../../shared/platform/guarded-net.js';
import { issuerOf, mcpResource, RESOURCE_METADATA_PATH, withParams } from '../oauth-urls.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { AUTHORIZATION_SERVER_METADATA, OAUTH_ERROR, PROTECTED_RESOURCE_METADATA, TOKEN_ANSWER, TOKEN_BODY } from '../openapi/oauth-schemas.js';

const AUTHORIZE_PATH = '/oauth/authorize';
const TOKEN_PATH = '/oauth/token';
const REFUSED = { description: 'Refused, in OAuth’s error shape (RFC 6749 §5.2)', schema: OAUTH_ERROR };
const PUBLIC = { 'Access-Control-Allow-Origin': '`*`: any web page may read it (no credentials)' };

export const oauthOperations = defineOperations({
  protectedResource: {
    id: 'readProtectedResourceMetadata',
    method: 'get',
    path: RESOURCE_METADATA_PATH,
    tag: 'oauth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'What protects /mcp (RFC 9728): the resource and this gateway’s authorization server',
    responses: { 200: { description: 'The protected resource metadata', schema: PROTECTED_RESOURCE_METADATA, headers: PUBLIC } },
  },
  authorizationServer: {
    id: 'readAuthorizationServerMetadata',
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    tag: 'oauth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'The authorization server’s metadata (RFC 8414): its endpoints and what it supports',
    responses: { 200: { description: 'The authorization server metadata', schema: AUTHORIZATION_SERVER_METADATA, headers: PUBLIC } },
  },
  authorize: {
    id: 'authorizeMcpClient',
    method: 'get',
    path: AUTHORIZE_PATH,
    tag: 'oauth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'An MCP client asks to sign in: a redirect to the console, where the person approves it under one of their mandates',
    description:
      'The client is its `client_id`: the https URL of its client ID metadata document, fetched now through the guarded client. A bad `client_id` or `redirect_uri` is answered here (400, never redirected); any other refusal is a redirect to the client with `error`, `state` and `iss`.',
    query: {
      response_type: { description: '`code`', required: true, schema: { const: 'code' } },
      client_id: { description: 'The https URL of the client’s metadata document', required: true, schema: { type: 'string', format: 'uri' } },
      redirect_uri: { description: 'One of the document’s `redirect_uris` (a loopback one on any port)', schema: { type: 'string', format: 'uri' } },
      code_challenge: { description: 'PKCE: BASE64URL(SHA-256(code_verifier)), 43 characters', required: true, schema: { type: 'string' } },
      code_challenge_method: { description: '`S256` (the only one)', required: true, schema: { const: 'S256' } },
      state: { description: 'The client’s own value, sent back with the answer (at most 1000 characters)', schema: { type: 'string' } },
      resource: { description: 'RFC 8707: this gateway’s /mcp (the default)', schema: { type: 'string', format: 'uri' } },
      scope: { description: 'Ignored: what the token may do is the mandate the person chooses', schema: { type: 'string' } },
    },
    responses: {
      302: { description: 'To the console’s consent page, or back to the client with `error`', headers: { Location: 'Where the browser goes' } },
      400: REFUSED,
    },
  },
  token: {
    id: 'issueMcpToken',
    method: 'post',
    path: TOKEN_PATH,
    tag: 'oauth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'Trade an authorization code and its PKCE verifier for an access token, an agent key (once)',
    description:
      'The token is a new agent key (`hlk_a_…`, `ask_in_client`) under the mandate the person chose, expiring after 30 days, listed with the client’s name in GET /v0/me and revoked like any key. No refresh token. A refusal spends nothing; a code is spent by the one exchange that succeeds.',
    body: { schema: TOKEN_BODY, contentType: 'application/x-www-form-urlencoded' },
    responses: {
      200: { description: 'The access token, shown once', schema: TOKEN_ANSWER, headers: { 'Cache-Control': '`no-store`', ...PUBLIC } },
      400: REFUSED,
    },
  },
});

export interface OAuthDeps {
  ctx: ServiceContext;
  hosted: boolean;
  /** HOLON_PUBLIC_URL: the issuer, and where the console is (else the request's own origin). */
  publicUrl?: string;
  /** The guarded client's fetch (HOLON_ALLOW_PRIVATE_ENDPOINTS decides loopback), for client ID metadata documents. */
  fetch: FetchFunction;
}

/** The token request's body is a form, read by its own route: the JSON middlewares leave it alone (app.ts). */
export const isTokenRequest = (req: Request): boolean => req.method === 'POST' && req.path.toLowerCase() === TOKEN_PATH;

/** A refusal in OAuth's error shape; never cached. */
function refuse(res: Response, error: string, description: string, status = 400): void {
  res.status(status).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

class OAuthRefusal extends Error {
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

/** A parameter's one value (a query's or a form's): absent is undefined, given twice is a refusal (RFC 6749 §3.1). */
function one(source: unknown, name: string, max: number): string | undefined {
  const v = (source as Record<string, unknown> | undefined)?.[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw new OAuthRefusal('invalid_request', `${name} must be given once`);
  if (v.length > max) throw new OAuthRefusal('invalid_request', `${name} must be at most ${max} characters`);
  return v;
}

function required(source: unknown, name: string, max: number): string {
  const v = one(source, name, max);
  if (v === undefined) throw new OAuthRefusal('invalid_request', `${name} is required`);
  return v;
}

/** The metadata documents (hosted): the resource /mcp, and the authorization server. */
function mountMetadata(router: Router, publicUrl: string | undefined): void {
  const open = (res: Response) => res.set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' });
  mount(router, oauthOperations.protectedResource, (req, res) => {
    const issuer = issuerOf(req, publicUrl);
    open(res).json({
      resource: mcpResource(issuer),
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'Holon gateway',
    });
  });
  mount(router, oauthOperations.authorizationServer, (req, res) => {
    const issuer = issuerOf(req, publicUrl);
    open(res).json({
      issuer,
      authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
      token_endpoint: `${issuer}${TOKEN_PATH}`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });
  // Browsers ask first when a client sends headers of its own (MCP-Protocol-Version).
  for (const path of [RESOURCE_METADATA_PATH, oauthOperations.authorizationServer.path, TOKEN_PATH]) {
    router.options(path, (_req, res) => {
      res
        .set({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': 'GET, POST',
          'Access-Control-Allow-Headers': 'Content-Type, MCP-Protocol-Version',
          'Access-Control-Max-Age': '600',
        })
        .status(204)
        .end();
    });
  }
}

/** The client and where to answer it: what is refused here is never redirected (RFC 6749 §4.1.2.1). */
async function clientOf(deps: OAuthDeps, query: unknown): Promise<{ client: ClientDocument; redirectUri: string; state: string | undefined }> {
  const clientId = required(query, 'client_id', 2000);
  let client: ClientDocument;
  try {
    client = await fetchClientDocument(deps.fetch, clientId);
  } catch (e) {
    if (e instanceof ClientRefused) throw new OAuthRefusal('invalid_client', e.message);
    throw e;
  }
  const given = one(query, 'redirect_uri', 2000);
  const redirectUri = given ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (redirectUri === undefined) throw new OAuthRefusal('invalid_request', 'redirect_uri is required: the client lists several');
  if (!redirectAllowed(client, redirectUri)) {
    throw new OAuthRefusal(
      'invalid_request',
      'redirect_uri is not one of the redirect_uris of the client’s metadata document (https, or http on a loopback host)',
    );
  }
  return { client, redirectUri, state: one(query, 'state', 1000) };
}

/** The rest of the request; a refusal here goes back to the client. The canonical resource and the challenge. */
function requestOf(query: unknown, issuer: string): { codeChallenge: string; resource: string } {
  if (one(query, 'response_type', 100) !== 'code') throw new OAuthRefusal('unsupported_response_type', 'response_type must be code');
  if (one(query, 'code_challenge_method', 100) !== 'S256') throw new OAuthRefusal('invalid_request', 'PKCE is required, with code_challenge_method S256');
  const codeChallenge = one(query, 'code_challenge', 200);
  if (codeChallenge === undefined || !OAUTH_SECRET_SHAPE.test(codeChallenge)) {
    throw new OAuthRefusal('invalid_request', 'code_challenge must be BASE64URL(SHA-256(code_verifier)): 43 characters');
  }
  const ours = mcpResource(issuer);
  const asked = one(query, 'resource', 2000);
  if (asked !== undefined && canonicalResource(asked) !== ours)
    throw new OAuthRefusal('invalid_target', `this authorization server issues tokens for ${ours} only`);
  return { codeChallenge, resource: ours };
}

function mountAuthorize(router: Router, deps: OAuthDeps): void {
  mount(router, oauthOperations.authorize, async (req, res) => {
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    const issuer = issuerOf(req, deps.publicUrl);
    let to: Awaited<ReturnType<typeof clientOf>>;
    try {
      to = await clientOf(deps, req.query);
    } catch (e) {
      if (!(e instanceof OAuthRefusal)) throw e;
      return refuse(res, e.error, e.message);
    }
    let asked: ReturnType<typeof requestOf>;
    try {
      asked = requestOf(req.query, issuer);
    } catch (e) {
      if (!(e instanceof OAuthRefusal)) throw e;
      return res.redirect(302, withParams(to.redirectUri, { error: e.error, error_description: e.message, state: to.state, iss: issuer }));
    }
    const id = await recordRequest(deps.ctx.db, { client: to.client, redirectUri: to.redirectUri, state: to.state, ...asked }, deps.ctx.now());
    res.redirect(302, `${deps.publicUrl?.replace(/\/+$/, '') ?? ''}/console#/authorize/${id}`);
  });
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/;

function mountToken(router: Router, deps: OAuthDeps): void {
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  mount(router, oauthOperations.token, form, async (req, res) => {
    res.set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    try {
      const body: unknown = req.body;
      const grant = required(body, 'grant_type', 100);
      if (grant !== 'authorization_code') throw new OAuthRefusal('unsupported_grant_type', 'grant_type must be authorization_code');
      const verifier = required(body, 'code_verifier', 200);
      if (!VERIFIER_SHAPE.test(verifier)) throw new OAuthRefusal('invalid_request', 'code_verifier must be 43 to 128 unreserved characters (RFC 7636)');
      const resource = one(body, 'resource', 2000);
      const canonical = resource === undefined ? undefined : canonicalResource(resource);
      if (resource !== undefined && canonical !== mcpResource(issuerOf(req, deps.publicUrl))) {
        throw new OAuthRefusal('invalid_target', `this authorization server issues tokens for ${mcpResource(issuerOf(req, deps.publicUrl))} only`);
      }
      const proof = {
        code: required(body, 'code', 200),
        verifier,
        clientId: required(body, 'client_id', 2000),
        redirectUri: required(body, 'redirect_uri', 2000),
        ...(canonical ? { resource: canonical } : {}),
      };
      const { key, expiresInS } = await redeemCode(deps.ctx.db, proof, deps.ctx.now());
      deps.ctx.log.info({ mandate: key.mandate, key: key.prefix, client_id: proof.clientId }, 'MCP client signed in');
      res.json({ access_token: key.key, token_type: 'Bearer', expires_in: expiresInS });
    } catch (e) {
      if (e instanceof OAuthRefusal || e instanceof GrantRefused) return refuse(res, e.error, e.message);
      throw e;
    }
  });
}

export function oauthRoutes(deps: OAuthDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  mountMetadata(router, deps.publicUrl);
  mountAuthorize(router, deps);
  mountToken(router, deps);
  return router;
}
