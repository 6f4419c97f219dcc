/**
 * The settler service (`holon settler`): takes `settle` jobs (shared/settlement/settle.ts: one transaction per
 * call), delivers callbacks, sweeps what nobody finished (sweeper.ts) and deletes expired files (file-sweeper.ts).
 */
import { CALLBACK_QUEUE, SETTLE_QUEUE, type CallJob } from '../../shared/calls/jobs.js';
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { createGuardedDispatcher } from '../../shared/platform/guarded-net.js';
import { settleCall } from '../../shared/settlement/settle.js';
import { deliverCallback } from './callbacks.js';
import { startSweeper } from './sweeper.js';
import { startFileSweeper } from './file-sweeper.js';

export interface SettlerOptions {
  concurrency: number;
  /** Hosted: callbacks go out through the guarded client (public addresses only, checked on every connection). */
  guardCallbacks: boolean;
}

export function startSettler(ctx: ServiceContext, options: SettlerOptions): StartedRole {
  const guarded = options.guardCallbacks ? createGuardedDispatcher() : undefined;
  const { queues } = ctx.messaging;
  const workers = [
    queues.worker<CallJob>(
      SETTLE_QUEUE,
      async (job) => {
        await settleCall(ctx, job.callId);
      },
      { concurrency: options.concurrency },
    ),
    queues.worker<CallJob>(CALLBACK_QUEUE, (job) => deliverCallback(ctx, job.callId, guarded ? { dispatcher: guarded } : {}), { concurrency: 4 }),
  ];
  const sweeper = startSweeper(ctx);
  const files = startFileSweeper(ctx);
  return { stop: [() => sweeper.stop(), () => files.stop()], workers, release: guarded ? [() => guarded.close()] : [] };
}
