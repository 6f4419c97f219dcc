/**
 * Topping up an account from outside (docs/payments.md): `exact` for the amount asked, verified, then settled on chain
 * at once, and only then credited — the entry `x402:<network>:<transaction>` (external:x402:<network> → the account,
 * in the asset's currency), idempotent on the transaction. The payment row remembers each step, so a top-up whose
 * process died between the transfer and the entry is credited by `finishTopups` (at start-up and by the settler's
 * sweep), once: the chain says whether its authorization was used, and by which transaction.
 */
import type { PaymentPayload } from '@x402/core/types';
import { SettleError } from '@x402/core/types';
import type { ServiceContext } from '../context.js';
import { microsToUnits, unitsToMicros } from '../core/asset-units.js';
import { ensureAccount, readBalance, type Balance } from '../ledger/accounts.js';
import { ensureBalanceRow } from '../ledger/holds.js';
import { postEntry } from '../ledger/entries.js';
import { authorizationState } from './authorization-state.js';
import { type Offer, paymentRequired } from './offer.js';
import { paymentKey, payerOf } from './payment-key.js';
import { insertPayment, lockPayment, paymentByKey, unsealClaim, updatePayment } from './payment-rows.js';
import type { PaymentRails } from './rails.js';

const TOPUP_KIND = 'x402-topup';

export function topupOffer(rails: PaymentRails, amount: bigint, resource: string): Offer {
  return {
    resource,
    description: `top up your Holon account with ${amount} micro-units of ${rails.asset.currency}`,
    units: microsToUnits(amount, rails.asset.decimals),
    schemes: ['exact'],
    maxTimeoutSeconds: 300,
  };
}

export type TopUp =
  | { kind: 'payment_invalid'; header: string; reason: string }
  | { kind: 'payment_replayed' }
  | { kind: 'payment_failed'; reason: string }
  | { kind: 'credited'; entry: { id: bigint; key: string }; transaction: string; balance: Balance; payer: string };

/** Verify, record, settle, credit. */
export async function topUp(
  ctx: ServiceContext,
  rails: PaymentRails,
  ask: { account: string; amount: bigint; resource: string },
  payload: PaymentPayload,
): Promise<TopUp> {
  const offer = topupOffer(rails, ask.amount, ask.resource);
  const { accepts } = await paymentRequired(rails, offer);
  const invalid = async (reason: string): Promise<TopUp> => ({ kind: 'payment_invalid', reason, header: (await paymentRequired(rails, offer, reason)).header });
  const requirements = rails.server.findMatchingRequirements(accepts, payload);
  if (!requirements) return invalid('the payment does not answer the requirement offered (exact, network, asset, amount, pay-to)');
  if (await paymentByKey(ctx.db, paymentKey(payload))) return { kind: 'payment_replayed' };
  const verified = await rails.server.verifyPayment(payload, requirements);
  if (!verified.isValid) return invalid(verified.invalidReason ?? verified.invalidMessage ?? 'the facilitator did not verify the payment');
  const key = paymentKey(payload);
  const inserted = await insertPayment(ctx.db, rails.sealing, {
    key,
    purpose: 'topup',
    network: rails.network,
    scheme: requirements.scheme,
    payer: payerOf(payload, verified.payer),
    authorized: BigInt(requirements.amount),
    account: ask.account,
    claim: { payload, requirements },
  });
  if (inserted === 'taken') return { kind: 'payment_replayed' };
  return collectTopup(ctx, rails, key, ask.amount);
}

/** The credit of a collected top-up: the chain's account pays the account, keyed by the transaction. */
async function credit(ctx: ServiceContext, rails: PaymentRails, t: { account: string; amount: bigint; transaction: string }) {
  const { account, amount, transaction } = t;
  await ensureAccount(ctx.db, account);
  await ensureBalanceRow(ctx.db, account, rails.asset.currency);
  await ensureBalanceRow(ctx.db, rails.externalAccount, rails.asset.currency);
  const key = `x402:${rails.network}:${transaction}`;
  const entry = await postEntry(ctx.db, {
    key,
    kind: TOPUP_KIND,
    lines: [
      { account: rails.externalAccount, currency: rails.asset.currency, amount: -amount },
      { account, currency: rails.asset.currency, amount },
    ],
  });
  return { id: entry.id, key };
}

/**
 * Settles a recorded top-up and credits it, or finds that it was settled already. One process at a time (the row is
 * locked); the row is `collecting` from before the facilitator is asked, so a lost answer is never a lost credit.
 */
async function collectTopup(ctx: ServiceContext, rails: PaymentRails, key: string, amount: bigint): Promise<TopUp> {
  const done = await ctx.db.transaction(async (trx) => {
    const locked = await lockPayment(trx, key);
    if (!locked) return { kind: 'payment_failed', reason: 'no such payment' } as const;
    const { row, sealed } = locked;
    if (row.state === 'collected') return { kind: 'settled', row, transaction: row.transaction! } as const;
    if (row.state !== 'verified' && row.state !== 'collecting')
      return { kind: 'payment_failed', reason: row.error ?? 'the payment was not collected' } as const;
    if (!sealed) return { kind: 'payment_failed', reason: 'the payment can no longer be settled' } as const;
    const claim = unsealClaim(rails.sealing, key, sealed);
    if (row.state === 'collecting') {
      const seen = await authorizationState(rails.chain, rails.asset.address, claim.payload);
      if (seen.used === true && seen.transaction) {
        await updatePayment(trx, key, { state: 'collected', collected: row.authorized, transaction: seen.transaction });
        return { kind: 'settled', row, transaction: seen.transaction } as const;
      }
    } else await updatePayment(trx, key, { state: 'collecting' });
    try {
      const result = await rails.server.settlePayment(claim.payload, claim.requirements);
      if (!result.success || !result.transaction) {
        const reason = result.errorReason ?? result.errorMessage ?? 'the facilitator did not settle the payment';
        await updatePayment(trx, key, { state: 'failed', error: reason });
        return { kind: 'payment_failed', reason } as const;
      }
      await updatePayment(trx, key, { state: 'collected', collected: row.authorized, transaction: result.transaction });
      return { kind: 'settled', row, transaction: result.transaction } as const;
    } catch (e) {
      if (!(e instanceof SettleError)) return { kind: 'retry', error: e as Error } as const;
      await updatePayment(trx, key, { state: 'failed', error: e.message });
      return { kind: 'payment_failed', reason: e.message } as const;
    }
  });
  if (done.kind === 'retry') throw done.error;
  if (done.kind === 'payment_failed') return done;
  const entry = await credit(ctx, rails, { account: done.row.account!, amount, transaction: done.transaction });
  return {
    kind: 'credited',
    entry,
    transaction: done.transaction,
    balance: await readBalance(ctx.db, done.row.account!, rails.asset.currency),
    payer: done.row.payer,
  };
}

/** Top-ups collected but not credited (a process died in between), or still `collecting`: finished now. */
export async function finishTopups(ctx: ServiceContext): Promise<number> {
  const rails = ctx.payments;
  if (!rails) return 0;
  // A collected top-up is credited right after its transfer: one still uncredited is at most a day old.
  const rows = (await ctx
    .db('x402_payments')
    .where({ purpose: 'topup' })
    .where((q) =>
      q.where({ state: 'collecting' }).orWhere((c) => c.where({ state: 'collected' }).where('updated_at', '>', ctx.db.raw(`now() - interval '1 day'`))),
    )
    .select('key', 'authorized', 'transaction', 'state')) as Array<{
    key: string;
    authorized: string;
    transaction: string | null;
    state: string;
  }>;
  let finished = 0;
  for (const r of rows) {
    if (
      r.state === 'collected' &&
      r.transaction &&
      (await ctx
        .db('journal_entries')
        .where({ key: `x402:${rails.network}:${r.transaction}` })
        .first('id'))
    )
      continue;
    const amount = unitsToMicros(BigInt(r.authorized), rails.asset.decimals);
    const out = await collectTopup(ctx, rails, r.key, amount).catch(() => null);
    if (out?.kind === 'credited') finished++;
  }
  return finished;
}
