/**
 * Idempotent calls (gateway.md §7): `POST /v0/calls` with an `Idempotency-Key`, per API key (the scope).
 *
 * The key is claimed in Postgres BEFORE anything runs: `INSERT … ON CONFLICT DO NOTHING` lets exactly one request
 * win, also when the same key reaches two API processes at the same instant. The winner submits the call and
 * records its id; everyone else reads the row:
 *   - a different request under the same key          → 422 (a key names one request)
 *   - no call id yet, or a call without a receipt yet  → 409 (still running)
 *   - a receipt `failed / gateway_restarted`, a claim marked interrupted, or a claim older than
 *     STALE_CLAIM_MS without a call (its API process died) → 409: the outcome is unknown, check GET /v0/receipts
 *     and send the call again with a new key
 *   - otherwise                                       → the original receipt, `replayed: true`, and a success's
 *     output while it is kept (read, not handed over: shared/calls/answer/outputs.ts), else `output: null` with `output_gone`
 * A key is never run twice. Keys are kept (they are small: no input, no output).
 */
import type { Queryable } from '../../db/connect.js';
import { canonicalJson, sha256Hex } from '../../core/canonical-json.js';

/** A claim with no call after this long was left by an API process that died mid-request. */
export const STALE_CLAIM_MS = 5 * 60_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

export function isIdempotencyKey(value: string): boolean {
  return KEY.test(value);
}

/** What identifies the request: every field of the body, canonically (key order does not matter). */
export function requestHash(body: unknown): string {
  return sha256Hex(canonicalJson(body));
}

export interface IdempotencyRow {
  scope: string;
  key: string;
  requestHash: string;
  callId: string | null;
  /** Set when the request was refused (denied, rejected_input, pending_approval…): its HTTP status and code. */
  refused: { status: number; code: string } | null;
  status: 'claimed' | 'answered' | 'interrupted';
  createdAt: Date;
}

export type Claim = { kind: 'claimed' } | { kind: 'existing'; row: IdempotencyRow };

/** A `call_idempotency` row as the drivers return it (shared/db/connect.ts). */
interface IdempotencyColumns {
  scope: string;
  key: string;
  request_hash: string;
  call_id: string | null;
  refused_status: number | null;
  refused_code: string | null;
  status: IdempotencyRow['status'];
  created_at: Date;
}

const idempotencyFromRow = (r: IdempotencyColumns): IdempotencyRow => ({
  scope: r.scope,
  key: r.key,
  requestHash: String(r.request_hash),
  callId: r.call_id ?? null,
  refused: r.refused_status === null || r.refused_status === undefined ? null : { status: Number(r.refused_status), code: String(r.refused_code) },
  status: r.status,
  createdAt: new Date(r.created_at),
});

export async function claimIdempotencyKey(db: Queryable, scope: string, key: string, hash: string): Promise<Claim> {
  const inserted = await db.raw<{ rows: unknown[] }>(
    `INSERT INTO call_idempotency (scope, key, request_hash) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING key`,
    [scope, key, hash],
  );
  if (inserted.rows.length === 1) return { kind: 'claimed' };
  const r: IdempotencyColumns = await db('call_idempotency').where({ scope, key }).first();
  return { kind: 'existing', row: idempotencyFromRow(r) };
}

/** What a key answers from now on: the call it made, and the refusal when the call was not run (held or refused). */
interface IdempotentAnswer {
  callId: string;
  refused?: { status: number; code: string };
}

export async function recordIdempotentCall(db: Queryable, scope: string, key: string, answer: IdempotentAnswer): Promise<void> {
  const { callId, refused } = answer;
  await db('call_idempotency')
    .where({ scope, key })
    .update({
      call_id: callId,
      status: 'answered',
      refused_status: refused?.status ?? null,
      refused_code: refused?.code ?? null,
    });
}

/** The request failed before any call existed (bad request, unknown mandate): the key may be used again. */
export async function releaseIdempotencyKey(db: Queryable, scope: string, key: string): Promise<void> {
  await db('call_idempotency').where({ scope, key }).whereNull('call_id').delete();
}

/** Restart recovery: the keys of calls closed as interrupted answer 409 from now on. */
export async function markInterrupted(db: Queryable, callIds: string[]): Promise<void> {
  if (callIds.length) await db('call_idempotency').whereIn('call_id', callIds).update({ status: 'interrupted' });
}
