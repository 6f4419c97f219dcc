/**
 * Reserving a call's worst case (gateway.md §1 step 4): the call row, the hold and the mandate's `reserved`, in
 * one transaction, hot rows last and in the global lock order (docs/ledger.md, "Lock order").
 */
import type { Manifest } from '../../core/manifest/types.js';
import { formatAmount } from '../../core/money.js';
import { ensureBalanceRow, reserveFromParentHold, reserveHold } from '../../ledger/holds.js';
import { admitAgain, admitCall, type AdmittedCall } from '../../ledger/money-functions.js';
import { HolonError } from '../../core/errors.js';
import { isDatabaseUnreachable, isUniqueViolation } from '../../db/unreachable.js';
import { callStatus, insertQueuedCall } from '../transitions.js';
import { readBalance } from '../../ledger/accounts.js';
import type { ServiceContext } from '../../context.js';
import { payingAccount } from '../../payments/paying-account.js';
import { describeBudget, forgetMandate, loadMandate, type KnownMandate } from '../../mandates/store.js';
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
 * UPDATE that checks what is left (`reserveHold`, one round trip). A call that redeems no grant and does not
 * reserve from a parent hold — the common case — does all of it in one statement (`admitCall`). Both the mandate's remaining budget and the
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
  /** This process runs it at once if it can be admitted `running` (the common path only: run/run-here.ts). */
  runHere?: boolean;
}

/** What admitting the row came to: reserved, or what was short (everything it wrote rolled back). */
type Outcome = 'reserved' | Shortfall['what'];

/** How many times an admission whose answer was lost is tried again (by its id) before the API answers 503. */
const CONFIRM_ATTEMPTS = 3;

/** What a reservation came to: the row's status (`running` only when asked and on the common path), or a refusal. */
export type Reserved = { status: 'queued' | 'running'; row: AdmittedCall } | { refusal: Refusal; status?: undefined };

export async function reserve(ctx: ServiceContext, r: Reservation): Promise<Reserved> {
  const row = admittedRow(ctx, r);
  await ensureBalanceRow(ctx.db, row.payer, row.currency);
  let outcome: Outcome;
  try {
    outcome = await admitRow(ctx, r, row, false);
  } catch (e) {
    // The statement's answer was lost (the connection cut after it was sent): it may have committed. Confirm by id.
    if (!isDatabaseUnreachable(e) && !isUniqueViolation(e, 'calls_pkey')) throw e;
    ctx.log.warn({ call: r.id, err: { message: (e as Error).message } }, 'admission answer lost; confirming the call by its id');
    outcome = await admitById(ctx, r, row);
  }
  if (outcome !== 'reserved') return { refusal: await explainShortfall(ctx, r, row, outcome) };
  return { status: row.status ?? 'queued', row };
}

/** The common path: no grant redeemed, not out of a parent's hold — the row and its reservation in one statement. */
const onePath = ({ approvalId, sub }: Reservation): boolean => approvalId === undefined && sub.delegation?.mode !== 'passthrough';

function admittedRow(ctx: ServiceContext, r: Reservation): AdmittedCall {
  const { id, stored, manifest, worst, sub } = r;
  const timeoutMs = manifest.runtime.timeoutS * 1000;
  const d = sub.delegation;
  return {
    id,
    root_id: d ? d.rootId : id,
    parent_id: d ? d.parentCallId : null,
    mandate_id: stored.mandate.id,
    caller: d ? d.caller : stored.mandate.grantee,
    agent_id: manifest.id,
    agent_version: manifest.version,
    payer: d ? d.payer : payingAccount(ctx, stored.mandate.issuer),
    currency: stored.mandate.budget.currency,
    worst_case: worst.toString(),
    max_cost: sub.maxCost === undefined ? null : sub.maxCost.toString(),
    depth: stored.mandate.depth,
    delegated: d !== undefined,
    timeout_ms: timeoutMs,
    deadline_at: new Date(ctx.now() + timeoutMs + ctx.settings.queueGraceS * 1000),
    callback_url: sub.callbackUrl ?? null,
    ...(r.runHere && onePath(r) ? { status: 'running' as const } : {}),
  };
}

/**
 * The call row and its reservation, in one transaction. `again`: an earlier try's outcome is unknown, so the common
 * path goes through the batch function, which answers `reserved` for a row it finds (shared/calls/sql/holon_admit_batch.sql).
 */
async function admitRow(ctx: ServiceContext, r: Reservation, row: AdmittedCall, again: boolean): Promise<Outcome> {
  const { id, stored, worst, sub, approvalId } = r;
  const d = sub.delegation;
  if (onePath(r)) {
    // A top-level call with budget leases on: carved from this process's lease (shared/ledger/leases/).
    if (!again && ctx.leases && leasable(ctx, r, row)) return ctx.leases.admit(row);
    // The common case: the row and the reservation in one statement (shared/calls/sql/holon_admit_one.sql).
    return again ? admitAgain(ctx.db, row) : admitCall(ctx.db, row);
  }
  try {
    await ctx.db.transaction(async (trx) => {
      if (approvalId !== undefined) {
        // A grant is redeemed once: the one transaction that reserves also marks it used.
        const used = await trx.raw<{ rows: unknown[] }>(
          `UPDATE approvals SET status = 'used', call_id = ? WHERE id = ? AND (status = 'approved' OR (status = 'used' AND call_id IS NULL AND ?)) RETURNING id`,
          [id, approvalId, sub.preApproved === approvalId],
        );
        if (used.rows.length === 0) throw new Shortfall('approval_used');
      }
      await insertQueuedCall(trx, row, approvalId);
      const outcome =
        d?.mode === 'passthrough'
          ? await reserveFromParentHold(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, parentHoldId: d.parentHoldId, amount: worst })
          : await reserveHold(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, account: row.payer, currency: row.currency, amount: worst });
      if (outcome === 'parent_short') throw new Shortfall('budget_short');
      if (outcome !== 'reserved') throw new Shortfall(outcome);
    });
    return 'reserved';
  } catch (e) {
    if (e instanceof Shortfall) return e.what;
    throw e;
  }
}

/**
 * Whether a call may be carved from a budget lease (docs/ledger.md, "Budget leases"): a top-level call under a root
 * mandate, paid from an account's balance (a call paid from outside stays on the per-call path), whose agent does
 * not pay its children out of its own hold (a passthrough child cuts from its parent's hold, which a lease's
 * `carved` would then no longer match).
 */
function leasable(ctx: ServiceContext, { stored, manifest, sub }: Reservation, row: AdmittedCall): boolean {
  if (sub.delegation || stored.mandate.depth !== 0 || manifest.downstream?.mode === 'passthrough') return false;
  return row.payer !== ctx.payments?.externalAccount && !row.payer.startsWith('external:');
}

/**
 * Admission idempotent by call id: an admission whose answer was lost is confirmed, not guessed. The row exists only
 * if an admission of this call committed (it is written in the reserving transaction), so a row found is `reserved`;
 * otherwise the call is admitted again under the same id — and a try still in flight on the lost connection is
 * waited for (its locks, or the row's unique key) and then found. Answers 503 `database_unavailable`, naming the call,
 * when the database stays out of reach.
 */
async function admitById(ctx: ServiceContext, r: Reservation, row: AdmittedCall): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (await callStatus(ctx.db, r.id)) return 'reserved';
      const outcome = await admitRow(ctx, r, row, true).catch(async (e) => {
        if (isUniqueViolation(e, 'calls_pkey') && (await callStatus(ctx.db, r.id))) return 'reserved' as const;
        throw e;
      });
      // Short because the lost try took the budget, the balance or the grant: it committed meanwhile.
      if (outcome !== 'reserved' && (await callStatus(ctx.db, r.id))) return 'reserved';
      return outcome;
    } catch (e) {
      if (!isDatabaseUnreachable(e)) throw e;
      if (attempt >= CONFIRM_ATTEMPTS) {
        throw new HolonError(
          'database_unavailable',
          `the database could not be reached to confirm call ${r.id}; GET /v0/calls/${r.id} tells whether it was admitted (a call that was not is never charged)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** A shortfall in words, read fresh (the outcome rolled back whatever it wrote). */
async function explainShortfall(ctx: ServiceContext, { stored, worst, approvalId }: Reservation, row: AdmittedCall, what: Shortfall['what']): Promise<Refusal> {
  const money = (v: bigint) => `${formatAmount(v)} ${row.currency}`;
  if (what === 'revoked') {
    // The row had the last word (shared/calls/sql/holon_admit_one.sql): the cached document is forgotten, the next call reads it again.
    forgetMandate(ctx.db, stored.mandate.id);
    return { code: 'denied', status: 'denied', reasons: [`mandate ${stored.mandate.id} has been revoked`] };
  }
  if (what === 'approval_used') {
    return { code: 'approval_used', status: 'denied', reasons: [`approval ${approvalId} was already used`] };
  }
  if (what === 'budget_short') {
    const now = await loadMandate(ctx.db, stored.mandate.id);
    return {
      code: 'denied',
      status: 'denied',
      reasons: [`${now ? describeBudget(now) : `mandate ${stored.mandate.id} is gone`}; the call's worst case is ${money(worst)}`],
    };
  }
  const b = await readBalance(ctx.db, row.payer, row.currency);
  return {
    code: 'denied',
    status: 'denied',
    reasons: [`account ${row.payer} has ${money(b.available)} available; the call's worst case is ${money(worst)}`],
  };
}

/** A delegated call refused before admission (no declared slot, a bad max_cost): its receipt, under the run. */
