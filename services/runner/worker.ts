/**
 * The runner service (`holon runner`): takes `run` jobs and runs each claimed call (run-call.ts) with the agent
 * runtimes, hearing cancellations for the runs it holds. Published agents' calls go through the guarded client
 * (runtimes/published.ts); shipped agents are exempt.
 */
import type { CallWaiter } from '../../shared/calls/waiter.js';
import { RUN_QUEUE, type CallJob } from '../../shared/calls/jobs.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import type { Logger } from '../../shared/platform/log.js';
import { CredentialUnreadableError, watchCredentials, type CredentialLookup } from '../../shared/hosted/credentials.js';
import { createCancelWatcher } from './cancel-watcher.js';
import { runCall } from './run-call.js';
import { createRuntimes, type AgentVersion, type PublishedNetworkOptions } from './runtimes/index.js';

export interface RunnerOptions {
  waiter: CallWaiter;
  concurrency: number;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: published agents may be on private addresses and use http://. Default false. */
  allowPrivateEndpoints?: boolean;
  /** Tests: the guarded client's resolver, routing of checked addresses and trusted CAs. */
  guard?: PublishedNetworkOptions['guard'];
  /**
   * Hosted: published agents' endpoint credentials (shared/hosted/credentials.ts), sent as `Authorization: Bearer`
   * on every webhook and MCP request to the agent's endpoint, whatever the version.
   */
  credentials?: CredentialLookup;
}

/**
 * The `headers` option of the remote runtimes: a published agent's credential, when its author set one. One that
 * cannot be used fails the call (runtime_unavailable, never billed), and the log says why (never the token).
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

export async function startRunner(ctx: ServiceContext, options: RunnerOptions): Promise<StartedRole> {
  const cancels = await createCancelWatcher(ctx.messaging.notifier, ctx.messaging.store);
  const { credentials } = options;
  const unwatch = credentials ? await watchCredentials(ctx.messaging.notifier, credentials) : undefined;
  const headers = credentials ? { headers: credentialHeaders(credentials, ctx.log) } : {};
  const runtimes = createRuntimes({
    published: { allowPrivateEndpoints: options.allowPrivateEndpoints ?? false, ...(options.guard ? { guard: options.guard } : {}) },
    webhook: headers,
    mcp: headers,
  });
  const runner = { ...ctx, runtimes, waiter: options.waiter, cancels };
  return {
    stop: [() => cancels.close(), ...(unwatch ? [unwatch] : [])],
    workers: [ctx.messaging.queues.worker<CallJob>(RUN_QUEUE, (job) => runCall(runner, job.callId), { concurrency: options.concurrency })],
    // After the runs ended: pooled MCP sessions end with a DELETE, then the guarded client's connections close.
    release: [async () => runtimes.close()],
  };
}
