/**
 * Reserving a call's worst case (gateway.md §1 step 4): the call row, the hold and the mandate's `reserved`, in
 * one transaction, hot rows last and in the global lock order (docs/ledger.md, "Lock order").
 */
import type { Manifest } from '../core/manifest/types.js';
import { formatAmount } from '../core/money.js';
import { ensureBalanceRow, reserveFromParentHold } from '../ledger/holds.js';
import { admitShared, reserveShared, type AdmittedCall } from '../ledger/money-functions.js';
import { readBalance } from '../ledger/accounts.js';
import type { ServiceContext } from '../context.js';
import { describeBudget, forgetMandate, loadMandate, type KnownMandate } from '../mandates/store.js';
import type { CallSubmission, Refusal } from './types.js';

/** What was short, thrown inside the transaction so that everything it wrote rolls back. */
class Shortfall extends Error {
  constructor(readonly what: 'budget_short' | 'balance_short' | 'approval_used' | 'revoked') {
    super(what);
  }
}

/**
 * Reserve the worst case: one transaction. The call row (and a redeemed grant) are written first; the two hot rows
 * — the mandate, then the payer's balance (docs/ledger.md, "Lock order") — are taken last, each by one conditional
 * UPDATE that checks what is left (`reserveShared`, one round trip). A call that redeems no grant and does not
 * reserve from a parent hold — the common case — does all of it in one statement (`admitShared`). Both the mandate's remaining budget and the
 * payer's available balance must cover the worst case. Returns a refusal saying what was short (explained with a
 * fresh read; everything is rolled back), or null once the call row, the hold and the mandate's `reserved` are
 * written.
 */
export interface Reservation {
  id: string;
  stored: KnownMandate;
  manifest: Manifest;
  worst: bigint;
  sub: CallSubmission;
  /** The approval the call redeems (marked used in the same transaction). */
  approvalId: string | undefined;
}

export async function reserve(ctx: ServiceContext, { id, stored, manifest, worst, sub, approvalId }: Reservation): Promise<Refusal | null> {
  const timeoutMs = manifest.runtime.timeoutS * 1000;
  const currency = stored.mandate.budget.currency;
  const d = sub.delegation;
  const payer = d ? d.payer : stored.mandate.issuer;
  await ensureBalanceRow(ctx.db, payer, currency);
  const row: AdmittedCall = {
    id,
    root_id: d ? d.rootId : id,
    parent_id: d ? d.parentCallId : null,
    mandate_id: stored.mandate.id,
    caller: d ? d.caller : stored.mandate.grantee,
    agent_id: manifest.id,
    agent_version: manifest.version,
    payer,
    currency,
    worst_case: worst.toString(),
    max_cost: sub.maxCost === undefined ? null : sub.maxCost.toString(),
    depth: stored.mandate.depth,
    delegated: d !== undefined,
    timeout_ms: timeoutMs,
    deadline_at: new Date(ctx.now() + timeoutMs + ctx.settings.queueGraceS * 1000),
    callback_url: sub.callbackUrl ?? null,
  };
  try {
    if (approvalId === undefined && d?.mode !== 'passthrough') {
      // The common case: the row and the reservation in one statement (migration 017).
      const outcome = await admitShared(ctx.db, row);
      if (outcome !== 'reserved') throw new Shortfall(outcome);
      return null;
    }
    await ctx.db.transaction(async (trx) => {
      if (approvalId !== undefined) {
        // A grant is redeemed once: the one transaction that reserves also marks it used.
        const used = await trx.raw<{ rows: unknown[] }>(
          `UPDATE approvals SET status = 'used', call_id = ? WHERE id = ? AND (status = 'approved' OR (status = 'used' AND call_id IS NULL AND ?)) RETURNING id`,
          [id, approvalId, sub.preApproved === approvalId],
        );
        if (used.rows.length === 0) throw new Shortfall('approval_used');
      }
      await trx('calls').insert({ ...row, status: 'queued', approval_id: approvalId ?? null });
      const outcome =
        d?.mode === 'passthrough'
          ? await reserveFromParentHold(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, parentHoldId: d.parentHoldId, amount: worst })
          : await reserveShared(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, account: payer, currency, amount: worst });
      if (outcome === 'parent_short') throw new Shortfall('budget_short');
      if (outcome !== 'reserved') throw new Shortfall(outcome);
    });
    return null;
  } catch (e) {
    if (!(e instanceof Shortfall)) throw e;
    const money = (v: bigint) => `${formatAmount(v)} ${currency}`;
    if (e.what === 'revoked') {
      // The row had the last word (migration 020): the cached document is forgotten, the next call reads it again.
      forgetMandate(ctx.db, stored.mandate.id);
      return { code: 'denied', status: 'denied', reasons: [`mandate ${stored.mandate.id} has been revoked`] };
    }
    if (e.what === 'approval_used') {
      return { code: 'approval_used', status: 'denied', reasons: [`approval ${approvalId} was already used`] };
    }
    if (e.what === 'budget_short') {
      const now = await loadMandate(ctx.db, stored.mandate.id);
      return {
        code: 'denied',
        status: 'denied',
        reasons: [`${now ? describeBudget(now) : `mandate ${stored.mandate.id} is gone`}; the call's worst case is ${money(worst)}`],
      };
    }
    const b = await readBalance(ctx.db, payer, currency);
    return {
      code: 'denied',
      status: 'denied',
      reasons: [`account ${payer} has ${money(b.available)} available; the call's worst case is ${money(worst)}`],
    };
  }
}

/** A delegated call refused before admission (no declared slot, a bad max_cost): its receipt, under the run. */
