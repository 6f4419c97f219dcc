/**
 * Signing in from an MCP client (services/api/routes/oauth.ts, mcp-consent.ts, shared/accounts/mcp-sign-in.ts,
 * client-metadata.ts; docs/mcp.md, "Signing in from an MCP client"): the discovery documents and the 401's challenge;
 * the whole flow driven by the MCP SDK v2 client's own OAuth support, in both protocol eras, its redirect step
 * completed as the console does it (the consent API with the human key), ending with `get_budget` over /mcp with the
 * issued token; and every refusal in OAuth's shape. Client ID metadata documents are served over TLS on loopback and
 * fetched through the gateway's guarded client (tests/support/mcp-clients.ts). Real Postgres and Redis.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, signUp, workMandate, type Account } from '../support/hosted.js';
import { CLIENT_GUARD, consent, requestIdOf, startClientDocuments, TestOAuthProvider, type ClientDocuments } from '../support/mcp-clients.js';
import { flippingResolver, routeStandIn, TEST_TLS } from '../support/published-servers.js';

const REDIRECT = 'http://127.0.0.1:33418/callback';

let docs: ClientDocuments;
beforeAll(async () => {
  docs = await startClientDocuments();
});
afterAll(async () => {
  await docs?.close();
});

const hosted = (extra: Parameters<typeof startTestGateway>[0] = {}) => startTestGateway({ hosted: true, outboundGuard: CLIENT_GUARD, ...extra });

/** A PKCE pair (RFC 7636). */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An authorization URL of the gateway with these parameters over sensible defaults (`undefined` drops one). */
function authorizeUrl(g: TestGateway, params: Record<string, string | undefined>): string {
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    redirect_uri: REDIRECT,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${g.url}/mcp`,
    ...params,
  };
  const q = new URLSearchParams(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return `${g.url}/oauth/authorize?${q}`;
}

/** POST /oauth/token with a form. */
async function token(
  g: TestGateway,
  form: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const body = new URLSearchParams(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined));
  const r = await fetch(`${g.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  return { status: r.status, body: await r.json(), headers: r.headers };
}

/** Through the consent API: a code for `clientId` under `mandate`, with its verifier. */
async function approvedCode(g: TestGateway, who: Account, clientId: string, mandate: string) {
  const { verifier, challenge } = pkce();
  const callback = await consent(g.url, who.human, authorizeUrl(g, { client_id: clientId, code_challenge: challenge }), mandate);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback.href}`);
  return { code, verifier, callback };
}

/** An MCP tools/call over raw HTTP with a bearer token, in the 2026-07-28 era (one request, no session). */
async function getBudget(g: TestGateway, bearer: string): Promise<Response> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  return fetch(`${g.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${bearer}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'get_budget',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_budget', arguments: {}, _meta: meta } }),
  });
}

describe('discovery', () => {
  test('a keyless /mcp is a 401 naming the protected resource metadata, which names the gateway as its authorization server', async () => {
    await useAudited(await hosted(), async (g) => {
      const r = await fetch(`${g.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      expect(r.status).toBe(401);
      const challenge = r.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer realm="holon", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
      expect(await r.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('sign in from your MCP client') } });

      const prm = await fetch(`${g.url}/.well-known/oauth-protected-resource/mcp`);
      expect(prm.status).toBe(200);
      expect(prm.headers.get('access-control-allow-origin')).toBe('*');
      expect(await prm.json()).toEqual({
        resource: `${g.url}/mcp`,
        authorization_servers: [g.url],
        bearer_methods_supported: ['header'],
        resource_name: 'Holon gateway',
      });
      const as = await fetch(`${g.url}/.well-known/oauth-authorization-server`);
      expect(await as.json()).toEqual({
        issuer: g.url,
        authorization_endpoint: `${g.url}/oauth/authorize`,
        token_endpoint: `${g.url}/oauth/token`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
      // No dynamic client registration (a deprecated MAY in 2026-07-28), no root form of the resource metadata.
      expect((await fetch(`${g.url}/register`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${g.url}/.well-known/oauth-protected-resource`)).status).toBe(404);
      // A browser's preflight for the discovery documents.
      const pre = await fetch(`${g.url}/.well-known/oauth-authorization-server`, { method: 'OPTIONS' });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-headers')).toContain('MCP-Protocol-Version');
      // A refused key on /mcp names the metadata too; elsewhere no 401 does.
      const bad = await getBudget(g, `hlk_a_${'x'.repeat(8)}_${'y'.repeat(40)}`);
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toMatch(/resource_metadata=".*\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/);
      expect((await send(g.url, 'GET', '/v0/me')).headers.get('www-authenticate')).not.toContain('resource_metadata');
    });
  });

  test('a dev gateway has no authorization server; HOLON_PUBLIC_URL is the issuer', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      expect((await fetch(`${g.url}/.well-known/oauth-authorization-server`)).status).toBe(404);
      expect((await fetch(`${g.url}/oauth/authorize`)).status).toBe(404);
    });
    await useAudited(await hosted({ config: { publicUrl: 'https://gateway.example.com' } }), async (g) => {
      expect(await (await fetch(`${g.url}/.well-known/oauth-protected-resource/mcp`)).json()).toMatchObject({
        resource: 'https://gateway.example.com/mcp',
        authorization_servers: ['https://gateway.example.com'],
      });
    });
  });
});

describe('the whole flow with the SDK client', () => {
  for (const era of ['2026-07-28', '2025'] as const) {
    test(`${era}: 401, discovery, the consent API approves under a mandate, the code for a token, get_budget with it; revoked → 401`, async () => {
      await useAudited(await hosted(), async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const clientId = docs.document(`/flow-${era}.json`, [REDIRECT]);
        const provider = new TestOAuthProvider(clientId, REDIRECT);
        const url = new URL(`${g.url}/mcp`);
        const options = era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {};
        const first = new Client({ name: 'holon-sign-in-test', version: '1.0.0' }, options);
        await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedError);
        const asked = provider.redirected!;
        expect(asked.origin + asked.pathname).toBe(`${g.url}/oauth/authorize`);
        expect(Object.fromEntries(asked.searchParams)).toMatchObject({ client_id: clientId, code_challenge_method: 'S256', resource: `${g.url}/mcp` });

        const callback = await consent(g.url, alice.human, asked, work.mandate);
        expect(callback.origin + callback.pathname).toBe(REDIRECT);
        expect(callback.searchParams.get('state')).toBe(provider.lastState);
        expect(callback.searchParams.get('iss')).toBe(g.url);
        await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(callback.searchParams);
        const issued = provider.tokens()!;
        expect(issued).toMatchObject({ token_type: 'Bearer', expires_in: 30 * 24 * 3600 });
        expect(issued.access_token).toMatch(/^hlk_a_/);
        expect(issued.refresh_token).toBeUndefined();

        const client = new Client({ name: 'holon-sign-in-test', version: '1.0.0' }, options);
        await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
        try {
          expect(client.getProtocolEra()).toBe(era === '2026-07-28' ? 'modern' : 'legacy');
          const budget = await client.callTool({ name: 'get_budget', arguments: {} });
          expect(budget.isError).toBeFalsy();
          expect(budget.structuredContent).toMatchObject({ mandate: work.mandate, total: '3.00', currency: 'EUR' });
        } finally {
          await client.close();
        }

        // The token is an agent key of alice's, listed with its client, and revoked like any.
        const me = await send(g.url, 'GET', '/v0/me', { key: alice.human });
        const key = me.body.keys.find((k: any) => issued.access_token.startsWith(k.prefix));
        expect(key).toMatchObject({
          kind: 'agent',
          mandate: work.mandate,
          ask_in_client: true,
          state: 'active',
          client: { id: clientId, name: 'Test MCP Client' },
        });
        expect(Date.parse(key.expires_at) - Date.now()).toBeGreaterThan(29 * 24 * 3600 * 1000);
        expect(me.body.keys.filter((k: any) => k.client === null).length).toBeGreaterThan(0);
        expect((await send(g.url, 'DELETE', `/v0/keys/${key.prefix}`, { key: alice.human })).status).toBe(200);
        const revoked = await getBudget(g, issued.access_token);
        expect(revoked.status).toBe(401);
        expect(revoked.headers.get('www-authenticate')).toContain('error="invalid_token"');
      });
    });
  }
});

describe('refusals', () => {
  test('the code: a wrong verifier, client or redirect spends nothing; it is used once, and a second use revokes nothing; it expires', async () => {
    await useAudited(await hosted(), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const clientId = docs.document('/codes.json', [REDIRECT]);
      const { code, verifier } = await approvedCode(g, alice, clientId, 'alice/sandbox');
      const form = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT };
      const refusals: Array<[Record<string, string | undefined>, number, string]> = [
        [{ code_verifier: pkce().verifier }, 400, 'invalid_grant'],
        [{ client_id: docs.url('/other.json') }, 400, 'invalid_grant'],
        [{ redirect_uri: 'http://127.0.0.1:33418/elsewhere' }, 400, 'invalid_grant'],
        [{ resource: 'https://elsewhere.example/mcp' }, 400, 'invalid_target'],
        [{ code_verifier: 'short' }, 400, 'invalid_request'],
        [{ grant_type: 'refresh_token' }, 400, 'unsupported_grant_type'],
        [{ grant_type: undefined }, 400, 'invalid_request'],
        [{ redirect_uri: undefined }, 400, 'invalid_request'],
      ];
      for (const [change, status, error] of refusals) {
        const r = await token(g, { ...form, ...change });
        expect([r.status, r.body.error], JSON.stringify(change)).toEqual([status, error]);
        expect(r.body.error_description).toEqual(expect.any(String));
        expect(r.headers.get('cache-control')).toBe('no-store');
      }
      // Not a form, a form given twice, a key or credentials sent along: OAuth's answers still, never the gateway's.
      const json = await fetch(`${g.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(form) });
      expect([json.status, ((await json.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
      const twice = await fetch(`${g.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `${new URLSearchParams(form)}&code=again`,
      });
      expect([twice.status, ((await twice.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
      const basic = await token(g, { ...form, code_verifier: pkce().verifier }, { authorization: 'Basic Y2xpZW50OnNlY3JldA==' });
      expect([basic.status, basic.body.error]).toEqual([400, 'invalid_grant']);
      const ok = await token(g, { ...form, resource: `${g.url}/mcp/` });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ access_token: expect.stringMatching(/^hlk_a_/), token_type: 'Bearer', expires_in: 2_592_000 });
      const again = await token(g, form);
      expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
      expect((await getBudget(g, ok.body.access_token)).status).toBe(200);

      const late = await approvedCode(g, alice, clientId, 'alice/sandbox');
      await g.db
        .knex('oauth_requests')
        .whereNotNull('code_hash')
        .whereNull('redeemed_at')
        .update({ code_expires_at: new Date(Date.now() - 1000) });
      const expired = await token(g, { ...form, code: late.code, code_verifier: late.verifier });
      expect([expired.status, expired.body.error]).toEqual([400, 'invalid_grant']);

      // Nothing secret at rest: not the request id, not the code, not the token.
      const rows = JSON.stringify(await g.db.knex('oauth_requests').select('*'));
      for (const secret of [code, late.code, ok.body.access_token]) expect(rows).not.toContain(secret);
    });
  });

  test('across API processes on one database: authorize on one, consent on the other, the token on the first', async () => {
    await useAudited(await hosted(), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, outboundGuard: CLIENT_GUARD });
      try {
        const alice = await signUp(g.url, 'alice');
        const clientId = docs.document('/two-processes.json', [REDIRECT]);
        const { verifier, challenge } = pkce();
        const id = await requestIdOf(authorizeUrl(g, { client_id: clientId, code_challenge: challenge }));
        const decided = await send(other.url, 'POST', `/v0/oauth/requests/${id}`, {
          key: alice.human,
          body: { decision: 'approve', mandate: 'alice/sandbox' },
        });
        expect(decided.status).toBe(200);
        const code = new URL(decided.body.redirect_to).searchParams.get('code')!;
        const issued = await token(g, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
        expect(issued.status).toBe(200);
        expect((await getBudget(other, issued.body.access_token)).status).toBe(200);
      } finally {
        await other.stop();
      }
    });
  });

  test('the client: its document unreachable, refused or malformed, a redirect_uri it does not list; answered here, never redirected', async () => {
    await useAudited(await hosted(), async (g) => {
      const { challenge } = pkce();
      const ask = async (clientId: string, extra: Record<string, string | undefined> = {}) => {
        const r = await fetch(authorizeUrl(g, { client_id: clientId, code_challenge: challenge, ...extra }), { redirect: 'manual' });
        return { status: r.status, location: r.headers.get('location'), body: r.status === 400 ? await r.json() : null };
      };
      docs.serve('/not-json.json', { status: 200, text: 'hello' });
      docs.serve('/broken.json', { status: 500, text: '{}' });
      docs.serve('/other-id.json', { json: { client_id: docs.url('/elsewhere.json'), client_name: 'X', redirect_uris: [REDIRECT] } });
      docs.serve('/no-redirects.json', { json: { client_id: docs.url('/no-redirects.json'), client_name: 'X' } });
      docs.serve('/no-name.json', { json: { client_id: docs.url('/no-name.json'), redirect_uris: [REDIRECT] } });
      docs.serve('/secret.json', { json: { client_id: docs.url('/secret.json'), client_name: 'X', redirect_uris: [REDIRECT], client_secret: 's' } });
      docs.serve('/huge.json', { json: { client_id: docs.url('/huge.json'), client_name: 'X', redirect_uris: [REDIRECT], pad: 'x'.repeat(6000) } });
      const cases: Array<[string, RegExp]> = [
        [docs.url('/missing.json'), /answered 404/],
        [docs.url('/broken.json'), /answered 500/],
        [docs.url('/not-json.json'), /is not JSON/],
        [docs.url('/other-id.json'), /does not name itself/],
        [docs.url('/no-redirects.json'), /has no redirect_uris/],
        [docs.url('/no-name.json'), /has no client_name/],
        [docs.url('/secret.json'), /only public clients/],
        [docs.url('/huge.json'), /larger than 5120 bytes/],
        [`http://client.published.test:${docs.port}/plain.json`, /not https/],
        [`https://client.published.test:${docs.port}/`, /no path/],
        ['https://127.0.0.1:1/nothing.json', /could not be fetched/],
      ];
      for (const [clientId, words] of cases) {
        const r = await ask(clientId);
        expect([r.status, r.body?.error], clientId).toEqual([400, 'invalid_client']);
        expect(r.body.error_description, clientId).toMatch(words);
      }
      const good = docs.document('/good.json', [REDIRECT, 'https://app.example.com/cb']);
      for (const redirect of ['http://127.0.0.1:33418/other', 'https://evil.example.com/cb', 'http://app.example.com/cb', undefined]) {
        const r = await ask(good, { redirect_uri: redirect });
        expect([r.status, r.body?.error], String(redirect)).toEqual([400, 'invalid_request']);
      }
      // A loopback redirect URI on another port is the same client's (RFC 8252 §7.3).
      expect((await ask(good, { redirect_uri: 'http://127.0.0.1:50001/callback' })).status).toBe(302);
      // Only that one request was recorded: a refused client leaves nothing.
      expect(await g.db.knex('oauth_requests').select('redirect_uri')).toEqual([{ redirect_uri: 'http://127.0.0.1:50001/callback' }]);
    });
  });

  test('a document on a private address is refused unless private endpoints are allowed', async () => {
    const privateGuard = { lookup: flippingResolver('127.0.0.1'), route: routeStandIn, ca: TEST_TLS.cert };
    await useAudited(await startTestGateway({ hosted: true, outboundGuard: privateGuard }), async (g) => {
      const clientId = docs.document('/private.json', [REDIRECT]);
      const r = await fetch(authorizeUrl(g, { client_id: clientId, code_challenge: pkce().challenge }), { redirect: 'manual' });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringContaining('loopback') });
    });
    await useAudited(await startTestGateway({ hosted: true, outboundGuard: privateGuard, config: { allowPrivateEndpoints: true } }), async (g) => {
      const clientId = docs.document('/private.json', [REDIRECT]);
      const r = await fetch(authorizeUrl(g, { client_id: clientId, code_challenge: pkce().challenge }), { redirect: 'manual' });
      expect(r.status).toBe(302);
    });
  });

  test('the request: bad parameters go back to the client with state and iss; denial too; the consent API is the owner’s human key’s', async () => {
    await useAudited(await hosted(), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const bob = await signUp(g.url, 'bob');
      const clientId = docs.document('/requests.json', [REDIRECT]);
      const { challenge } = pkce();
      const back = async (params: Record<string, string | undefined>) => {
        const r = await fetch(authorizeUrl(g, { client_id: clientId, code_challenge: challenge, ...params }), { redirect: 'manual' });
        expect(r.status).toBe(302);
        return new URL(r.headers.get('location')!, g.url);
      };
      for (const [params, error] of [
        [{ code_challenge_method: 'plain' }, 'invalid_request'],
        [{ code_challenge: undefined }, 'invalid_request'],
        [{ response_type: 'token' }, 'unsupported_response_type'],
        [{ resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
      ] as const) {
        const to = await back(params);
        expect(to.origin + to.pathname).toBe(REDIRECT);
        expect(Object.fromEntries(to.searchParams)).toMatchObject({ error, state: 'st-1', iss: g.url });
      }
      // No resource: this gateway's /mcp.
      expect((await back({ resource: undefined })).hash).toMatch(/^#\/authorize\//);

      const id = await requestIdOf(authorizeUrl(g, { client_id: clientId, code_challenge: challenge }));
      const path = `/v0/oauth/requests/${id}`;
      expect((await send(g.url, 'GET', path)).status).toBe(401);
      expect((await send(g.url, 'GET', path, { key: alice.sandboxAgent })).status).toBe(403);
      const read = await send(g.url, 'GET', path, { key: alice.human });
      expect(read.body).toMatchObject({
        client: { id: clientId, name: 'Test MCP Client', host: `client.published.test:${docs.port}` },
        redirect_uri: REDIRECT,
        redirect_host: '127.0.0.1:33418',
        loopback: true,
        resource: `${g.url}/mcp`,
      });
      // Another's mandate is as none; approving needs a mandate.
      expect((await send(g.url, 'POST', path, { key: alice.human, body: { decision: 'approve', mandate: 'bob/sandbox' } })).status).toBe(404);
      expect((await send(g.url, 'POST', path, { key: alice.human, body: { decision: 'approve' } })).status).toBe(400);
      expect((await send(g.url, 'POST', path, { key: alice.human, body: { decision: 'maybe', mandate: 'alice/sandbox' } })).status).toBe(400);
      const denied = await send(g.url, 'POST', path, { key: bob.human, body: { decision: 'deny' } });
      expect(denied.status).toBe(200);
      expect(Object.fromEntries(new URL(denied.body.redirect_to).searchParams)).toMatchObject({ error: 'access_denied', state: 'st-1', iss: g.url });
      // Decided once: the request is gone.
      expect((await send(g.url, 'POST', path, { key: alice.human, body: { decision: 'approve', mandate: 'alice/sandbox' } })).status).toBe(404);
      expect((await send(g.url, 'GET', path, { key: alice.human })).status).toBe(404);
      expect((await send(g.url, 'GET', `/v0/oauth/requests/${'A'.repeat(43)}`, { key: alice.human })).status).toBe(404);
    });
  });
});
