/**
 * A refused request still gets its receipt (DESIGN.md §3.6): unknown mandate or agent, denied, rejected input — and
 * so does a call held for approval. The receipt is written, read back as a tree, and answered with the outcome:
 * `refuse` a refusal (its code), `holdForApproval` the held call (its approval). A refused request never has children:
 * the receipt answered is the one written, not read back.
 */
import { HolonError } from '../../core/errors.js';
import type { ServiceContext } from '../../context.js';
import { newReceiptId } from '../ids.js';
import { loadMandate, type KnownMandate } from '../../mandates/store.js';
import { signAndLog } from '../../receipts/log.js';
import { insertedReceiptView, receiptRow, type ReceiptStatus, type ReceiptView } from '../../receipts/store.js';
import { approvalView, loadApproval } from './approvals.js';
import type { Delegation, Held, Refusal, Refused } from './types.js';

/**
 * Whose request it was: the receipt's id, the mandate (when it exists), the agent named, the worst case reserved,
 * and — for a request whose mandate does not exist — the account whose key sent it, who alone reads the receipt
 * (besides the operator; shared/receipts/store.ts `ReceiptOwner`).
 */
export interface RefusedRequest {
  id: string;
  stored: KnownMandate | null;
  agent: string | null;
  worst: bigint | null;
  delegation?: Delegation | undefined;
  requester?: string | undefined;
}

interface ReceiptOutcome {
  status: ReceiptStatus;
  /** For the calls metric: the refusal's code, or `pending_approval`. */
  metricCode: string;
  errorCode?: string;
  reasons: string[];
  approvalId?: string;
}

/**
 * The receipt, signed and appended to the log in the transaction that writes it (shared/receipts/log.ts): its time
 * is the transaction's, read first, so that it is signed before it is written.
 */
async function writeReceipt(ctx: ServiceContext, req: RefusedRequest, o: ReceiptOutcome): Promise<ReceiptView> {
  const { id, stored, agent, delegation: d } = req;
  const values = receiptRow({
    id,
    parentId: d?.parentCallId ?? null,
    mandateId: stored?.mandate.id ?? null,
    caller: d?.caller ?? stored?.mandate.grantee ?? null,
    agent,
    status: o.status,
    errorCode: o.errorCode ?? null,
    reasons: o.reasons,
    worstCase: req.worst,
    currency: stored?.mandate.budget.currency ?? null,
    payer: d?.payer ?? stored?.mandate.issuer ?? null,
    approvalId: o.approvalId ?? null,
    // A receipt with a mandate is its mandate's: the requester only owns one with none.
    requester: stored ? null : (req.requester ?? null),
  });
  const [receipt] = await ctx.db.transaction(async (trx) => {
    const at = new Date(((await trx.raw('SELECT now() AS at')) as { rows: Array<{ at: Date | string }> }).rows[0]!.at);
    return signAndLog(trx, ctx.signingKey, [insertedReceiptView(values, at)], async ([signature]) => {
      await trx('receipts').insert({ ...values, signature: signature! });
    });
  });
  // The code of a refusal is always the gateway's own; the agent is named only when it is one the registry lists.
  const named = agent?.split('@')[0];
  ctx.metrics?.calls.inc({ status: o.status, error_code: o.metricCode, agent: named && ctx.registry.versions(named).length > 0 ? named : 'none' });
  return receipt!;
}

export async function refuse(ctx: ServiceContext, req: RefusedRequest, r: Refusal): Promise<Refused> {
  const receipt = await writeReceipt(ctx, req, {
    status: r.status,
    metricCode: r.code,
    reasons: r.reasons,
    ...(r.errorCode ? { errorCode: r.errorCode } : {}),
  });
  return { kind: 'refused', code: r.code, message: r.reasons[0] ?? r.code, receipt, ...(r.problems ? { problems: r.problems } : {}) };
}

/** The held call's receipt (`pending_approval`), and its approval as the API shows it. */
export async function holdForApproval(ctx: ServiceContext, req: RefusedRequest, approvalId: string, reasons: string[]): Promise<Held> {
  const receipt = await writeReceipt(ctx, req, { status: 'pending_approval', metricCode: 'pending_approval', reasons, approvalId });
  const found = await loadApproval(ctx.db, approvalId, ctx.now());
  if (!found) throw new HolonError('gateway_error', `approval ${approvalId} could not be read back`);
  return { kind: 'held', approval: approvalView(found.approval), receipt };
}

/** A delegated call refused before admission (a bad name, a bad max_cost, a call its manifest does not declare). */
export async function refuseDelegated(
  ctx: ServiceContext,
  { sub, named, delegation, reasons }: { sub: { id: string }; named: string; delegation: Delegation; reasons: string[] },
): Promise<Refused> {
  const stored = await loadMandate(ctx.db, sub.id);
  return refuse(ctx, { id: newReceiptId(ctx.now()), stored, agent: named, worst: null, delegation }, { code: 'denied', status: 'denied', reasons });
}
