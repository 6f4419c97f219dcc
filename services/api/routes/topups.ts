/**
 * POST /v0/topups `{amount}` (a human key): top the account up from outside with x402 (docs/payments.md). Without a
 * payment: 402 with an `exact` requirement for that amount in the asset (`PAYMENT-REQUIRED`); with `PAYMENT-SIGNATURE`:
 * settled on chain, then credited in the asset's currency, 201 with the entry and the new balance.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { formatAmount, parseAmount } from '../../../shared/core/money.js';
import { paymentRequired, readPaymentHeader } from '../../../shared/payments/offer.js';
import { topUp, topupOffer } from '../../../shared/payments/topups.js';
import type { ServiceContext } from '../../../shared/context.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { amount, failure } from '../openapi/schemas.js';
import { PAYMENT_REQUIRED_RESPONSE, TOPUP_CREDITED } from '../openapi/payment-schemas.js';
import { requireKind } from '../principal.js';

const TOPUP_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: { amount: amount('How much to add, in the asset’s currency (HOLON_X402_ASSET_CURRENCY)') },
} as const;

export const topupOperations = defineOperations({
  topUp: {
    id: 'topUp',
    method: 'post',
    path: '/v0/topups',
    tag: 'accounts',
    auth: ['human'],
    summary: 'Add money to your account from outside: 402 with what to pay (x402 `exact`), then again with PAYMENT-SIGNATURE → 201',
    headers: { 'PAYMENT-SIGNATURE': { description: 'x402: the payment (base64 JSON) answering the 402’s PAYMENT-REQUIRED' } },
    body: { schema: TOPUP_BODY, example: { amount: '10.00' } },
    responses: {
      201: { description: 'Paid and credited: the journal entry, the transaction, the new balance', schema: TOPUP_CREDITED },
      400: failure('A bad body, or a PAYMENT-SIGNATURE that is not an x402 payment', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      402: PAYMENT_REQUIRED_RESPONSE,
      403: failure('Not a human key', 'forbidden'),
      409: failure('The payment was used already', 'payment_replayed'),
      503: failure('Payments from outside are off on this gateway', 'payments_off'),
    },
  },
});

const readBody = bodyReader<{ amount: string }>(TOPUP_BODY);

export function topupRoutes(deps: { ctx: ServiceContext }): Router {
  const router = Router();
  mount(router, topupOperations.topUp, async (req, res) => {
    const p = requireKind(res, ['human'], 'top up an account');
    const r = readBody(req.body);
    r.done();
    const rails = deps.ctx.payments;
    if (!rails) throw new HolonError('payments_off', 'payments from outside are off on this gateway (HOLON_X402_NETWORK is not set)');
    const want = parseAmount(r.body.amount, { allowZero: false });
    const resource = `${req.protocol}://${req.get('host') ?? 'localhost'}/v0/topups`;
    const signature = req.get('payment-signature');
    if (signature === undefined) {
      const { header } = await paymentRequired(rails, topupOffer(rails, want, resource));
      res
        .status(402)
        .set('PAYMENT-REQUIRED', header)
        .type('application/problem+json')
        .json(problem(rails.asset.currency, want, rails));
      return;
    }
    const read = readPaymentHeader(signature);
    if (!read.ok) throw new HolonError('invalid_request', read.message);
    const done = await topUp(deps.ctx, rails, { account: p.account, amount: want, resource }, read.payload);
    switch (done.kind) {
      case 'payment_invalid':
        res
          .status(402)
          .set('PAYMENT-REQUIRED', done.header)
          .type('application/problem+json')
          .json({
            ...problem(rails.asset.currency, want, rails),
            detail: `the payment was not accepted: ${done.reason}`,
            error: { code: 'payment_invalid', message: done.reason },
          });
        return;
      case 'payment_replayed':
        throw new HolonError('payment_replayed', 'this payment was used already: sign a new one for a new top-up');
      case 'payment_failed':
        throw new HolonError('payment_failed', `the payment could not be collected: ${done.reason}`);
      case 'credited':
        res.status(201).json({
          entry: { id: done.entry.id.toString(), key: done.entry.key, amount: formatAmount(want), currency: rails.asset.currency },
          transaction: done.transaction,
          payer: done.payer,
          balance: {
            account: p.account,
            currency: rails.asset.currency,
            balance: formatAmount(done.balance.balance),
            held: formatAmount(done.balance.held),
            available: formatAmount(done.balance.available),
          },
        });
    }
  });
  return router;
}

function problem(currency: string, want: bigint, rails: NonNullable<ServiceContext['payments']>) {
  const units = topupOffer(rails, want, '').units;
  return {
    type: 'https://holon.dev/problems/payment-required',
    title: 'Payment required',
    status: 402,
    detail: `pay ${formatAmount(want)} ${currency} with x402: sign the requirement in the PAYMENT-REQUIRED header and send the same request again with PAYMENT-SIGNATURE`,
    error: { code: 'payment_required', message: 'a top-up must be paid for' },
    quote: { pay: { amount: formatAmount(want), currency, units: units.toString(), asset: rails.asset.address, network: rails.network } },
  };
}
