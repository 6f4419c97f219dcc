/**
 * A call as its caller sees it (GET /v0/calls/{id}, cancel, its events): found only by a principal who may see it, and
 * answered with its state, its receipt once final, and a success's output while it is kept.
 */
import { outputFields, readOutput } from '../../../../shared/calls/answer/outputs.js';
import { readCall } from '../../../../shared/calls/transitions.js';
import { loadOwnedReceiptTree, type ReceiptOwner, type ReceiptView } from '../../../../shared/receipts/store.js';
import { ownOrNotFound, receiptScopeOf, type Principal } from '../../principal.js';
import type { AnswerDeps } from './answers.js';
import { questionOf } from '../../../../shared/calls/events/answer.js';

export type Found = { call: Awaited<ReturnType<typeof readCall>>; receipt: ReceiptView | null; owner: ReceiptOwner };

/**
 * The call and its receipt, if the principal may see them; 404 otherwise (another principal's call does not exist).
 * Whose it is: its receipt's owner once there is one (a refused request has a receipt and no call row), the receipts'
 * rule (principal.ts `receiptScopeOf`): so GET /v0/calls/{id} and GET /v0/receipts/{id} agree.
 */
export async function findCall(deps: AnswerDeps, p: Principal, id: string): Promise<Found> {
  const call = await readCall(deps.ctx.db, id);
  const owned = await loadOwnedReceiptTree(deps.ctx.db, id);
  const found: Found | null = owned
    ? { call, receipt: owned.receipt, owner: owned.owner }
    : call
      ? { call, receipt: null, owner: { mandate: call.mandateId, requester: null } }
      : null;
  return ownOrNotFound(receiptScopeOf(p), found, (f) => f.owner, `there is no call ${id.slice(0, 100)}`);
}

/**
 * What GET /v0/calls/{id} answers: the status, and once final the receipt and a success's output. The output is
 * read, never taken (the synchronous answer and the webhook are its consumers, shared/calls/answer/outputs.ts): null with
 * `output_gone` (`collected` | `expired`) once it is no longer kept.
 */
export async function callAnswer(deps: AnswerDeps, id: string, found: Found, options: { withOutput: boolean }) {
  const { call, receipt } = found;
  if (!receipt) {
    // A running call whose agent asked its caller a question waits for the answer (POST /v0/calls/{id}/input).
    const open = call!.status === 'running' ? await questionOf(deps.ctx, id) : undefined;
    if (open) return { call: { id, status: 'input_required' }, input_required: open };
    return { call: { id, status: call!.status } };
  }
  return {
    call: { id, status: receipt.status },
    receipt,
    ...(receipt.status === 'succeeded' && options.withOutput ? outputFields(await readOutput(deps.ctx, id)) : {}),
  };
}
