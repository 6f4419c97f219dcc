/**
 * A payment's identity: the SHA-256 of the canonical JSON of what the payer signed (the scheme's `payload`), so the
 * same authorization sent twice — as a replay, or inside another request — is the same key and is taken once.
 */
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { canonicalJson } from '../core/canonical-json.js';

export function paymentKey(payload: PaymentPayload): string {
  return `x402_${createHash('sha256').update(canonicalJson(payload.payload)).digest('hex')}`;
}

/** The payer's wallet as the payload names it (EIP-3009 `authorization.from`, Permit2 `permit2Authorization.from`), lower case. */
export function payerOf(payload: PaymentPayload, verified: string | undefined): string {
  const p = payload.payload as { authorization?: { from?: unknown }; permit2Authorization?: { from?: unknown } };
  const named = verified ?? p.authorization?.from ?? p.permit2Authorization?.from;
  return typeof named === 'string' ? named.toLowerCase() : 'unknown';
}
