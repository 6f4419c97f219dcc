/**
 * The settler's sweep of payments from outside (docs/payments.md): top-ups whose process died between the transfer and
 * the credit are credited (once, keyed by the transaction), at start-up and every minute. Off when payments are.
 */
import type { ServiceContext } from '../../shared/context.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import { finishTopups } from '../../shared/payments/topups.js';

const PAYMENT_SWEEP_MS = 60_000;

export function startPaymentSweep(ctx: ServiceContext, everyMs = PAYMENT_SWEEP_MS): Periodic | null {
  if (!ctx.payments) return null;
  return startPeriodic(
    ctx.log,
    async () => {
      const finished = await finishTopups(ctx);
      if (finished > 0) ctx.log.info({ finished }, 'top-ups credited after an interruption');
    },
    { everyMs, atStart: true, failure: 'payment sweep failed' },
  );
}
