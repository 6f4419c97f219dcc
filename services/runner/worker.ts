/**
 * The runner (`holon runner`): an entry point. Each `run` job is handed to the call engine (`engine.run`,
 * shared/calls/run/run-call.ts), with what only a runner process has: the agent runtimes, the cancel watcher that
 * hears cancellations for the runs it holds, the signer of file links, and the hand-back at the stop grace.
 * Published agents' calls go through the guarded client (shared/runtimes/published.ts); shipped agents are exempt.
 */
import { RUN_QUEUE, type CallJob } from '../../shared/calls/wire.js';
import type { StartedRole } from '../../shared/context.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import { watchCredentials, type CredentialLookup } from '../../shared/publishing/credentials.js';
import type { FileLinkSigner } from '../../shared/files/access.js';
import { createCancelWatcher } from '../../shared/calls/run/cancel-watcher.js';
import { HandedBack } from '../../shared/calls/run/run-call.js';
import type { PublishedNetworkOptions } from '../../shared/runtimes/index.js';
import { createGatewayRuntimes } from '../../shared/runtimes/gateway-runtimes.js';
import { setMaxListeners } from 'node:events';

export interface RunnerOptions {
  concurrency: number;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: published agents may be on private addresses and use http://. Default false. */
  allowPrivateEndpoints?: boolean;
  /** Tests: the guarded client's resolver, routing of checked addresses and trusted CAs. */
  guard?: PublishedNetworkOptions['guard'];
  /**
   * Hosted: published agents' endpoint credentials (shared/publishing/credentials.ts), sent as `Authorization: Bearer`
   * on every webhook and MCP request to the agent's endpoint, whatever the version.
   */
  credentials?: CredentialLookup;
  /** Signs the download links of the files a call's input names (shared/files/access.ts). */
  fileLinks?: FileLinkSigner;
}

export async function startRunner(engine: CallEngine, options: RunnerOptions): Promise<StartedRole> {
  const { messaging, log } = engine.resources;
  const cancels = await createCancelWatcher(messaging.notifier, messaging.store);
  const { credentials } = options;
  const unwatch = credentials ? await watchCredentials(messaging.notifier, credentials) : undefined;
  const runtimes = createGatewayRuntimes(log, options);
  // Fires at the stop grace: the runs still going end `gateway_restarted`, unbilled (run-call.ts).
  const handBack = new AbortController();
  // Each run in flight listens to it until the run ends (run-call.ts `earlyEnd` removes its listener): as many as
  // HOLON_RUNNER_CONCURRENCY at once, which is not a leak.
  setMaxListeners(0, handBack.signal);
  const parts = { runtimes, cancels, handBack: handBack.signal, ...(options.fileLinks ? { fileLinks: options.fileLinks } : {}) };
  return {
    // Nothing to stop first: the worker takes no new run once it closes, and a cancellation must still reach the runs
    // it finishes meanwhile (the cancel watcher closes after them, in `release`).
    stop: [],
    // The run queue's jobs, and the calls admitted in this process, which start here (shared/calls/run/run-here.ts).
    workers: [
      messaging.queues.worker<CallJob>(RUN_QUEUE, (job) => engine.run(job.callId, parts), { concurrency: options.concurrency }),
      engine.attachRunner(parts, options.concurrency),
    ],
    // After the runs ended: cancellations and credential changes are no longer heard, pooled MCP sessions end with a
    // DELETE, then the guarded client's connections close.
    release: [() => cancels.close(), ...(unwatch ? [unwatch] : []), async () => runtimes.close()],
    handBack: [() => handBack.abort(new HandedBack())],
  };
}
