/**
 * The settler service (`holon settler`): takes `settle` jobs and settles them in batches (settle-batcher.ts, group
 * commit; shared/settlement/settle.ts), delivers callbacks, sweeps what nobody finished (sweeper.ts) and deletes expired files (file-sweeper.ts).
 */
import { CALLBACK_QUEUE, SETTLE_QUEUE, type CallJob } from '../../shared/calls/jobs.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { createGuardedDispatcher } from '../../shared/platform/guarded-net.js';
import { createSettleBatcher } from './settle-batcher.js';
import { deliverCallback } from './callbacks.js';
import { startSweeper } from './sweeper.js';
import { startFileSweeper } from './file-sweeper.js';

export interface SettlerOptions {
  concurrency: number;
  /** Hosted: callbacks go out through the guarded client (public addresses only, checked on every connection). */
  guardCallbacks: boolean;
  /** Calls settled together in one transaction at most (group commit); default 64. */
  maxBatch?: number;
}

export function startSettler(ctx: ServiceContext, options: SettlerOptions): StartedRole {
  const guarded = options.guardCallbacks ? createGuardedDispatcher() : undefined;
  const { queues } = ctx.messaging;
  // Jobs in flight wait for the batch being committed and go together in the next one (settle-batcher.ts).
  const batcher = createSettleBatcher(ctx, { maxBatch: options.maxBatch ?? 64 });
  const workers = [
    queues.worker<CallJob>(
      SETTLE_QUEUE,
      async (job) => {
        await batcher.settle(job.callId);
      },
      { concurrency: options.concurrency },
    ),
    queues.worker<CallJob>(CALLBACK_QUEUE, (job) => deliverCallback(ctx, job.callId, guarded ? { dispatcher: guarded } : {}), { concurrency: 4 }),
  ];
  const sweeper = startSweeper(ctx);
  const files = startFileSweeper(ctx);
  return { stop: [() => sweeper.stop(), () => files.stop()], workers, release: guarded ? [() => guarded.close()] : [] };
}
