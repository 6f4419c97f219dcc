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
      const finished = await finishTopups(ctx);
      if (finished > 0) ctx.log.info({ finished }, 'top-ups credited after an interruption');
      const payouts = await recoverPayouts(ctx);
      if (payouts > 0) ctx.log.info({ payouts }, 'payouts finished after an interruption');
    },
    { everyMs, atStart: true, failure: 'payment sweep failed' },
  );
}
