/**
 * What the two remote runtimes (webhook.ts, mcp/) share: the agent's endpoint, the extra request headers of the
 * `headers` option, the answer-size limit, and what a network error means. Each returns a RunResult instead of
 * throwing, like the runtimes.
 */
import { guardRefusal } from '../platform/guarded-net.js';
import { abortedResult } from './abort.js';
import { MAX_FAILURE_MESSAGE, truncate } from './messages.js';
import type { AgentVersion, RunResult } from './types.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export type HeadersOption = (agent: AgentVersion) => Record<string, string> | Promise<Record<string, string>>;

/** The largest answer read, validated once when a runtime is made. */
export function maxResponseBytesOf(option: number | undefined): number {
  const bytes = option ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new TypeError('maxResponseBytes must be a non-negative whole number of bytes');
  return bytes;
}

/** `runtime.endpoint` as an http(s) URL, or the failure (runtime_unavailable, never billed). */
export function endpointOf(agent: AgentVersion): { url: URL } | { failure: RunResult } {
  const endpoint = agent.manifest.runtime.endpoint;
  try {
    if (!endpoint) throw new Error('missing');
    const url = new URL(endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    return { url };
  } catch {
    return { failure: { kind: 'failure', code: 'runtime_unavailable', message: 'the agent has no valid http(s) runtime.endpoint' } };
  }
}

/**
 * The `headers` option's headers for an agent, names in lower case, minus the ones the runtime owns (`reserved`):
 * the option can add (e.g. `Authorization`), never replace the contract's own headers.
 */
export async function extraHeaders(
  option: HeadersOption | undefined,
  agent: AgentVersion,
  reserved: ReadonlySet<string>,
): Promise<{ headers: Record<string, string> } | { failure: RunResult }> {
  const headers: Record<string, string> = {};
  if (!option) return { headers };
  let extra: Record<string, string>;
  try {
    extra = await option(agent);
  } catch (err) {
    const what = err instanceof Error ? err.message : String(err);
    return {
      failure: { kind: 'failure', code: 'runtime_unavailable', message: truncate(`the request headers could not be prepared: ${what}`, MAX_FAILURE_MESSAGE) },
    };
  }
  for (const [name, value] of Object.entries(extra)) {
    const lower = name.toLowerCase();
    if (!reserved.has(lower)) headers[lower] = value;
  }
  return { headers };
}

/** The answer-size limit, as a message says it: `10 MB`, or `1500 bytes`. */
export function describeLimit(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${bytes} bytes`;
}

/** Network errors that mean the endpoint could not be reached at all. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Errors after the endpoint was reached: it closed the connection or spoke something that is not HTTP. */
const BROKEN_ANSWER_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);

const TIMER_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Every string `code` on an error, its causes and aggregated errors (Node and undici network errors). */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (depth > 3 || typeof e !== 'object' || e === null) return;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    visit(cause, depth + 1);
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

/** The failure for a network error: unreachable → runtime_unavailable, dropped mid-answer → agent_error. */
export function networkFailure(err: unknown, timeoutMs: number): RunResult {
  // The guarded client refused the address or a redirect (published agents): never billed, said plainly.
  const refused = guardRefusal(err);
  if (refused) return { kind: 'failure', code: 'runtime_unavailable', message: truncate(`the endpoint was refused (${refused.message})`, MAX_FAILURE_MESSAGE) };
  const codes = errorCodes(err);
  if (codes.some((c) => TIMER_CODES.has(c))) return abortedResult(undefined, timeoutMs);
  const unreachable = codes.find((c) => UNREACHABLE_CODES.has(c));
  if (unreachable) return { kind: 'failure', code: 'runtime_unavailable', message: `the endpoint is unreachable (${unreachable})` };
  const broken = codes.find((c) => BROKEN_ANSWER_CODES.has(c) || c.startsWith('HPE_'));
  if (broken) {
    return { kind: 'failure', code: 'agent_error', message: `the endpoint closed the connection or sent an invalid HTTP answer (${broken})` };
  }
  const what = err instanceof Error ? `${codes[0] ?? err.name}: ${err.message}` : String(err);
  return { kind: 'failure', code: 'runtime_unavailable', message: truncate(`the endpoint could not be called (${what})`, MAX_FAILURE_MESSAGE) };
}
