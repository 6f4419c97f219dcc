/**
 * What the two remote runtimes (webhook.ts, mcp/) share: the agent's endpoint, the extra request headers of the
 * `headers` option, the answer-size limit, and what a network error means. Each returns a RunResult instead of
 * throwing, like the runtimes.
 */
import { guardRefusal } from '../platform/guarded-net.js';
import { classifyNetworkError, describeEndpoint, describeNetworkFailure, errorCodes } from '../platform/net-errors.js';
import { abortedResult } from './abort.js';
import { MAX_FAILURE_MESSAGE, truncate } from './messages.js';
import type { AgentVersion, RunResult } from './types.js';

const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

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

/** undici's own timers (a safety net behind the run's signal): the run timed out. */
const TIMER_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export { errorCodes };

/**
 * The failure for a network error, naming the endpoint (origin and path: never credentials or a query string) and
 * what happened: refused, not resolved, TLS, timed out, unreachable → runtime_unavailable, never billed; the
 * connection closed mid-answer, or an answer that is not HTTP → agent_error (the endpoint was reached).
 */
export function networkFailure(err: unknown, timeoutMs: number, endpoint?: URL): RunResult {
  // The guarded client refused the address or a redirect (published agents): never billed, said plainly.
  const refused = guardRefusal(err);
  if (refused) return { kind: 'failure', code: 'runtime_unavailable', message: truncate(`the endpoint was refused (${refused.message})`, MAX_FAILURE_MESSAGE) };
  if (errorCodes(err).some((c) => TIMER_CODES.has(c))) return abortedResult(undefined, timeoutMs);
  const where = endpoint ? describeEndpoint(endpoint) : 'the endpoint';
  const f = classifyNetworkError(err);
  const how = describeNetworkFailure(f);
  if (f.cause === 'closed')
    return { kind: 'failure', code: 'agent_error', message: truncate(`${where} closed the connection before answering: ${how}`, MAX_FAILURE_MESSAGE) };
  if (f.cause === 'protocol')
    return { kind: 'failure', code: 'agent_error', message: truncate(`${where} sent an invalid HTTP answer: ${how}`, MAX_FAILURE_MESSAGE) };
  return { kind: 'failure', code: 'runtime_unavailable', message: truncate(`could not reach ${where}: ${how}`, MAX_FAILURE_MESSAGE) };
}
