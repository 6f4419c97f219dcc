/**
 * Drafting a listing (gateway.md §7, "Webhook agents" → "Drafting a listing"): call a webhook endpoint once with an
 * example input and describe what it answered as a draft manifest (`{manifest, yaml}`) that `holon validate`
 * accepts. Nothing is stored or published: the author reviews the draft, then publishes it (POST /v0/agents).
 *
 * The call goes through the guarded client (shared/platform/guarded-net.ts) as a published webhook's does: the
 * address actually connected is checked, redirects are refused, `http:` is refused, all three unless
 * allowPrivateEndpoints (which still refuses redirects). It carries the endpoint credential set for
 * `<handle>/<name>`, if any. The answer must be a 2xx JSON body of at most 10 MB, within 10 s.
 */
import { request, type Dispatcher } from 'undici';
import { stringify } from 'yaml';
import type { Db } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { validateManifest } from '../core/manifest/validate.js';
import { formatAmount } from '../core/money.js';
import { inferSchemaWithin } from '../core/schema-inference.js';
import { createGuardedDispatcher, guardRefusal, RedirectRefusedError, type GuardedDispatcherOptions } from '../platform/guarded-net.js';
import { credentialLookup, CredentialUnreadableError } from './credentials.js';
import type { JsonObject } from '../core/json.js';

export interface DraftSettings {
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: private addresses and `http:` endpoints are allowed. */
  allowPrivate: boolean;
  /** HOLON_FILE_SECRET: to read the endpoint credential, if one is set. */
  fileSecret?: string | undefined;
  /** The most time the endpoint has to answer completely, in milliseconds. Default 10 000. */
  timeoutMs?: number;
  /** The largest answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** Tests: the guard's resolver, routing, CAs. */
  guard?: Omit<GuardedDispatcherOptions, 'allowPrivate'>;
}

export interface Draft {
  manifest: JsonObject;
  yaml: string;
}

const DRAFT_TIMEOUT_MS = 10_000;
const DRAFT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** The manifest's limit on each interface schema (manifest.md §3). */
const MAX_SCHEMA_BYTES = 64 * 1024;
const DRAFT_VERSION = '0.1.0';
/** The currency of a drafted `per_run` price. */
const DRAFT_CURRENCY = 'EUR';

/** A draft request, as the route read it (services/api/routes/drafts.ts). */
export interface DraftRequest {
  /** The agent's name (handle rules); the namespace is the caller's handle. */
  name: string;
  endpoint: URL;
  /** The example input sent to the endpoint. */
  input: unknown;
  summary?: string | undefined;
  /** The price of one run (micro-units), in EUR; none: free. */
  price?: bigint | undefined;
}

function refused(message: string): HolonError {
  return new HolonError('endpoint_refused', `the endpoint was refused: ${message}`);
}

/** The token set for the agent, if any; an unusable one is a 422 saying why (never the token). */
async function credentialFor(db: Db, secret: string | undefined, agentId: string): Promise<string | undefined> {
  try {
    return await credentialLookup(db, secret, { ttlMs: 0 })(agentId);
  } catch (err) {
    if (err instanceof CredentialUnreadableError) throw new HolonError('credential_unusable', err.message);
    throw err;
  }
}

/** The error codes in `err` and its causes. */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

function unreachable(err: unknown, timedOut: boolean, timeoutMs: number): HolonError {
  const guard = guardRefusal(err);
  if (guard) return refused(guard.message);
  if (timedOut) return new HolonError('endpoint_unreachable', `the endpoint did not answer within ${timeoutMs / 1000} s`);
  const code = codesOf(err)[0] ?? (err instanceof Error ? err.name : 'error');
  return new HolonError('endpoint_unreachable', `the endpoint could not be reached (${code})`);
}

function tooLarge(limit: number): HolonError {
  return new HolonError('endpoint_too_large', `the endpoint's answer is larger than ${limit / (1024 * 1024)} MB`);
}

/** A draft's request to its endpoint: where, with which headers and input, how long it may take, how large its answer may be. */
interface EndpointPost {
  url: URL;
  headers: Record<string, string>;
  input: unknown;
  timeoutMs: number;
  /** The largest answer read, in bytes. */
  limit: number;
}

/** POST the input to the endpoint through `dispatcher`: the parsed JSON answer, or the 422 saying why not. */
async function callEndpoint(dispatcher: Dispatcher, post: EndpointPost): Promise<unknown> {
  const { url, headers, input, timeoutMs, limit } = post;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(input),
      signal,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw unreachable(err, signal.aborted, timeoutMs);
  }
  const { statusCode, body } = response;
  body.on('error', () => undefined);
  if (statusCode >= 300 && statusCode < 400) {
    body.destroy();
    throw refused(new RedirectRefusedError(url.hostname, statusCode).message);
  }
  if (statusCode < 200 || statusCode >= 300) {
    body.destroy();
    throw new HolonError('endpoint_failed', `the endpoint answered ${statusCode}; a draft needs a successful (2xx) answer`);
  }
  const length = Number(response.headers['content-length']);
  if (Number.isFinite(length) && length > limit) {
    body.destroy();
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) {
        body.destroy();
        throw tooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof HolonError) throw err;
    body.destroy();
    throw unreachable(err, signal.aborted, timeoutMs);
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, total));
    return JSON.parse(text);
  } catch {
    const type = response.headers['content-type'];
    const said = typeof type === 'string' && type !== '' ? ` (content-type ${type.split(';')[0]})` : '';
    throw new HolonError('endpoint_not_json', `the endpoint's answer is not JSON${said}`);
  }
}

/** The draft manifest for what the endpoint answered. */
function draftManifest(handle: string, req: DraftRequest, answer: unknown): JsonObject {
  const id = `${handle}/${req.name}`;
  return {
    id,
    version: DRAFT_VERSION,
    summary: req.summary ?? `${req.name}: a webhook agent`,
    capabilities: [req.name.replace(/-+/g, '-')],
    license: 'proprietary',
    interface: {
      input: inferSchemaWithin([req.input], MAX_SCHEMA_BYTES),
      output: inferSchemaWithin([answer], MAX_SCHEMA_BYTES),
      examples: [{ input: req.input, output: answer }],
    },
    pricing: req.price !== undefined ? { model: 'per_run', currency: DRAFT_CURRENCY, amount: formatAmount(req.price) } : { model: 'free' },
    runtime: { kind: 'webhook', endpoint: req.endpoint.toString() },
  };
}

/** Call the endpoint once and return the draft; nothing is stored. */
export async function draftListing(db: Db, settings: DraftSettings, handle: string, req: DraftRequest): Promise<Draft> {
  const id = `${handle}/${req.name}`;
  if (req.endpoint.protocol === 'http:' && !settings.allowPrivate) {
    throw refused('a listed endpoint must use https:// (http:// is only allowed with HOLON_ALLOW_PRIVATE_ENDPOINTS=1)');
  }
  const token = await credentialFor(db, settings.fileSecret, id);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-holon-agent': `${id}@${DRAFT_VERSION}`,
    'x-holon-call': 'draft',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const timeoutMs = settings.timeoutMs ?? DRAFT_TIMEOUT_MS;
  const dispatcher = createGuardedDispatcher({ connectTimeoutMs: timeoutMs, ...settings.guard, allowPrivate: settings.allowPrivate });
  let answer: unknown;
  try {
    answer = await callEndpoint(dispatcher, {
      url: req.endpoint,
      headers,
      input: req.input,
      timeoutMs,
      limit: settings.maxResponseBytes ?? DRAFT_MAX_RESPONSE_BYTES,
    });
  } finally {
    void dispatcher.destroy().catch(() => undefined);
  }

  const manifest = draftManifest(handle, req, answer);
  const checked = validateManifest(manifest);
  if (!checked.ok) {
    throw new HolonError('invalid_draft', 'the answer cannot be described as a valid manifest', checked.problems);
  }
  return { manifest, yaml: stringify(manifest, { aliasDuplicateObjects: false }) };
}
