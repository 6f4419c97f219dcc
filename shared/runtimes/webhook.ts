/**
 * Webhook agents (gateway.md §6 "Webhook agents"): `POST runtime.endpoint` with the input as JSON.
 *
 *   request   body = the input as JSON; headers content-type, x-holon-agent: <id>@<version>, x-holon-call: <call id>,
 *             x-holon-delegation: <token> when the agent declares calls (a token for POST /v0/calls during the run),
 *             x-holon-files: <JSON> when the input names files: {<handle>: {url, content_type, size, sha256, expires}}
 *             (the same map as MCP's _meta["holon/files"]; ASCII, at most 20 handles: docs/files.md),
 *             plus the `headers` option's (the hosted gateway adds `Authorization: Bearer <token>` there)
 *   answer    2xx + JSON                                  → output
 *             2xx + {"input_required": {"message", "schema"?}, "continuation": "<token>"} → a question (below)
 *             2xx + Content-Type: application/x-ndjson     → a streamed answer (below)
 *             {"error": {"code": "<string>", ...}}, any status → the agent's error code (billing decides)
 *             3xx (redirects are never followed), other non-2xx, not JSON, larger than the limit → agent_error
 *             connection refused / DNS failure / TLS / connect timeout / unreachable → runtime_unavailable, the
 *             message naming the endpoint (origin and path) and the cause (remote.ts networkFailure)
 *             the signal fires (while waiting or while reading) → timeout, or cancelled
 *   streamed  one JSON object a line, read as it arrives (within the same size limit and the signal):
 *             {"chunk": <JSON>, "units"?: n} → run.stream.emit(chunk, units) in order (units cumulative, per_unit)
 *             {"progress": {"message"?, "fraction"?}} → run.stream.progress; without run.stream both go nowhere
 *             last line {"output": <JSON>, "units"?: n} or {"error": {"code", "message"?}, "units"?: n}; the units
 *             are that line's, else the last chunk's. Any other line, no last line, a line after it → agent_error.
 *             The stream refusing a chunk (the budget, an invalid chunk) closes the connection: the runner decides.
 *   question  run.stream.ask({message, schema}), then POST runtime.endpoint again with the same headers plus
 *             x-holon-continuation: <token> (visible ASCII, at most 1024 characters) and the caller's answer as the
 *             JSON body; its answer is read like the first (it may stream, or ask again: at most 10 questions a
 *             run). No run.stream (an evaluation), a question left unanswered, the 11th question → agent_error;
 *             the call cancelled or timed out meanwhile → cancelled or timeout.
 *
 * Webhook agents are `per_run`, `per_unit` (the units come with the streamed answer) or `free`, never `quote`.
 * Published agents (any origin but `shipped`) go through the `published` option's guarded client when it is given
 * (the runner always gives it, published.ts): an http:// endpoint without allowPrivateEndpoints, a refused address
 * and a 3xx answer are then runtime_unavailable (never billed).
 */
import { request, type Dispatcher } from 'undici';
import { RedirectRefusedError } from '../platform/guarded-net.js';
import { abortedResult, raceSignal } from './abort.js';
import { agentError } from './messages.js';
import { describeLimit, extraHeaders, maxResponseBytesOf, networkFailure, type HeadersOption } from './remote.js';
import { routeOf } from './published.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from './types.js';
import { converse, declaredError, discard, isNdjson, questionOf, readNdjson, type Answer } from './webhook-stream.js';

export interface WebhookRuntimeOptions {
  /** The largest answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** The undici dispatcher to send through for shipped agents (and every agent without `published`). Default: undici's global one. */
  dispatcher?: Dispatcher;
  /** The guarded client for published agents (published.ts); without it they use `dispatcher` like shipped ones. */
  published?: { dispatcher: Dispatcher; allowHttp: boolean };
  /** Extra request headers for an agent, e.g. `{ authorization: 'Bearer …' }`. They never replace the contract's own headers. */
  headers?: HeadersOption;
}

/** The contract's own request headers: the `headers` option never replaces them. */
const CONTRACT_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'x-holon-agent',
  'x-holon-call',
  'x-holon-delegation',
  'x-holon-files',
  'x-holon-continuation',
]);
/** undici's own timers are only a safety net behind the signal. */
const UNDICI_TIMER_MARGIN_MS = 5_000;

type Body = Dispatcher.ResponseData['body'];

/** Read at most `limit` bytes; past it, destroy the stream (closing the connection) and say so. */
async function readLimited(body: Body, limit: number): Promise<{ ok: true; bytes: Buffer } | { ok: false }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit) {
      body.destroy();
      return { ok: false };
    }
    chunks.push(chunk);
  }
  return { ok: true, bytes: Buffer.concat(chunks, total) };
}

/** The request body (the input as JSON) and its headers, or why there is none. */
async function webhookRequest(
  agent: AgentVersion,
  input: unknown,
  run: RunContext,
  option: HeadersOption | undefined,
): Promise<{ body: string; headers: Record<string, string> } | { failure: RunResult }> {
  let body: string;
  try {
    body = JSON.stringify(input) ?? 'null';
  } catch {
    return { failure: agentError('the input could not be encoded as JSON') };
  }
  const prepared = await extraHeaders(option, agent, CONTRACT_HEADERS);
  if ('failure' in prepared) return prepared;
  const { headers } = prepared;
  const { manifest } = agent;
  headers['content-type'] = 'application/json';
  headers['x-holon-agent'] = `${manifest.id}@${manifest.version}`;
  headers['x-holon-call'] = run.callId;
  if (run.delegationToken) headers['x-holon-delegation'] = run.delegationToken;
  if (run.files && Object.keys(run.files).length > 0) headers['x-holon-files'] = JSON.stringify(run.files);
  return { body, headers };
}

/** An answer's bytes: a declared error, a question, the output, or agent_error (not UTF-8, not JSON, no error object). */
function decodeAnswer(bytes: Buffer, statusCode: number): Answer {
  const ok = statusCode >= 200 && statusCode < 300;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return agentError(ok ? 'the answer is not valid UTF-8 JSON' : `the endpoint answered ${statusCode} with a body that is not UTF-8`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return agentError(ok ? `the answer is not JSON (status ${statusCode})` : `the endpoint answered ${statusCode} (not a JSON error)`);
  }
  const declared = declaredError(parsed);
  if (declared) return { kind: 'error', ...declared };
  if (!ok) return agentError(`the endpoint answered ${statusCode} without an error object`);
  return questionOf(parsed) ?? { kind: 'output', output: parsed };
}

/** Where the request went, and through what: what reading its answer needs besides the answer. */
interface Sent {
  url: URL;
  /** Through the guarded client (a published agent): a redirect is then a refusal. */
  guarded: boolean;
  run: RunContext;
  maxResponseBytes: number;
}

/** The answer, read within the size limit (streamed or not): a redirect and an oversized answer are refused unread. */
async function readAnswer(response: Dispatcher.ResponseData, sent: Sent): Promise<Answer> {
  const { url, run, maxResponseBytes } = sent;
  const { statusCode } = response;
  const answer = response.body;
  try {
    if (statusCode >= 300 && statusCode < 400) {
      discard(answer);
      if (sent.guarded) return networkFailure(new RedirectRefusedError(url.hostname, statusCode), run.timeoutMs, url);
      return agentError(`the endpoint answered ${statusCode}: redirects are not followed`);
    }
    const length = Number(response.headers['content-length']);
    if (Number.isFinite(length) && length > maxResponseBytes) {
      discard(answer);
      return agentError(`answer larger than ${describeLimit(maxResponseBytes)}`);
    }
    if (statusCode >= 200 && statusCode < 300 && isNdjson(response.headers['content-type'])) return await readNdjson(answer, run, maxResponseBytes);
    const read = await readLimited(answer, maxResponseBytes);
    if (!read.ok) return agentError(`answer larger than ${describeLimit(maxResponseBytes)}`);
    return decodeAnswer(read.bytes, statusCode);
  } catch (err) {
    if (!answer.destroyed) discard(answer);
    if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
    return networkFailure(err, run.timeoutMs, url);
  }
}

export function createWebhookRuntime(options: WebhookRuntimeOptions = {}): Runtime {
  const maxResponseBytes = maxResponseBytesOf(options.maxResponseBytes);

  async function call(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
    const route = routeOf(agent, options.published);
    if ('failure' in route) return route.failure;
    const { url, guarded } = route;
    const dispatcher = guarded ? guarded.dispatcher : options.dispatcher;
    const prepared = await webhookRequest(agent, input, run, options.headers);
    if ('failure' in prepared) return prepared.failure;
    const sent: Sent = { url, guarded: guarded !== undefined, run, maxResponseBytes };

    /** One POST (the input, or an answer with its continuation) and its answer, read. */
    async function send(body: string, headers: Record<string, string>): Promise<Answer> {
      const timerMs = Math.max(run.timeoutMs, 0) + UNDICI_TIMER_MARGIN_MS;
      let response: Dispatcher.ResponseData;
      try {
        // undici v7's request never follows redirects unless the dispatcher is composed with the redirect interceptor.
        response = await request(url, {
          method: 'POST',
          headers,
          body,
          signal: run.signal,
          headersTimeout: timerMs,
          bodyTimeout: timerMs,
          ...(dispatcher ? { dispatcher } : {}),
        });
      } catch (err) {
        if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
        return networkFailure(err, run.timeoutMs, url);
      }
      return readAnswer(response, sent);
    }

    const first = await send(prepared.body, prepared.headers);
    return converse(
      first,
      (continuation, answer) => send(JSON.stringify(answer) ?? 'null', { ...prepared.headers, 'x-holon-continuation': continuation }),
      run,
    );
  }

  return {
    run(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
      if (run.signal.aborted) return Promise.resolve(abortedResult(run.signal.reason, run.timeoutMs));
      return raceSignal(
        run.signal,
        () => call(agent, input, run),
        () => abortedResult(run.signal.reason, run.timeoutMs),
      );
    },
  };
}
