/**
 * A call paid per request, without an account (docs/payments.md): quoted (the agent, its worst case in the asset's
 * currency at the platform's rates, the x402 requirements: `upto` for the worst case, and `exact` when the worst case
 * is the price), then, with a payment, verified through the facilitator BEFORE anything is reserved; a verified payment
 * is recorded (once: the same signed payload is never taken twice), its mandate made, and the call admitted like any
 * other — its worst case reserved, run, checked, settled. Its payment is collected when it settles (collect.ts).
 */
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { createHash } from 'node:crypto';
import type { CallEngine } from '../calls/engine-types.js';
import type { Submitted } from '../calls/submit/types.js';
import { microsToUnits, unitsToMicros } from '../core/asset-units.js';
import type { ErrorCode } from '../core/errors.js';
import { ratesInto } from '../core/fx-table.js';
import type { Manifest } from '../core/manifest/types.js';
import { formatAmount, formatRate, MAX_AMOUNT } from '../core/money.js';
import { ownWorstCase, worstCase } from '../core/pricing.js';
import { saveMandate } from '../mandates/store.js';
import { loadReceiptTree, type ReceiptView } from '../receipts/store.js';
import type { ServiceContext } from '../context.js';
import { type Offer, paymentIdentifierOf, paymentRequired } from './offer.js';
import { paymentKey, payerOf } from './payment-key.js';
import { insertPayment, paymentByIdempotencyKey, paymentByKey, updatePayment } from './payment-rows.js';
import { paymentMandate } from './paid-mandate.js';
import type { PaymentRails } from './rails.js';

export interface PaidCallAsk {
  agent?: string;
  capability?: string;
  input: unknown;
  maxCost?: bigint;
  /** The URL paid for (`PaymentRequired.resource`). */
  resource: string;
}

/** What a paid call costs at most, in the agent's currency and in the asset's, and the rate between them. */
export interface Quote {
  manifest: Manifest;
  /** The worst case in micro-units of the asset's currency, and in the asset's base units (rounded up). */
  worst: bigint;
  units: bigint;
  agentWorst: { amount: string; currency: string };
  rate?: { from: string; to: string; rate: string };
  offer: Offer;
}

export type QuoteResult = { ok: true; quote: Quote } | { ok: false; code: ErrorCode; message: string };

/** A quote for an agent under no mandate yet: the agent named (or the best for a capability), its worst case. */
export function quotePaidCall(ctx: ServiceContext, rails: PaymentRails, ask: PaidCallAsk): QuoteResult {
  const agent = ask.agent !== undefined ? ctx.registry.resolve(ask.agent) : null;
  if (agent && !agent.ok) return { ok: false, code: agent.code, message: agent.message };
  const manifest = agent?.ok ? agent.agent.manifest : bestFor(ctx, ask.capability!);
  if (!manifest) return { ok: false, code: 'unknown_capability', message: `no listed agent implements ${ask.capability}` };
  if (manifest.downstream?.mode === 'passthrough')
    return {
      ok: false,
      code: 'payment_unsupported',
      message: `${manifest.id} passes its downstream calls' costs to its caller; call it under a mandate of an account (docs/payments.md)`,
    };
  const fx = ratesInto(rails.asset.currency, rails.fx);
  const wc = worstCase(manifest, { currency: rails.asset.currency, fx }, ask.maxCost);
  if (!wc.ok) return { ok: false, code: 'denied', message: wc.message };
  const units = microsToUnits(wc.total, rails.asset.decimals);
  const exact = manifest.pricing.model === 'per_run' && wc.total === wc.listed;
  if (!exact && !rails.schemes.has('upto'))
    return { ok: false, code: 'payment_unsupported', message: `${manifest.id} has no fixed price, and this gateway's facilitator does not settle x402's upto` };
  const currency = manifest.pricing.currency;
  const rate = currency !== rails.asset.currency && fx[currency] ? { from: currency, to: rails.asset.currency, rate: formatRate(fx[currency]!) } : undefined;
  return {
    ok: true,
    quote: {
      manifest,
      worst: wc.total,
      units,
      agentWorst: { amount: formatAmount(ownWorstCase(manifest.pricing)), currency },
      ...(rate ? { rate } : {}),
      offer: {
        resource: ask.resource,
        description: `${manifest.id}@${manifest.version}: at most ${formatAmount(wc.total)} ${rails.asset.currency}`,
        units,
        schemes: exact ? ['exact', 'upto'] : ['upto'],
        maxTimeoutSeconds: manifest.runtime.timeoutS + 60,
        discovery: { input: manifest.interface.input, output: manifest.interface.output },
        identified: true,
      },
    },
  };
}

/** The quote in words (a 402's body, an A2A payment request): the worst case in the agent's currency, in the asset's, and the rate. */
export function quoteWords(rails: PaymentRails, q: Quote) {
  return {
    agent: `${q.manifest.id}@${q.manifest.version}`,
    worst_case: { amount: q.agentWorst.amount, currency: q.agentWorst.currency },
    pay: {
      amount: formatUnits(q.units, rails.asset.decimals),
      currency: rails.asset.currency,
      units: q.units.toString(),
      asset: rails.asset.address,
      network: rails.network,
    },
    ...(q.rate ? { rate: q.rate } : {}),
  };
}

/** Base units of the asset as a decimal (`decimals` places). */
export const formatUnits = (units: bigint, decimals: number): string => {
  const s = units.toString().padStart(decimals + 1, '0');
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
};

/** The capability's implementer with the lowest worst case (no record is counted without a mandate to rank by). */
function bestFor(ctx: ServiceContext, capability: string): Manifest | null {
  const versions = ctx.registry.implementers(capability).map((v) => v.manifest);
  versions.sort((a, b) =>
    ownWorstCase(a.pricing) < ownWorstCase(b.pricing) ? -1 : ownWorstCase(a.pricing) > ownWorstCase(b.pricing) ? 1 : a.id < b.id ? -1 : 1,
  );
  return versions[0] ?? null;
}

export type PaidSubmission =
  | { kind: 'refused'; code: ErrorCode; message: string }
  | { kind: 'payment_invalid'; required: PaymentRequired; header: string; reason: string }
  | { kind: 'payment_replayed' }
  /** The payer's Idempotency-Key named an earlier paid call: answer as that call (its mandate's receipt). */
  | { kind: 'idempotent'; mandateId: string }
  | { kind: 'submitted'; submitted: Submitted; payer: string; scheme: string; quote: Quote };

/** Verify, record, mandate, admit. */
export async function submitPaidCall(
  engine: CallEngine,
  rails: PaymentRails,
  ask: PaidCallAsk & { idempotencyKey?: string; syncAnswer: boolean },
  payload: PaymentPayload,
): Promise<PaidSubmission> {
  const ctx = engine.resources;
  const q = quotePaidCall(ctx, rails, ask);
  if (!q.ok) return { kind: 'refused', code: q.code, message: q.message };
  // x402's payment-identifier is the payer's Idempotency-Key when the request sends no header (the header wins).
  const identified = paymentIdentifierOf(payload);
  if (!identified.ok) return { kind: 'refused', code: 'invalid_request', message: identified.message };
  const idempotencyKey = ask.idempotencyKey ?? identified.id ?? undefined;
  const { quote } = q;
  const { accepts } = await paymentRequired(rails, quote.offer);
  const requirements = rails.server.findMatchingRequirements(accepts, payload);
  const invalid = async (reason: string): Promise<PaidSubmission> => ({
    kind: 'payment_invalid',
    reason,
    ...(await paymentRequired(rails, quote.offer, reason)),
  });
  if (!requirements) return invalid('the payment does not answer any of the requirements offered (scheme, network, asset, amount, pay-to)');
  const key = paymentKey(payload);
  // A payment taken before is refused before the facilitator is asked (it would say only that it is used).
  const seen = await paymentByKey(ctx.db, key);
  if (seen)
    return seen.mandateId && idempotencyKey !== undefined && seen.idempotencyKey === idempotencyKey
      ? { kind: 'idempotent', mandateId: seen.mandateId }
      : { kind: 'payment_replayed' };
  const verified = await rails.server.verifyPayment(payload, requirements);
  if (!verified.isValid) return invalid(verified.invalidReason ?? verified.invalidMessage ?? 'the facilitator did not verify the payment');
  const payer = payerOf(payload, verified.payer);
  if (idempotencyKey !== undefined) {
    const earlier = await paymentByIdempotencyKey(ctx.db, payer, idempotencyKey);
    if (earlier?.mandateId) return { kind: 'idempotent', mandateId: earlier.mandateId };
  }
  const authorized = BigInt(requirements.amount);
  const mandate = paymentMandate(rails, {
    payer,
    name: `p-${createHash('sha256').update(key).digest('hex').slice(0, 24)}`,
    manifest: quote.manifest,
    budget: minOf(unitsToMicros(authorized, rails.asset.decimals), MAX_AMOUNT),
    expiresAt: ctx.now() + (quote.manifest.runtime.timeoutS + 3600) * 1000,
  });
  const recorded = await ctx.db
    .transaction(async (trx) => {
      await saveMandate(trx, mandate, ctx.signingKey);
      const inserted = await insertPayment(trx, rails.sealing, {
        key,
        purpose: 'call',
        network: rails.network,
        scheme: requirements.scheme,
        payer,
        authorized,
        mandateId: mandate.id,
        ...(idempotencyKey !== undefined ? { idempotencyKey: idempotencyKey } : {}),
        claim: { payload, requirements },
      });
      if (inserted === 'taken') throw new Taken();
      return true;
    })
    .catch((e) => {
      if (e instanceof Taken) return false;
      throw e;
    });
  if (!recorded) {
    // Another request with the same Idempotency-Key may have won the race: answer as it.
    const earlier = idempotencyKey !== undefined ? await paymentByIdempotencyKey(ctx.db, payer, idempotencyKey) : null;
    return earlier?.mandateId ? { kind: 'idempotent', mandateId: earlier.mandateId } : { kind: 'payment_replayed' };
  }
  const submitted = await engine.submit({
    mandateId: mandate.id,
    agent: `${quote.manifest.id}@${quote.manifest.version}`,
    input: ask.input,
    ...(ask.maxCost !== undefined ? { maxCost: ask.maxCost } : {}),
    syncAnswer: ask.syncAnswer,
  });
  // A refused call owes nothing: its payment is never submitted.
  if (submitted.kind !== 'queued') await updatePayment(ctx.db, key, { state: 'void' });
  return { kind: 'submitted', submitted, payer, scheme: requirements.scheme, quote };
}

class Taken extends Error {}

/** The receipt of the call a payment's mandate was issued for (null while it runs): what a replayed payer is answered. */
export async function paidCallReceipt(ctx: ServiceContext, mandateId: string): Promise<ReceiptView | null> {
  const row = (await ctx.db('receipts').where({ mandate_id: mandateId }).whereNull('parent_id').first('id')) as { id: string } | undefined;
  return row ? await loadReceiptTree(ctx.db, row.id) : null;
}

const minOf = (a: bigint, b: bigint) => (a < b ? a : b);
