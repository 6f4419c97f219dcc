/**
 * A refused request still gets its receipt (DESIGN.md §3.6): unknown mandate or agent, denied, rejected input,
 * or held for approval. The receipt is written, read back as a tree, and answered with the refusal.
 */
import { HolonError } from '../core/errors.js';
import type { ServiceContext } from '../context.js';
import { newReceiptId } from '../calls/ids.js';
import { loadMandate, type StoredMandate } from '../mandates/store.js';
import { insertReceipt, loadReceiptTree } from '../receipts/store.js';
import { approvalView, loadApproval } from './approvals.js';
import type { Delegation, Refusal, Submitted } from './types.js';

export async function refuseDelegated(ctx: ServiceContext, sub: { id: string }, named: string, d: Delegation, reasons: string[]): Promise<Submitted> {
  const stored = await loadMandate(ctx.db, sub.id);
  return refuse(ctx, newReceiptId(ctx.now()), stored, named, null, { httpStatus: 403, code: 'denied', status: 'denied', reasons }, d);
}

export async function refuse(
  ctx: ServiceContext,
  id: string,
  stored: StoredMandate | null,
  agent: string | null,
  worst: bigint | null,
  r: Refusal,
  d?: Delegation,
): Promise<Submitted> {
  await insertReceipt(ctx.db, {
    id,
    parentId: d?.parentCallId ?? null,
    mandateId: stored?.mandate.id ?? null,
    caller: d?.caller ?? stored?.mandate.grantee ?? null,
    agent,
    status: r.status,
    errorCode: r.errorCode ?? null,
    reasons: r.reasons,
    worstCase: worst,
    currency: stored?.mandate.budget.currency ?? null,
    payer: d?.payer ?? stored?.mandate.issuer ?? null,
    approvalId: r.approvalId ?? null,
  });
  // The code of a refusal is always the gateway's own; the agent is named only when it is one the registry lists.
  const named = agent?.split('@')[0];
  ctx.metrics?.calls.inc({ status: r.status, error_code: r.code, agent: named && ctx.registry.versions(named).length > 0 ? named : 'none' });
  const receipt = await loadReceiptTree(ctx.db, id);
  if (!receipt) throw new HolonError('gateway_error', 500, 'a receipt could not be read back');
  const approval = r.approvalId ? (await loadApproval(ctx.db, r.approvalId, ctx.now()))?.approval : undefined;
  return {
    kind: 'refused',
    httpStatus: r.httpStatus,
    code: r.code,
    message: r.reasons[0] ?? r.code,
    receipt,
    ...(r.problems ? { problems: r.problems } : {}),
    ...(approval ? { approval: approvalView(approval) } : {}),
  };
}
