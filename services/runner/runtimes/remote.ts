/**
 * What the two remote runtimes (webhook.ts, mcp.ts) share: the agent's endpoint, the extra request headers of the
 * `headers` option, and the answer-size limit. Each returns a RunResult instead of throwing, like the runtimes.
 */
import { truncate } from './node.js';
import type { AgentVersion, RunResult } from './types.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const MAX_FAILURE_MESSAGE = 200;

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
export async function extraHeaders(option: HeadersOption | undefined, agent: AgentVersion, reserved: ReadonlySet<string>): Promise<{ headers: Record<string, string> } | { failure: RunResult }> {
  const headers: Record<string, string> = {};
  if (!option) return { headers };
  let extra: Record<string, string>;
  try {
    extra = await option(agent);
  } catch (err) {
    const what = err instanceof Error ? err.message : String(err);
    return { failure: { kind: 'failure', code: 'runtime_unavailable', message: truncate(`the request headers could not be prepared: ${what}`, MAX_FAILURE_MESSAGE) } };
  }
  for (const [name, value] of Object.entries(extra)) {
    const lower = name.toLowerCase();
    if (!reserved.has(lower)) headers[lower] = value;
  }
  return { headers };
}
