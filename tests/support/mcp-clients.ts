/**
 * MCP clients that sign in to a hosted gateway (services/api/routes/oauth.ts; docs/mcp.md, "Signing in from an MCP
 * client"):
 *   - `startClientDocuments()`: client ID metadata documents served over TLS on 127.0.0.1, for names under
 *     `published.test` (the test certificate's). The gateway fetches them through its guarded client given
 *     `CLIENT_GUARD` (as `startTestGateway({ outboundGuard })`): a resolver answering a public stand-in address, dialled
 *     on 127.0.0.1 only after the production check accepted it, and the test certificate trusted.
 *   - `TestOAuthProvider`: the SDK client's OAuthClientProvider (in memory), whose redirect step is recorded for the
 *     test to complete, and `consent()`: what the console does with the person's human key — read the request the
 *     authorization URL leads to, approve it under a mandate (or deny it) — answering the callback URL.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, OAuthTokens } from '@modelcontextprotocol/client';
import type { OutboundGuard } from '../../services/api/start.js';
import { flippingResolver, routeStandIn, TEST_TLS } from './published-servers.js';
import { send, type Answer } from './http.js';

/** The guarded client's test seam for client documents (see above). */
export const CLIENT_GUARD: OutboundGuard = { lookup: flippingResolver(), route: routeStandIn, ca: TEST_TLS.cert };

/** What a path answers: a JSON document, or a status and raw text. */
type Served = { json: unknown } | { status: number; text: string };

export interface ClientDocuments {
  port: number;
  /** `https://client.published.test:<port><path>` */
  url(path: string): string;
  /** Serve `answer` at `path` from now on. */
  serve(path: string, answer: Served): void;
  /** A well-formed document at `path` naming itself, with these redirect URIs (and `extra` fields). */
  document(path: string, redirectUris: string[], extra?: Record<string, unknown>): string;
  /** How often each path was fetched. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startClientDocuments(): Promise<ClientDocuments> {
  const served = new Map<string, Served>();
  const hits = new Map<string, number>();
  const server = https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = served.get(path);
    res.setHeader('connection', 'close');
    if (!answer) return void res.writeHead(404).end('not here');
    if ('json' in answer) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = (path: string) => `https://client.published.test:${port}${path}`;
  return {
    port,
    url,
    hits,
    serve: (path, answer) => served.set(path, answer),
    document(path, redirectUris, extra = {}) {
      served.set(path, {
        json: { client_id: url(path), client_name: 'Test MCP Client', redirect_uris: redirectUris, token_endpoint_auth_method: 'none', ...extra },
      });
      return url(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An OAuthClientProvider kept in memory; `redirected` is the authorization URL the SDK sent the "browser" to. */
export class TestOAuthProvider implements OAuthClientProvider {
  private info?: OAuthClientInformationMixed;
  private stored?: OAuthTokens;
  private verifier?: string;
  private discovery?: OAuthDiscoveryState;
  redirected?: URL;
  lastState?: string;

  constructor(
    readonly clientMetadataUrl: string,
    readonly redirectUrl: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test MCP Client', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  state() {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  redirectToAuthorization(url: URL) {
    this.redirected = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier');
    return this.verifier;
  }
}

/** The request id the authorization URL leads to: GET it, and read the console address it redirects to. */
export async function requestIdOf(authorizationUrl: URL | string): Promise<string> {
  const r = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = r.headers.get('location');
  if (r.status !== 302 || !location) throw new Error(`the authorization URL answered ${r.status}: ${await r.text()}`);
  const m = /#\/authorize\/([A-Za-z0-9_-]{43})$/.exec(location);
  if (!m) throw new Error(`the authorization URL redirected to ${location}, not the console`);
  return m[1]!;
}

/** The console's part: read the request, then approve it under `mandate` (or deny it); the callback URL, parsed. */
export async function consent(base: string, humanKey: string, authorizationUrl: URL | string, mandate: string | null): Promise<URL> {
  const id = await requestIdOf(authorizationUrl);
  const read = await send<Answer<'readSignInRequest', 200>>(base, 'GET', `/v0/oauth/requests/${id}`, { key: humanKey });
  if (read.status !== 200) throw new Error(`reading the request answered ${read.status}: ${JSON.stringify(read.body)}`);
  const body = mandate === null ? { decision: 'deny' } : { decision: 'approve', mandate };
  const decided = await send<Answer<'decideSignInRequest', 200>>(base, 'POST', `/v0/oauth/requests/${id}`, { key: humanKey, body });
  if (decided.status !== 200) throw new Error(`the decision answered ${decided.status}: ${JSON.stringify(decided.body)}`);
  return new URL(decided.body.redirect_to);
}
