/**
 * The settler's sweep of payments from outside (docs/payments.md), at start-up and every minute, off when payments are:
 * top-ups whose process died between the transfer and the credit are credited (once, keyed by the transaction), and
 * payouts a crash left `pending` or `sent` are sent (the same signed bytes) and finished, paid or reversed.
 */
import type { ServiceContext } from '../../shared/context.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import { finishTopups } from '../../shared/payments/topups.js';
import { recoverPayouts } from '../../shared/payments/payouts.js';

const PAYMENT_SWEEP_MS = 60_000;

export function startPaymentSweep(ctx: ServiceContext, everyMs = PAYMENT_SWEEP_MS): Periodic | null {
  if (!ctx.payments) return null;
  return startPeriodic(
    ctx.log,
    async () => {
      // Each on its own: a failure of one does not keep the other from running.
      const [topups, payouts] = await Promise.allSettled([finishTopups(ctx), recoverPayouts(ctx)]);
      if (topups.status === 'fulfilled' && topups.value > 0) ctx.log.info({ finished: topups.value }, 'top-ups credited after an interruption');
      if (payouts.status === 'fulfilled' && payouts.value > 0) ctx.log.info({ payouts: payouts.value }, 'payouts finished after an interruption');
      for (const r of [topups, payouts]) if (r.status === 'rejected') throw r.reason;
    },
    { everyMs, atStart: true, failure: 'payment sweep failed' },
  );
}
