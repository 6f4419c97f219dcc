/**
 * What the gateway asks a payer for (x402 v2, through @x402/core's resource server): the requirements of an amount
 * of the asset — `exact` for a fixed price, `upto` for a worst case of which only the billed part is settled — and
 * the `PaymentRequired` object a 402 carries (base64 JSON in `PAYMENT-REQUIRED`, or an MCP tool result's
 * `structuredContent`), with the `bazaar` extension describing the agent's input and output when there is one.
 */
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader } from '@x402/core/http';
import type { JsonSchema } from '../core/json.js';
import type { PaymentRails } from './rails.js';

export interface Offer {
  /** The URL the payment is for. */
  resource: string;
  description: string;
  /** Base units of the asset: the price (`exact`) or the worst case (`upto`). */
  units: bigint;
  /** The schemes offered, in order of preference; only those the rails settle are kept. */
  schemes: ReadonlyArray<'exact' | 'upto'>;
  maxTimeoutSeconds: number;
  /** The agent's interface, for the bazaar extension (discovery). */
  discovery?: { input: JsonSchema; output: JsonSchema };
  /** Declares x402's `payment-identifier` extension (optional): a payer's id there replays like an Idempotency-Key. */
  identified?: boolean;
}

async function requirementsFor(rails: PaymentRails, offer: Offer): Promise<PaymentRequirements[]> {
  const schemes = offer.schemes.filter((s) => rails.schemes.has(s));
  const price = { asset: rails.asset.address, amount: offer.units.toString(), extra: { name: rails.asset.name, version: rails.asset.version } };
  return rails.server.buildPaymentRequirementsFromOptions(
    schemes.map((scheme) => ({ scheme, payTo: rails.payTo, price, network: rails.network, maxTimeoutSeconds: offer.maxTimeoutSeconds })),
    {},
  );
}

export async function paymentRequired(
  rails: PaymentRails,
  offer: Offer,
  error?: string,
): Promise<{ required: PaymentRequired; header: string; accepts: PaymentRequirements[] }> {
  const accepts = await requirementsFor(rails, offer);
  const extensions = {
    ...(offer.discovery
      ? declareDiscoveryExtension({
          bodyType: 'json',
          inputSchema: offer.discovery.input as Record<string, unknown>,
          output: { schema: offer.discovery.output as Record<string, unknown> },
        })
      : {}),
    ...(offer.identified ? { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) } : {}),
  };
  const required = await rails.server.createPaymentRequiredResponse(
    accepts,
    { url: offer.resource, description: offer.description, mimeType: 'application/json' },
    error,
    Object.keys(extensions).length > 0 ? extensions : undefined,
  );
  return { required, header: encodePaymentRequiredHeader(required), accepts };
}

/** The payment a `PAYMENT-SIGNATURE` header carries, or why it is not one. */
export function readPaymentHeader(value: string): { ok: true; payload: PaymentPayload } | { ok: false; message: string } {
  try {
    const payload = decodePaymentSignatureHeader(value);
    if (!payload || typeof payload !== 'object' || payload.x402Version !== 2 || !payload.accepted || typeof payload.payload !== 'object')
      return { ok: false, message: 'PAYMENT-SIGNATURE must be an x402 version 2 payment payload (base64 JSON)' };
    return { ok: true, payload };
  } catch {
    return { ok: false, message: 'PAYMENT-SIGNATURE is not base64 JSON' };
  }
}

/** The id a payment names in x402's `payment-identifier` extension (null when none), or why it is not one. */
export function paymentIdentifierOf(payload: PaymentPayload): { ok: true; id: string | null } | { ok: false; message: string } {
  const { id, validation } = extractAndValidatePaymentIdentifier(payload);
  if (!validation.valid)
    return {
      ok: false,
      message: `the payment's payment-identifier is not valid: ${(validation.errors ?? []).join('; ') || 'see x402’s payment-identifier extension'}`,
    };
  return { ok: true, id };
}

/** Whether a value is an x402 version 2 payment payload (as an MCP `_meta` or an A2A message's metadata carries it). */
export const isPaymentPayload = (v: unknown): v is PaymentPayload =>
  typeof v === 'object' && v !== null && (v as { x402Version?: unknown }).x402Version === 2 && typeof (v as { payload?: unknown }).payload === 'object';
