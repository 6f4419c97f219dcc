/**
 * The runtimes as the gateway runs agents — for the runner's calls and the evaluator's cases alike ("the same
 * runtime path as a call"): published agents through the guarded client (published.ts), shipped ones exempt, and a
 * published agent's endpoint credential sent as `Authorization: Bearer` on every webhook, MCP and A2A request.
 */
import { CredentialUnreadableError, type CredentialLookup } from '../publishing/credentials.js';
import type { Logger } from '../platform/log.js';
import { createRuntimes, type PublishedNetworkOptions } from './index.js';
import type { AgentVersion, Runtime } from './types.js';

export interface GatewayRuntimesOptions {
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: published agents may be on private addresses and use http://. Default false. */
  allowPrivateEndpoints?: boolean;
  /** Tests: the guarded client's resolver, routing of checked addresses and trusted CAs. */
  guard?: PublishedNetworkOptions['guard'];
  /** Hosted: published agents' endpoint credentials (shared/publishing/credentials.ts). */
  credentials?: CredentialLookup;
}

/**
 * The `headers` option of the remote runtimes: a published agent's credential, when its author set one. One that
 * cannot be used fails the run (runtime_unavailable, never billed), and the log says why (never the token).
 */
function credentialHeaders(lookup: CredentialLookup, log: Logger): (agent: AgentVersion) => Promise<Record<string, string>> {
  return async (agent): Promise<Record<string, string>> => {
    if (agent.origin !== 'published') return {};
    let token: string | undefined;
    try {
      token = await lookup(agent.manifest.id);
    } catch (err) {
      // The message is ours (never the token); a database error is said without its details.
      const message = err instanceof CredentialUnreadableError ? err.message : "the agent's endpoint credential could not be read";
      log.warn({ agent: agent.manifest.id, err: { message } }, 'endpoint credential unusable');
      throw new Error(message);
    }
    return token === undefined ? {} : { authorization: `Bearer ${token}` };
  };
}

export function createGatewayRuntimes(log: Logger, options: GatewayRuntimesOptions): Runtime & { close(): Promise<void> } {
  const headers = options.credentials ? { headers: credentialHeaders(options.credentials, log) } : {};
  return createRuntimes({
    published: { allowPrivateEndpoints: options.allowPrivateEndpoints ?? false, ...(options.guard ? { guard: options.guard } : {}) },
    webhook: headers,
    mcp: headers,
    a2a: headers,
  });
}
