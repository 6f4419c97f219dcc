/**
 * The runner service (`holon runner`): takes `run` jobs and runs each claimed call (run-call.ts) with the agent
 * runtimes, hearing cancellations for the runs it holds. Published agents' calls go through the guarded client
 * (runtimes/published.ts); shipped agents are exempt.
 */
import type { CallWaiter } from '../../shared/calls/waiter.js';
import { RUN_QUEUE, type CallJob } from '../../shared/calls/jobs.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { createCancelWatcher } from './cancel-watcher.js';
import { runCall } from './run-call.js';
import { createRuntimes, type PublishedNetworkOptions } from './runtimes/index.js';

export interface RunnerOptions {
  waiter: CallWaiter;
  concurrency: number;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS=1: published agents may be on private addresses and use http://. Default false. */
  allowPrivateEndpoints?: boolean;
  /** Tests: the guarded client's resolver, routing of checked addresses and trusted CAs. */
  guard?: PublishedNetworkOptions['guard'];
}

export async function startRunner(ctx: ServiceContext, options: RunnerOptions): Promise<StartedRole> {
  const cancels = await createCancelWatcher(ctx.messaging.notifier, ctx.messaging.store);
  const runtimes = createRuntimes({
    published: { allowPrivateEndpoints: options.allowPrivateEndpoints ?? false, ...(options.guard ? { guard: options.guard } : {}) },
  });
  const runner = { ...ctx, runtimes, waiter: options.waiter, cancels };
  return {
    stop: [() => cancels.close()],
    workers: [ctx.messaging.queues.worker<CallJob>(RUN_QUEUE, (job) => runCall(runner, job.callId), { concurrency: options.concurrency })],
    // After the runs ended: pooled MCP sessions end with a DELETE, then the guarded client's connections close.
    release: [async () => runtimes.close()],
  };
}
