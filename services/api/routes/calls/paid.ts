/**
 * POST /v0/calls without a key and without a mandate, when payments from outside are on (docs/payments.md): the
 * caller pays for this one call with x402. No payment: 402, `PAYMENT-REQUIRED` (base64 JSON, x402 version 2) and a
 * problem+json body saying what to pay and why. A payment (`PAYMENT-SIGNATURE`): verified, then the call is admitted
 * and answered like any other, the answer carrying `PAYMENT-RESPONSE` (the transaction, and the gateway's signed
 * receipt in the `offer-receipt` extension) once it is settled.
 */
import type { Request, Response } from 'express';
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { settlementResponse } from '../../../../shared/payments/payment-response.js';
import { type MppContext, mppChallenge, mppReceipt, paymentOfCredential } from '../../../../shared/payments/mpp.js';
import { HolonError } from '../../../../shared/core/errors.js';
import { describeFailure, failureDetail, type ReceiptView } from '../../../../shared/receipts/store.js';
import { outputFields, readOutput } from '../../../../shared/calls/answer/outputs.js';
import { paymentRequired, readPaymentHeader } from '../../../../shared/payments/offer.js';
import {
  formatUnits,
  type PaidCallAsk,
  paidCallReceipt,
  quotePaidCall,
  quoteWords,
  submitPaidCall,
  type Quote,
} from '../../../../shared/payments/paid-call.js';
import type { PaymentRails } from '../../../../shared/payments/rails.js';
import type { SigningKey } from '../../../../shared/signing/keys.js';
import { answerSubmission, wantsAsync, type AnswerDeps } from './answers.js';
import { noteCall } from './submission.js';
import { hitPayLimit, type PayLimits } from '../../rate-limit.js';
import { payerOf } from '../../../../shared/payments/payment-key.js';

/** Whether this request pays for itself: payments are on, it sends no key and names no mandate. */
export function paysPerCall(deps: AnswerDeps, req: Request, body: { mandate?: unknown }): boolean {
  const auth = req.get('authorization');
  return deps.ctx.payments !== undefined && body.mandate === undefined && (auth === undefined || /^Payment\s/i.test(auth));
}

function resourceOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${req.originalUrl.split('?')[0]}`;
}

async function answer402(res: Response, rails: PaymentRails, q: Quote, asked: { header: string; challenge: string | null; reason?: string }): Promise<void> {
  const { header, reason } = asked;
  // MPP's challenge beside x402's, for a fixed price (docs/payments.md, "MPP").
  if (asked.challenge) res.set('WWW-Authenticate', asked.challenge);
  res
    .status(402)
    .set('PAYMENT-REQUIRED', header)
    .type('application/problem+json')
    .json({
      type: 'https://holon.dev/problems/payment-required',
      title: 'Payment required',
      status: 402,
      detail:
        reason ??
        `pay for this call with x402: sign one of the requirements in the PAYMENT-REQUIRED header and send the same request again with PAYMENT-SIGNATURE; you are charged what the call is billed, at most ${formatUnits(q.units, rails.asset.decimals)} ${rails.asset.currency}`,
      error: { code: reason ? 'payment_invalid' : 'payment_required', message: reason ?? 'this call must be paid for' },
      quote: quoteWords(rails, q),
    });
}

type PaymentIn =
  | { kind: 'none' }
  | { kind: 'malformed'; message: string }
  | { kind: 'refused'; message: string }
  | { kind: 'ok'; payload: PaymentPayload; via: 'x402' | 'mpp' };

/** The payment a request carries: x402's PAYMENT-SIGNATURE, or MPP's `Authorization: Payment` credential. */
function paymentOf(req: Request, mpp: MppContext, exact: PaymentRequirements | undefined): PaymentIn {
  const signature = req.get('payment-signature');
  if (signature !== undefined) {
    const read = readPaymentHeader(signature);
    return read.ok ? { kind: 'ok', payload: read.payload, via: 'x402' } : { kind: 'malformed', message: read.message };
  }
  const auth = req.get('authorization');
  if (auth === undefined) return { kind: 'none' };
  const credential = paymentOfCredential(mpp, auth, exact);
  if (credential.ok) return { kind: 'ok', payload: credential.payload, via: 'mpp' };
  return { kind: credential.malformed ? 'malformed' : 'refused', message: credential.message };
}

/** The x402 settlement response of a settled paid call, as the PAYMENT-RESPONSE header. */
async function paymentResponse(key: SigningKey, resource: string, receipt: ReceiptView): Promise<string | null> {
  const settled = await settlementResponse(key, resource, receipt);
  return settled ? encodePaymentResponseHeader(settled) : null;
}

export async function submitPaidHandler(
  deps: AnswerDeps & { payLimits?: PayLimits },
  req: Request,
  res: Response,
  ask: Omit<PaidCallAsk, 'resource'>,
): Promise<void> {
  const rails = deps.ctx.payments!;
  if (deps.payLimits) await hitPayLimit(deps.payLimits, req, res, { perMin: rails.keylessPerMin });
  const full = { ...ask, resource: resourceOf(req) };
  const q = quotePaidCall(deps.ctx, rails, full);
  if (!q.ok) throw new HolonError(q.code, q.message);
  const asked = await paymentRequired(rails, q.quote.offer);
  const mpp: MppContext = { rails, realm: req.get('host') ?? 'holon' };
  const exact = asked.accepts.find((a) => a.scheme === 'exact');
  const challenge = mppChallenge(mpp, exact, q.quote.offer.description);
  const payment = paymentOf(req, mpp, exact);
  if (payment.kind === 'none') return answer402(res, rails, q.quote, { header: asked.header, challenge });
  if (payment.kind === 'malformed') throw new HolonError('invalid_request', payment.message);
  if (payment.kind === 'refused') return answer402(res, rails, q.quote, { header: asked.header, challenge, reason: payment.message });
  // The wallet the payment names, before the facilitator is asked anything: one wallet cannot flood it either.
  if (deps.payLimits) await hitPayLimit(deps.payLimits, req, res, { payer: payerOf(payment.payload, undefined), perMin: rails.keylessPerMin });
  const idempotencyKey = req.get('idempotency-key');
  const paid = await submitPaidCall(
    deps.engine,
    rails,
    { ...full, syncAnswer: !wantsAsync(req), ...(idempotencyKey ? { idempotencyKey } : {}) },
    payment.payload,
  );
  switch (paid.kind) {
    case 'refused':
      throw new HolonError(paid.code, paid.message);
    case 'payment_invalid':
      return answer402(res, rails, q.quote, { header: paid.header, challenge, reason: `the payment was not accepted: ${paid.reason}` });
    case 'payment_replayed':
      throw new HolonError('payment_replayed', 'this payment was used already: sign a new one (a new nonce) for a new call');
    case 'idempotent':
      return answerIdempotent(deps, res, paid.mandateId, full.resource);
    case 'submitted': {
      noteCall(res, paid.submitted);
      const decorate = async (receipt: ReceiptView) => {
        const header = await paymentResponse(deps.ctx.signingKey, full.resource, receipt);
        if (header) res.set('PAYMENT-RESPONSE', header);
        if (payment.via === 'mpp' && receipt.payment?.transaction) res.set('Payment-Receipt', mppReceipt(receipt.payment.transaction));
      };
      return answerSubmission(deps, res, paid.submitted, { async: wantsAsync(req), decorate });
    }
  }
}

/** The payer's Idempotency-Key (or payment-identifier) again: the earlier paid call's receipt, as a keyed replay answers. */
async function answerIdempotent(deps: AnswerDeps, res: Response, mandateId: string, resource: string): Promise<void> {
  const receipt = await paidCallReceipt(deps.ctx, mandateId);
  if (!receipt) throw new HolonError('idempotency_key_in_use', 'the call under this Idempotency-Key is still running');
  const header = await paymentResponse(deps.ctx.signingKey, resource, receipt);
  if (header) res.set('PAYMENT-RESPONSE', header);
  res.status(receipt.status === 'succeeded' ? 200 : 502).json({
    replayed: true,
    status: receipt.status,
    ...(receipt.status === 'succeeded'
      ? outputFields(await readOutput(deps.ctx, receipt.id))
      : { error: describeFailure(receipt, await failureDetail(deps.ctx.db, receipt)) }),
    receipt,
  });
}
