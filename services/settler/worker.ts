/**
 * The settler (`holon settler`): an entry point. Each `settle` job is handed to the call engine (`engine.settle`:
 * group commit, shared/calls/settle/batcher.ts and settle.ts); besides, it delivers webhooks (callbacks.ts: the settlement writes each delivery's
 * row, the `callback` job wakes the dispatcher, each attempt is a `deliver` job; the delivery sweep finds those with no job), sweeps what nobody finished (sweeper.ts),
 * deletes expired files (file-sweeper.ts) and what is past its retention (retention.ts), and signs the receipt
 * log's checkpoints (checkpointer.ts).
 */
import { CALLBACK_QUEUE, SETTLE_QUEUE, type CallJob } from '../../shared/calls/wire.js';
import type { StartedRole } from '../../shared/context.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import type { WebhookSettings } from '../../shared/platform/config.js';
import { createGuardedDispatcher } from '../../shared/platform/guarded-net.js';
import { DELIVER_QUEUE, type DeliverJob } from '../../shared/webhooks/deliveries.js';
import { DELIVERY_SLOTS, runDeliverJob, startDelivery, startDeliverySweep, webhookRuntime } from './callbacks.js';
import { startSweeper } from './sweeper.js';
import { startPaymentSweep } from './payment-sweep.js';
import { startFileSweeper } from './file-sweeper.js';
import { startRetentionSweep } from './retention.js';
import { startCheckpointer } from './checkpointer.js';

export interface SettlerOptions {
  concurrency: number;
  /** Hosted: callbacks go out through the guarded client (public addresses only, checked on every connection). */
  guardCallbacks: boolean;
  /** Webhooks: hosted mode signs with each account's secrets (under HOLON_FILE_SECRET), dev mode with `devSecret`. */
  webhooks: { hosted: boolean; devSecret: string; fileSecret?: string; settings: WebhookSettings };
  /** HOLON_DELIVERY_RETENTION_DAYS: finished deliveries and tasks of final calls older than this are deleted. */
  retentionDays: number;
  /** HOLON_CHECKPOINT_S: how often the receipt log gets a new signed checkpoint while receipts arrive (checkpointer.ts). */
  checkpointS: number;
}

export function startSettler(engine: CallEngine, options: SettlerOptions): StartedRole {
  const ctx = engine.resources;
  const guarded = options.guardCallbacks ? createGuardedDispatcher() : undefined;
  const { queues } = ctx.messaging;
  const webhooks = webhookRuntime(ctx, { ...options.webhooks, ...(guarded ? { dispatcher: guarded } : {}) });
  const workers = [
    queues.worker<CallJob>(
      SETTLE_QUEUE,
      async (job) => {
        await engine.settle(job.callId);
      },
      { concurrency: options.concurrency },
    ),
    queues.worker<CallJob>(CALLBACK_QUEUE, (job) => startDelivery(ctx, job.callId), { concurrency: 4 }),
    // The POSTs in flight are DELIVERY_SLOTS at most (callbacks.ts, fairly shared between accounts); the jobs taken at
    // once are more, so that attempts waiting briefly for their turn (or being postponed) do not keep the others out.
    queues.worker<DeliverJob>(
      DELIVER_QUEUE,
      (job) =>
        runDeliverJob(ctx, job, webhooks).catch((e: unknown) => {
          // A failure on the gateway's side (the database, the store): the job is retried by its queue.
          ctx.metrics?.webhookAttempts.inc({ verdict: 'error' });
          throw e;
        }),
      { concurrency: DELIVERY_SLOTS * 4 },
    ),
  ];
  const sweeper = startSweeper(engine);
  const files = startFileSweeper(ctx);
  const deliveries = startDeliverySweep(ctx);
  const retention = startRetentionSweep(ctx, options.retentionDays);
  const checkpoints = startCheckpointer(ctx, options.checkpointS);
  const payments = startPaymentSweep(ctx);
  return {
    stop: [() => sweeper.stop(), () => files.stop(), () => deliveries.stop(), () => retention.stop(), () => checkpoints.stop(), async () => payments?.stop()],
    workers,
    release: guarded ? [() => guarded.close()] : [],
  };
}
