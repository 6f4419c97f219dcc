/**
 * What a settled paid call tells its payer about the payment, in x402's words: the settlement response (`success`,
 * `transaction`, `network`, `payer`) with the gateway's own signed receipt in the `offer-receipt` extension (format
 * `jws`, EdDSA, with the key of /.well-known/jwks.json). REST sends it as `PAYMENT-RESPONSE`, MCP as
 * `_meta["x402/payment-response"]`.
 */
import { createJWSOfferReceiptIssuer } from '@x402/extensions/offer-receipt';
import type { Network, SettleResponse } from '@x402/core/types';
import type { ReceiptView } from '../receipts/store.js';
import type { SigningKey } from '../signing/keys.js';

export async function settlementResponse(key: SigningKey, resource: string, receipt: ReceiptView): Promise<SettleResponse | null> {
  const p = receipt.payment;
  if (!p) return null;
  const signer = { kid: key.kid, format: 'jws' as const, algorithm: 'EdDSA', sign: async (input: Uint8Array) => key.signBytes(input).toString('base64url') };
  const offerReceipt = p.transaction ? await createJWSOfferReceiptIssuer(key.kid, signer).issueReceipt(resource, p.payer, p.network, p.transaction) : null;
  return {
    success: p.transaction !== null || receipt.status === 'succeeded',
    transaction: p.transaction ?? '',
    network: p.network as Network,
    payer: p.payer,
    ...(offerReceipt ? { extensions: { 'offer-receipt': { info: { receipt: offerReceipt } } } } : {}),
  };
}
