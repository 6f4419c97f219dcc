/**
 * Collect before crediting (docs/payments.md): a paid call's payment is settled on chain for what the call is billed
 * BEFORE its settlement writes the journal entry that credits anybody. `upto` settles the billed amount (nothing for an
 * unbilled call: no transfer); `exact` is settled only for a billed call (its price), otherwise never submitted. The
 * payment row is locked while the facilitator is asked, so two settlers never collect one payment twice; its state
 * remembers the answer, so a settlement tried again reads it instead of asking again. A transfer that fails leaves the
 * call unbilled (`payment_failed`): nothing is credited that was not collected.
 */
import { SettleError } from '@x402/core/types';
import type { ServiceContext } from '../context.js';
import { microsToUnits } from '../core/asset-units.js';
import { formatAmount } from '../core/money.js';
import type { ReceiptPayment } from '../receipts/store.js';
import { authorizationState } from './authorization-state.js';
import { lockPaymentOfMandate, type PaymentClaim, type PaymentRow, unsealClaim, updatePayment } from './payment-rows.js';
import type { PaymentRails } from './rails.js';

/** What the settlement of a paid call writes about its payment. */
export interface CollectedPayment {
  /** The transfer failed: the call is unbilled with `payment_failed`. */
  failed: boolean;
  receipt: ReceiptPayment;
}

function receiptPayment(rails: PaymentRails, row: PaymentRow, billedMicros: bigint, rate: ReceiptPayment['rate']): ReceiptPayment {
  const collected = row.state === 'collected' ? billedMicros : 0n;
  return {
    scheme: row.scheme,
    network: row.network,
    payer: row.payer,
    amount: formatAmount(collected),
    currency: rails.asset.currency,
    transaction: row.state === 'collected' ? row.transaction : null,
    ...(rate ? { rate } : {}),
  };
}

/**
 * The payment of the paid call under `mandateId`, collected for `billedMicros` (the call's charge, in the asset's
 * currency) if that was not done yet. Undefined when the mandate is not a payment's. Throws when the facilitator could
 * not be reached: the payment stays `collecting` and the settlement is tried again later.
 */
export async function collectForCall(
  ctx: ServiceContext,
  call: { mandateId: string; billedMicros: bigint; rate?: ReceiptPayment['rate'] },
): Promise<CollectedPayment | undefined> {
  const rails = ctx.payments;
  if (!rails) return undefined;
  const done = await ctx.db.transaction(async (trx): Promise<CollectedPayment | { retry: Error } | undefined> => {
    const locked = await lockPaymentOfMandate(trx, call.mandateId);
    if (!locked) return undefined;
    const { row, sealed } = locked;
    const units = microsToUnits(call.billedMicros, rails.asset.decimals);
    if (row.state === 'verified' && units === 0n) {
      await updatePayment(trx, row.key, { state: 'void' });
      return { failed: false, receipt: receiptPayment(rails, { ...row, state: 'void' }, 0n, call.rate) };
    }
    if (row.state !== 'verified' && row.state !== 'collecting') {
      return { failed: row.state === 'failed', receipt: receiptPayment(rails, row, call.billedMicros, call.rate) };
    }
    // Committed with the row even when the facilitator's answer is lost: a later try then asks the chain first.
    if (row.state === 'verified') await updatePayment(trx, row.key, { state: 'collecting' });
    let ended: Ended;
    try {
      ended = await settleOnce(rails, row, sealed, units);
    } catch (e) {
      return { retry: e as Error };
    }
    await updatePayment(trx, row.key, ended);
    const now = { ...row, ...ended, collected: ended.collected ?? null };
    return { failed: ended.state === 'failed', receipt: receiptPayment(rails, now, call.billedMicros, call.rate) };
  });
  if (done && 'retry' in done) throw done.retry;
  return done;
}

/** Settles the payment, unless a try whose answer was lost already did (`collecting`: the chain is asked first). */
async function settleOnce(rails: PaymentRails, row: PaymentRow, sealed: string | null, units: bigint): Promise<Ended> {
  if (!sealed) return { state: 'failed', error: 'the payment can no longer be settled', transaction: null };
  const claim = unsealClaim(rails.sealing, row.key, sealed);
  if (row.state === 'collecting') {
    const seen = await authorizationState(rails.chain, rails.asset.address, claim.payload);
    if (seen.used === true && seen.transaction) return { state: 'collected', collected: units, transaction: seen.transaction, error: null };
  }
  return settleOnChain(rails, row, claim, units);
}

type Ended =
  | { state: 'collected'; collected: bigint; transaction: string; error: null }
  | { state: 'failed'; error: string; transaction: null; collected?: undefined };

async function settleOnChain(rails: PaymentRails, row: PaymentRow, claim: PaymentClaim, units: bigint): Promise<Ended> {
  const { payload, requirements } = claim;
  if (units > row.authorized) return { state: 'failed', error: 'the billed amount is above what the payer authorized', transaction: null };
  if (row.scheme === 'exact' && units !== row.authorized) return { state: 'failed', error: 'an exact payment settles only its full amount', transaction: null };
  const overrides = row.scheme === 'upto' ? { amount: units.toString() } : undefined;
  let result: Awaited<ReturnType<typeof rails.server.settlePayment>>;
  try {
    result = await rails.server.settlePayment(payload, requirements, undefined, undefined, overrides);
  } catch (e) {
    // The facilitator answered, and said no: a failed payment. Anything else (unreachable, timed out) is tried again.
    if (e instanceof SettleError) return { state: 'failed', error: e.message, transaction: null };
    throw e;
  }
  if (result.success && result.transaction) return { state: 'collected', collected: units, transaction: result.transaction, error: null };
  return { state: 'failed', error: result.errorReason ?? result.errorMessage ?? 'the facilitator did not settle the payment', transaction: null };
}
