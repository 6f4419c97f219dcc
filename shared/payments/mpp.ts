/**
 * MPP (the IETF draft "Payment" HTTP authentication scheme) on the same paid calls, through `mppx` (docs/payments.md,
 * "MPP"): a 402 that offers x402's `exact` also carries `WWW-Authenticate: Payment` with mppx's native EVM `charge`
 * challenge (intent `charge`: the asset, the amount, the recipient, the chain), HMAC-bound so any API process verifies
 * it without state. The payer's `Authorization: Payment` credential is an EIP-3009 authorization of exactly that
 * amount — the same thing x402's `exact` scheme carries — so it is turned into that x402 payment and goes through the
 * one path every paid call takes (verified by the facilitator, recorded once, collected before crediting). The answer
 * carries `Payment-Receipt` (mppx's receipt: the method and the transaction).
 */
import { Challenge, Credential, Receipt } from 'mppx';
import { charge } from 'mppx/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { createHmac } from 'node:crypto';
import { formatUnits } from 'viem';
import type { PaymentRails } from './rails.js';

const CHALLENGE_TTL_S = 300;

/** The realm challenges are bound to: this gateway's origin. */
export interface MppContext {
  rails: PaymentRails;
  realm: string;
}

/** The HMAC key of challenge ids: derived from the payments' sealing key, the same in every process. */
const secretOf = (rails: PaymentRails) => createHmac('sha256', rails.sealing.key).update('holon mpp challenge').digest('base64url');

const chainIdOf = (rails: PaymentRails) => Number(rails.network.split(':')[1]);

/** `WWW-Authenticate: Payment …` for an `exact` requirement (a fixed price), or null when there is none to offer. */
export function mppChallenge(m: MppContext, exact: PaymentRequirements | undefined, description: string, now = Date.now()): string | null {
  if (!exact) return null;
  const challenge = Challenge.fromMethod(charge, {
    secretKey: secretOf(m.rails),
    realm: m.realm,
    description,
    expires: new Date(now + CHALLENGE_TTL_S * 1000).toISOString(),
    request: {
      // In whole tokens: mppx turns it into base units with `decimals`.
      amount: formatUnits(BigInt(exact.amount), m.rails.asset.decimals),
      chainId: chainIdOf(m.rails),
      currency: m.rails.asset.address,
      decimals: m.rails.asset.decimals,
      recipient: m.rails.payTo,
      credentialTypes: ['authorization'],
      description,
    },
  });
  return Challenge.serialize(challenge);
}

interface AuthorizationPayload {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
  type: 'authorization';
}

export type MppPayment = { ok: true; payload: PaymentPayload } | { ok: false; malformed: boolean; message: string };

/**
 * The x402 payment an `Authorization: Payment` credential stands for, when its challenge is one of ours (HMAC, realm,
 * not expired) and asks exactly what `exact` asks now; otherwise why not.
 */
export function paymentOfCredential(m: MppContext, header: string, exact: PaymentRequirements | undefined, now = Date.now()): MppPayment {
  let credential: ReturnType<typeof Credential.deserialize<AuthorizationPayload>>;
  try {
    credential = Credential.deserialize<AuthorizationPayload>(header);
  } catch {
    return { ok: false, malformed: true, message: 'Authorization: Payment is not an MPP credential' };
  }
  const { challenge, payload } = credential;
  if (!Challenge.verify(challenge, { secretKey: secretOf(m.rails) }) || challenge.realm !== m.realm)
    return { ok: false, malformed: false, message: 'the credential answers no challenge of this gateway' };
  if (challenge.expires && Date.parse(challenge.expires) < now) return { ok: false, malformed: false, message: 'the challenge has expired: ask again' };
  if (!exact) return { ok: false, malformed: false, message: 'this call has no fixed price: pay it with x402 (upto)' };
  const request = challenge.request as { amount?: string; recipient?: string; currency?: string };
  if (
    challenge.method !== 'evm' ||
    challenge.intent !== 'charge' ||
    request.amount !== exact.amount ||
    request.recipient?.toLowerCase() !== exact.payTo.toLowerCase()
  )
    return { ok: false, malformed: false, message: 'the credential answers another payment than this call’s' };
  if (payload?.type !== 'authorization' || typeof payload.signature !== 'string')
    return { ok: false, malformed: false, message: 'the credential carries no EIP-3009 authorization' };
  const { signature, type: _type, ...authorization } = payload;
  return { ok: true, payload: { x402Version: 2, accepted: exact, payload: { authorization, signature } } };
}

/** `Payment-Receipt` for a collected payment. */
export function mppReceipt(transaction: string, at = new Date()): string {
  return Receipt.serialize(Receipt.from({ method: 'evm', reference: transaction, status: 'success', timestamp: at.toISOString() }));
}
