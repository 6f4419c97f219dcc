/**
 * The log's checkpoints (docs/receipts.md "Checkpoints"): every HOLON_CHECKPOINT_S seconds the settler signs
 * a checkpoint of the receipt log when receipts arrived since the last one (shared/receipts/checkpoints.ts); a quiet
 * log gets none. Any number of settlers may do it at once: one checkpoint is kept per size.
 */
import type { ServiceContext } from '../../shared/context.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import { checkpointNow } from '../../shared/receipts/checkpoints.js';

export function startCheckpointer(ctx: ServiceContext, everyS: number): Periodic {
  return startPeriodic(ctx.log, () => checkpointNow(ctx), { everyMs: everyS * 1000, atStart: true, failure: 'signing a checkpoint of the receipt log failed' });
}
