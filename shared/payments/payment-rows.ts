/**
 * The `x402_payments` rows (migration 029): one per payment the gateway verified, keyed by `paymentKey`. What the
 * payer signed and the requirements it answered are kept sealed (AES-256-GCM under a key from the treasury key or
 * HOLON_FILE_SECRET: shared/crypto/seal.ts) until the payment is collected or dropped, then cleared: only they can
 * settle it, and nothing else about a payment is secret.
 */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Queryable } from '../db/connect.js';
import { isUniqueViolation } from '../db/unreachable.js';
import { type SealingKey, seal, unseal } from '../crypto/seal.js';

export type PaymentState = 'verified' | 'collecting' | 'collected' | 'failed' | 'void';

export interface PaymentRow {
  key: string;
  purpose: 'call' | 'topup';
  network: string;
  scheme: string;
  payer: string;
  /** Base units of the asset the payer authorized. */
  authorized: bigint;
  mandateId: string | null;
  account: string | null;
  idempotencyKey: string | null;
  state: PaymentState;
  collected: bigint | null;
  transaction: string | null;
  error: string | null;
}

interface Row {
  key: string;
  purpose: 'call' | 'topup';
  network: string;
  scheme: string;
  payer: string;
  authorized: string;
  mandate_id: string | null;
  account: string | null;
  idempotency_key: string | null;
  sealed: string | null;
  state: PaymentState;
  collected: string | null;
  transaction: string | null;
  error: string | null;
}

function fromRow(r: Row): PaymentRow {
  return {
    key: r.key,
    purpose: r.purpose,
    network: r.network,
    scheme: r.scheme,
    payer: r.payer,
    authorized: BigInt(r.authorized),
    mandateId: r.mandate_id,
    account: r.account,
    idempotencyKey: r.idempotency_key,
    state: r.state,
    collected: r.collected === null ? null : BigInt(r.collected),
    transaction: r.transaction,
    error: r.error,
  };
}

/** What settles a payment: the payer's signed payload and the requirements it was verified against. */
export interface PaymentClaim {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
}

function sealClaim(key: SealingKey, paymentKey: string, claim: PaymentClaim): string {
  const s = seal(key, paymentKey, JSON.stringify(claim));
  return JSON.stringify({ k: s.keyId, iv: s.iv.toString('base64'), c: s.ciphertext.toString('base64'), t: s.tag.toString('base64') });
}

export function unsealClaim(key: SealingKey, paymentKey: string, sealed: string): PaymentClaim {
  const o = JSON.parse(sealed) as { k: string; iv: string; c: string; t: string };
  const text = unseal(key, paymentKey, {
    keyId: o.k,
    iv: Buffer.from(o.iv, 'base64'),
    ciphertext: Buffer.from(o.c, 'base64'),
    tag: Buffer.from(o.t, 'base64'),
  });
  return JSON.parse(text) as PaymentClaim;
}

export interface NewPayment {
  key: string;
  purpose: 'call' | 'topup';
  network: string;
  scheme: string;
  payer: string;
  authorized: bigint;
  mandateId?: string;
  account?: string;
  idempotencyKey?: string;
  claim: PaymentClaim;
}

/** Records a verified payment; `taken` when its key (the same signed payload) or the payer's idempotency key is there. */
export async function insertPayment(db: Queryable, sealing: SealingKey, p: NewPayment): Promise<'inserted' | 'taken'> {
  try {
    await db.raw(
      `INSERT INTO x402_payments (key, purpose, network, scheme, payer, authorized, mandate_id, account, idempotency_key, sealed, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'verified')`,
      [
        p.key,
        p.purpose,
        p.network,
        p.scheme,
        p.payer,
        p.authorized.toString(),
        p.mandateId ?? null,
        p.account ?? null,
        p.idempotencyKey ?? null,
        sealClaim(sealing, p.key, p.claim),
      ],
    );
    return 'inserted';
  } catch (e) {
    if (isUniqueViolation(e, 'x402_payments_pkey') || isUniqueViolation(e, 'x402_payments_idempotency')) return 'taken';
    throw e;
  }
}

const COLUMNS = `key, purpose, network, scheme, payer, authorized::text AS authorized, mandate_id, account, idempotency_key, sealed, state, collected::text AS collected, transaction, error`;

export async function paymentByKey(db: Queryable, key: string): Promise<PaymentRow | null> {
  const r = await db.raw<{ rows: Row[] }>(`SELECT ${COLUMNS} FROM x402_payments WHERE key = ?`, [key]);
  return r.rows[0] ? fromRow(r.rows[0]) : null;
}

export async function paymentByIdempotencyKey(db: Queryable, payer: string, idempotencyKey: string): Promise<PaymentRow | null> {
  const r = await db.raw<{ rows: Row[] }>(`SELECT ${COLUMNS} FROM x402_payments WHERE payer = ? AND idempotency_key = ?`, [payer, idempotencyKey]);
  return r.rows[0] ? fromRow(r.rows[0]) : null;
}

/** The payment row of a paid call's mandate, locked (`FOR UPDATE`) in the caller's transaction: one collector at a time. */
export async function lockPaymentOfMandate(trx: Queryable, mandateId: string): Promise<{ row: PaymentRow; sealed: string | null } | null> {
  const r = await trx.raw<{ rows: Row[] }>(`SELECT ${COLUMNS} FROM x402_payments WHERE mandate_id = ? FOR UPDATE`, [mandateId]);
  return r.rows[0] ? { row: fromRow(r.rows[0]), sealed: r.rows[0].sealed } : null;
}

export async function lockPayment(trx: Queryable, key: string): Promise<{ row: PaymentRow; sealed: string | null } | null> {
  const r = await trx.raw<{ rows: Row[] }>(`SELECT ${COLUMNS} FROM x402_payments WHERE key = ? FOR UPDATE`, [key]);
  return r.rows[0] ? { row: fromRow(r.rows[0]), sealed: r.rows[0].sealed } : null;
}

/** Moves a payment on; the claim is cleared once it can no longer be settled (collected, failed, void). */
export async function updatePayment(
  db: Queryable,
  key: string,
  to: { state: PaymentState; collected?: bigint; transaction?: string | null; error?: string | null },
): Promise<void> {
  const ended = to.state !== 'collecting' && to.state !== 'verified';
  await db.raw(
    `UPDATE x402_payments SET state = ?, collected = COALESCE(?::numeric, collected), transaction = COALESCE(?, transaction), error = ?,
       sealed = CASE WHEN ? THEN NULL ELSE sealed END, updated_at = now() WHERE key = ?`,
    [to.state, to.collected === undefined ? null : to.collected.toString(), to.transaction ?? null, to.error ?? null, ended, key],
  );
}
