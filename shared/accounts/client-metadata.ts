/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-00; the MCP authorization spec,
 * "Client Registration"): an MCP client's `client_id` is the https URL of a JSON document that names the client
 * and lists its redirect URIs. The gateway fetches it when an authorization starts (shared/accounts/mcp-sign-in.ts),
 * through the guarded client (shared/platform/guarded-net.ts: public addresses only unless
 * HOLON_ALLOW_PRIVATE_ENDPOINTS=1, a redirect refused, never followed), within CLIENT_DOCUMENT_TIMEOUT_MS and
 * CLIENT_DOCUMENT_MAX_BYTES, and checks it here. It is not cached: it is read once per authorization request, whose
 * row keeps the name and the redirect URI that were accepted.
 *
 * What is refused (`ClientRefused`, answered `invalid_client` and never redirected to the client):
 *   - a client_id that is not an https URL with a path, or has credentials, a fragment, or dot segments;
 *   - a document that cannot be fetched (the address refused, not resolved, TLS, a redirect, a status other than 200,
 *     too large, too slow), is not a JSON object, or whose `client_id` is not exactly its URL;
 *   - no `client_name` (1–200 characters) or no `redirect_uris` (1–20 strings);
 *   - a confidential client: a `client_secret`, or a `token_endpoint_auth_method` other than `none` (the gateway's
 *     token endpoint serves public clients only, with PKCE);
 *   - `grant_types` without `authorization_code`, `response_types` without `code`.
 * A redirect URI is accepted when it is one the document lists, exactly, or, for a loopback one (`http://127.0.0.1`,
 * `http://[::1]`, `http://localhost`), one that differs from a listed one in its port only (RFC 8252 §7.3, OAuth 2.1
 * §8.4.2: native clients listen on a port of the moment). It must be https, or http on a loopback host, with no
 * fragment (the MCP spec: "All redirect URIs MUST be either localhost or use HTTPS").
 */
import { describeNetworkFailure, classifyNetworkError, describeEndpoint } from '../platform/net-errors.js';
import { guardRefusal, type FetchFunction } from '../platform/guarded-net.js';

/** The draft suggests 5 kilobytes. */
export const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;
/** The whole fetch: connect, TLS, the answer and its body. */
export const CLIENT_DOCUMENT_TIMEOUT_MS = 5_000;

export interface ClientDocument {
  /** The client_id: the document's URL, exactly. */
  clientId: string;
  /** `client_name`: the client's own words, shown on the consent page as such. */
  name: string;
  redirectUris: string[];
}

/** A client the gateway will not serve: `message` says why, in words the person and the client can read. */
export class ClientRefused extends Error {
  override readonly name = 'ClientRefused';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** http on 127.0.0.1, [::1] or localhost: the redirect URI of a client on the person's own machine. */
export function isLoopbackRedirect(uri: string): boolean {
  const u = parse(uri);
  return u !== undefined && u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname.toLowerCase());
}

function parse(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** The client_id as a URL the gateway may fetch: https, a path, no credentials, fragment or dot segments. */
export function clientIdUrl(clientId: string): URL {
  const u = parse(clientId);
  const refuse = (why: string): never => {
    throw new ClientRefused(`client_id must be the https URL of the client's metadata document: ${why}`);
  };
  if (!u || clientId.length > 2000) return refuse('it is not an absolute URL');
  if (u.protocol !== 'https:') return refuse('it is not https');
  if (u.username || u.password) return refuse('it contains credentials');
  if (u.hash || clientId.includes('#')) return refuse('it has a fragment');
  if (u.pathname === '/' || u.pathname === '') return refuse('it has no path');
  if (/(^|\/)\.\.?(\/|$)/.test(clientId.replace(/^https:\/\/[^/]+/i, ''))) return refuse('it has dot segments');
  return u;
}

/** The answer's body, at most `max` bytes; more is a refusal. */
async function boundedText(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new ClientRefused(`the client's metadata document is larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Fetch and check the document at `clientId` (shape checked first: `clientIdUrl`). */
export async function fetchClientDocument(fetch: FetchFunction, clientId: string, timeoutMs = CLIENT_DOCUMENT_TIMEOUT_MS): Promise<ClientDocument> {
  const url = clientIdUrl(clientId);
  const where = describeEndpoint(url);
  let text: string;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ClientRefused(`the client's metadata document at ${where} answered ${response.status}, not 200`);
    }
    text = await boundedText(response, CLIENT_DOCUMENT_MAX_BYTES);
  } catch (e) {
    if (e instanceof ClientRefused) throw e;
    const refusal = guardRefusal(e);
    const why = refusal ? refusal.message : describeNetworkFailure(classifyNetworkError(e));
    throw new ClientRefused(`the client's metadata document at ${where} could not be fetched: ${why}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ClientRefused(`the client's metadata document at ${where} is not JSON`);
  }
  return readClientDocument(clientId, body);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const listed = (v: unknown, value: string) => v === undefined || (Array.isArray(v) && v.includes(value));

/** Check a fetched document against its URL (pure). */
export function readClientDocument(clientId: string, body: unknown): ClientDocument {
  const refuse = (why: string): never => {
    throw new ClientRefused(`the client's metadata document at ${describeEndpoint(clientId)} ${why}`);
  };
  if (!isObject(body)) return refuse('is not a JSON object');
  if (body.client_id !== clientId) return refuse('does not name itself: its client_id must be its own URL, exactly');
  const name = body.client_name;
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200) return refuse('has no client_name (1 to 200 characters)');
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20 || !uris.every((u) => typeof u === 'string' && u.length <= 2000)) {
    return refuse('has no redirect_uris (1 to 20 URLs)');
  }
  if ('client_secret' in body) return refuse('has a client_secret: only public clients sign in here');
  const method = body.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') return refuse('asks for a token_endpoint_auth_method other than none: only public clients sign in here');
  if (!listed(body.grant_types, 'authorization_code')) return refuse('does not list the authorization_code grant type');
  if (!listed(body.response_types, 'code')) return refuse('does not list the code response type');
  return { clientId, name: name.trim(), redirectUris: uris as string[] };
}

/** May the client be sent to `redirectUri`? A listed one exactly, or a listed loopback one on another port. */
export function redirectAllowed(doc: ClientDocument, redirectUri: string): boolean {
  const u = parse(redirectUri);
  if (!u || u.hash || redirectUri.includes('#')) return false;
  if (u.protocol !== 'https:' && !isLoopbackRedirect(redirectUri)) return false;
  if (doc.redirectUris.includes(redirectUri)) return true;
  if (!isLoopbackRedirect(redirectUri)) return false;
  const portless = (x: URL) => `${x.protocol}//${x.hostname.toLowerCase()}${x.pathname}${x.search}`;
  return doc.redirectUris.some((listedUri) => {
    const l = parse(listedUri);
    return l !== undefined && isLoopbackRedirect(listedUri) && portless(l) === portless(u);
  });
}
