/**
 * The runner service (`holon runner`): takes `run` jobs and runs each claimed call (run-call.ts) with the agent
 * runtimes, hearing cancellations for the runs it holds.
 */
import type { CallWaiter } from '../../shared/calls/waiter.js';
import { RUN_QUEUE, type CallJob } from '../../shared/calls/jobs.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { createCancelWatcher } from './cancel-watcher.js';
import { runCall } from './run-call.js';
import { createRuntimes } from './runtimes/index.js';

export async function startRunner(ctx: ServiceContext, options: { waiter: CallWaiter; concurrency: number }): Promise<StartedRole> {
  const cancels = await createCancelWatcher(ctx.messaging.notifier, ctx.messaging.store);
  const runtimes = createRuntimes();
  const runner = { ...ctx, runtimes, waiter: options.waiter, cancels };
  return {
    stop: [() => cancels.close()],
    workers: [ctx.messaging.queues.worker<CallJob>(RUN_QUEUE, (job) => runCall(runner, job.callId), { concurrency: options.concurrency })],
    // After the runs ended: pooled MCP sessions end with a DELETE.
    release: [async () => runtimes.close()],
  };
}
