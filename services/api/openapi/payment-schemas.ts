/**
 * The answers of payments from outside (docs/payments.md): the 402 a paid call or a top-up answers before it is paid
 * (problem+json, beside the `PAYMENT-REQUIRED` header), and a top-up's credit.
 */
import type { JsonSchema } from './operations.js';
import { AMOUNT, BALANCE, ERROR, ERROR_BODY, FX_RATE } from './schemas.js';

const PAY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency', 'units', 'asset', 'network'],
  properties: {
    amount: { type: 'string', description: 'At most this much of the asset, in whole tokens' },
    currency: { type: 'string', description: 'The currency one whole token counts in' },
    units: { type: 'string', pattern: '^[0-9]+$', description: 'The same, in the token’s base units' },
    asset: { type: 'string', description: 'The ERC-20 token' },
    network: { type: 'string', description: 'The chain, CAIP-2' },
  },
};

const QUOTE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pay'],
  properties: {
    agent: { type: 'string', description: 'The agent and version the payment is for' },
    worst_case: {
      type: 'object',
      additionalProperties: false,
      required: ['amount', 'currency'],
      description: 'The agent’s own worst case, in its currency',
      properties: { amount: AMOUNT, currency: { type: 'string' } },
    },
    pay: PAY,
    rate: FX_RATE,
  },
};

/** RFC 9457 problem details, with the error's code and what to pay. */
const PAYMENT_REQUIRED_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'title', 'status', 'detail', 'error', 'quote'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { const: 402 },
    detail: { type: 'string', description: 'What to do, in words' },
    error: ERROR_BODY,
    quote: QUOTE,
  },
};

export const PAYMENT_REQUIRED_RESPONSE = {
  description:
    'Pay for it: `PAYMENT-REQUIRED` (base64 JSON, x402 version 2) says what to sign; send the same request again with `PAYMENT-SIGNATURE` (docs/payments.md). A payment that was not accepted is asked for again; one that could not be collected is an error (`payment_failed`)',
  schema: { oneOf: [PAYMENT_REQUIRED_BODY, ERROR] },
  codes: ['payment_required', 'payment_invalid', 'payment_failed'],
  contentType: 'application/problem+json',
  headers: {
    'PAYMENT-REQUIRED': 'The x402 PaymentRequired object, base64 JSON',
    'WWW-Authenticate': 'For a fixed price, MPP’s `Payment` challenge (method `evm`, intent `charge`): answer it with `Authorization: Payment`',
  },
} as const;

export const TOPUP_CREDITED: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['entry', 'transaction', 'payer', 'balance'],
  properties: {
    entry: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'key', 'amount', 'currency'],
      properties: { id: { type: 'string' }, key: { type: 'string', examples: ['x402:eip155:8453:0xab…'] }, amount: AMOUNT, currency: { type: 'string' } },
    },
    transaction: { type: 'string', description: 'The transfer that paid it' },
    payer: { type: 'string', description: 'The paying wallet' },
    balance: BALANCE,
  },
};
