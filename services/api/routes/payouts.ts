/**
 * Paying authors out (docs/payments.md), a human key, hosted: PUT /v0/me/payout-address {address}, POST /v0/me/payouts
 * {amount} (in the asset's currency; 201 with the payout: `paid` once its transfer is mined, `sent` while it is on its
 * way, `reversed` when it failed and the money is back) and GET /v0/me/payouts.
 */
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import { formatAmount, parseAmount } from '../../../shared/core/money.js';
import { maskAddress, setPayoutAddress } from '../../../shared/payments/payout-address.js';
import { listPayouts, type Payout, requestPayout } from '../../../shared/payments/payouts.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { amount, exact, failure, TIMESTAMP } from '../openapi/schemas.js';
import { requireKind } from '../principal.js';

const PAYOUT = exact(
  'A payout: what left the account for its payout address, and where its transfer is',
  {
    id: { type: 'string' },
    amount: { type: 'string' },
    currency: { type: 'string' },
    address: { type: 'string', description: 'The address it was sent to, masked' },
    state: { enum: ['pending', 'sent', 'paid', 'reversed'], description: 'paid: mined; sent: on its way; reversed: it failed, the money is back' },
    transaction: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
    created_at: TIMESTAMP,
  },
  ['id', 'amount', 'currency', 'address', 'state', 'transaction', 'error', 'created_at'],
);

const ADDRESS_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['address'],
  properties: { address: { type: 'string', maxLength: 100 } },
} as const;
const PAYOUT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: { amount: amount('How much to withdraw, in the asset’s currency (HOLON_X402_ASSET_CURRENCY)') },
} as const;

const HUMAN = { 401: failure('No key', 'unauthorized'), 403: failure('Not a human key', 'forbidden') } as const;

export const payoutOperations = defineOperations({
  address: {
    id: 'setPayoutAddress',
    method: 'put',
    path: '/v0/me/payout-address',
    tag: 'accounts',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Where your payouts go: an EVM address on the gateway’s chain',
    body: { schema: ADDRESS_BODY, example: { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } },
    responses: {
      200: { description: 'Set', schema: exact('The payout address', { payout_address: { type: 'string', description: 'Masked' } }, ['payout_address']) },
      400: failure('Not an address', 'invalid_request'),
      ...HUMAN,
    },
  },
  create: {
    id: 'createPayout',
    method: 'post',
    path: '/v0/me/payouts',
    tag: 'accounts',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Withdraw earnings in the asset’s currency to your payout address',
    body: { schema: PAYOUT_BODY, example: { amount: '5.00' } },
    responses: {
      201: { description: 'The payout, as it stands', schema: PAYOUT },
      400: failure('A bad amount, or no payout address yet', 'invalid_request'),
      402: failure('More than the account has available in that currency', 'insufficient_funds'),
      ...HUMAN,
      503: failure('Payouts are off on this gateway', 'payments_off'),
    },
  },
  list: {
    id: 'listPayouts',
    method: 'get',
    path: '/v0/me/payouts',
    tag: 'accounts',
    auth: ['human'],
    hostedOnly: true,
    summary: 'Your payouts, newest first',
    responses: {
      200: {
        description: 'Your payouts',
        schema: exact(
          'Your payouts, and whether this gateway pays out (and in which currency)',
          {
            payouts: { type: 'array', items: PAYOUT },
            currency: { type: ['string', 'null'], description: 'What payouts are in; null: this gateway pays nobody out' },
          },
          ['payouts', 'currency'],
        ),
      },
      ...HUMAN,
    },
  },
});

const readAddress = bodyReader<{ address: string }>(ADDRESS_BODY);
const readPayout = bodyReader<{ amount: string }>(PAYOUT_BODY);

const view = (p: Payout) => ({
  id: p.id,
  amount: formatAmount(p.amount),
  currency: p.currency,
  address: maskAddress(p.address),
  state: p.state,
  transaction: p.txHash,
  error: p.error,
  created_at: p.createdAt.toISOString(),
});

export function payoutRoutes(deps: { ctx: ServiceContext; hosted: boolean }): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;
  mount(router, payoutOperations.address, async (req, res) => {
    const p = requireKind(res, ['human'], 'set a payout address');
    const r = readAddress(req.body);
    r.done();
    res.json({ payout_address: maskAddress(await setPayoutAddress(ctx.db, p.account, r.body.address)) });
  });
  mount(router, payoutOperations.create, async (req, res) => {
    const p = requireKind(res, ['human'], 'withdraw');
    const r = readPayout(req.body);
    r.done();
    if (!ctx.payments) throw new HolonError('payments_off', 'payouts are off on this gateway (HOLON_X402_NETWORK is not set)');
    res.status(201).json(view(await requestPayout(ctx, p.account, parseAmount(r.body.amount, { allowZero: false }))));
  });
  mount(router, payoutOperations.list, async (_req, res) => {
    const p = requireKind(res, ['human'], 'list payouts');
    const currency = ctx.payments?.treasury ? ctx.payments.asset.currency : null;
    res.json({ payouts: (await listPayouts(ctx.db, p.account)).map(view), currency });
  });
  return router;
}
