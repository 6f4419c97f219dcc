/**
 * The network of published agents (gateway.md §7 "Network safety"): their webhook and MCP calls go through the
 * guarded client (shared/platform/guarded-net.ts): the address actually connected is checked on every connection,
 * redirects are refused, `https:` endpoints only. A refusal is `runtime_unavailable`, never billed. Agents shipped
 * with the gateway (`origin: 'shipped'`) are exempt and use the ordinary client. HOLON_ALLOW_PRIVATE_ENDPOINTS=1
 * (`allowPrivateEndpoints`, refused in production) lifts the address check and admits `http:` endpoints; redirects
 * stay refused.
 */
import type { Dispatcher } from 'undici';
import { createGuardedDispatcher, createGuardedFetch, type FetchFunction, type GuardedDispatcherOptions } from '../platform/guarded-net.js';
import { failure } from './messages.js';
import { endpointOf } from './remote.js';
import type { AgentVersion, RunResult } from './types.js';

export interface PublishedNetworkOptions {
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: private addresses and `http:` endpoints are allowed. */
  allowPrivateEndpoints: boolean;
  /** Tests: the guard's resolver, routing of checked addresses, trusted CAs, connect timeout. */
  guard?: Omit<GuardedDispatcherOptions, 'allowPrivate'>;
}

/** What the remote runtimes use for a published agent. */
export interface PublishedNetwork {
  /** The guarded undici dispatcher (webhooks). */
  dispatcher: Dispatcher;
  /** A fetch over it that refuses redirects (the MCP transport). */
  fetch: FetchFunction;
  /** `http:` endpoints are admitted (allowPrivateEndpoints). */
  allowHttp: boolean;
}

/** One guarded dispatcher per runner process, shared by the webhook and MCP runtimes; `close` ends its connections. */
export function createPublishedNetwork(options: PublishedNetworkOptions): PublishedNetwork & { close(): Promise<void> } {
  const dispatcher = createGuardedDispatcher({ ...options.guard, allowPrivate: options.allowPrivateEndpoints });
  return {
    dispatcher,
    fetch: createGuardedFetch(dispatcher),
    allowHttp: options.allowPrivateEndpoints,
    close: () => dispatcher.close(),
  };
}

/** The guarded network for `agent` when it is a published one; undefined for shipped agents (or no network given). */
function networkFor<N extends { allowHttp: boolean }>(agent: AgentVersion, network: N | undefined): N | undefined {
  return agent.origin === 'shipped' ? undefined : network;
}

/** A published agent's endpoint must be https, unless allowPrivateEndpoints: the failure, or undefined when fine. */
function schemeRefusal(url: URL, network: { allowHttp: boolean }): RunResult | undefined {
  if (url.protocol === 'https:' || network.allowHttp) return undefined;
  return failure('runtime_unavailable', 'the endpoint was refused: a published agent must use an https:// runtime.endpoint');
}

/**
 * Where a remote runtime sends a call: the endpoint, and the guarded network when the agent is published (an
 * https endpoint required unless allowPrivateEndpoints). One check for the webhook and the MCP runtimes.
 */
export function routeOf<N extends { allowHttp: boolean }>(
  agent: AgentVersion,
  network: N | undefined,
): { url: URL; guarded: N | undefined } | { failure: RunResult } {
  const endpoint = endpointOf(agent);
  if ('failure' in endpoint) return endpoint;
  const guarded = networkFor(agent, network);
  const refused = guarded && schemeRefusal(endpoint.url, guarded);
  return refused ? { failure: refused } : { url: endpoint.url, guarded };
}
