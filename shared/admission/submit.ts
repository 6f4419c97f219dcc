/**
 * Admission: resolve → admit (checkCall) → check input → reserve → enqueue (gateway.md §1, steps 1–4).
 * Every request that names a mandate gets a receipt, denied and rejected ones included.
 */
import { compileInterface } from '../core/manifest/interface-validator.js';
import type { CallRequest } from '../core/mandate/types.js';
import { checkCall } from '../core/mandate/check-call.js';
import { worstCase } from '../core/pricing.js';
import { HolonError } from '../core/errors.js';
import { jsonProblem, MAX_JSON_DEPTH } from '../core/json-limits.js';
import type { ServiceContext } from '../context.js';
import { newReceiptId } from '../calls/ids.js';
import { inputKey } from '../calls/jobs.js';
import { declareConsumers } from '../calls/outputs.js';
import { unbilled } from '../calls/outcome.js';
import { closeCall, enqueueRun } from '../calls/transitions.js';
import { loadMandate } from '../mandates/store.js';
import { settleCall } from '../settlement/settle.js';
import { createApproval, grantMismatch, loadApproval, newApprovalId } from './approvals.js';
import { fileRefusal } from './files.js';
import { refuse } from './refuse.js';
import { reserve } from './reserve.js';
import { factsOf, resolveAgent, usedBefore } from './resolve.js';
import { label, type CallSubmission, type Refusal, type Submitted } from './types.js';

export type { CallSubmission, Delegation, Submitted } from './types.js';

async function abandonCall(ctx: ServiceContext, id: string): Promise<void> {
  try {
    await closeCall(ctx, id, 'queued', unbilled('gateway_error'));
  } catch {
    // the settle queue is down too: the call row is `settling` (or still `queued` for the sweeper); settle here
  }
  await settleCall(ctx, id).catch((e) =>
    ctx.log.error({ call: id, err: { message: (e as Error).message } }, 'inline settlement failed; the sweeper will retry'),
  );
}

export async function submitCall(ctx: ServiceContext, sub: CallSubmission): Promise<Submitted> {
  const id = newReceiptId(ctx.now());
  const stored = await loadMandate(ctx.db, sub.mandateId);
  if (!stored) {
    return refuse(
      ctx,
      id,
      null,
      sub.agent ?? sub.capability ?? null,
      null,
      {
        httpStatus: 404,
        code: 'unknown_mandate',
        status: 'denied',
        reasons: [`there is no mandate ${sub.mandateId}`],
      },
      sub.delegation,
    );
  }
  const { mandate } = stored;
  const resolved = await resolveAgent(ctx, stored, sub);
  if (!resolved.ok) return refuse(ctx, id, stored, sub.agent ?? sub.capability ?? null, null, resolved.refusal, sub.delegation);
  const agent = resolved.agent;
  const { manifest } = agent;
  const refuseAs = (worst: bigint | null, refusal: Refusal) => refuse(ctx, id, stored, label(manifest), worst, refusal, sub.delegation);
  // An input that cannot be stored or nests too deep is refused before anything hashes, validates or keeps it
  // (from HTTP the body check said so already; a delegated call's input comes from an agent).
  const unstorable = jsonProblem(sub.input, '$.input', MAX_JSON_DEPTH - 1);
  if (unstorable) {
    return refuseAs(null, {
      httpStatus: 422,
      code: 'rejected_input',
      status: 'rejected_input',
      reasons: [`the input ${unstorable.message} at ${unstorable.path}`],
      problems: [unstorable],
    });
  }

  const wc = worstCase(manifest, mandate.budget, sub.maxCost);
  const request: CallRequest = {
    worstCase: wc.ok ? wc.total : null,
    ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
    depth: mandate.depth,
    delegated: sub.delegation !== undefined,
    via: sub.capability ? { kind: 'capability', capability: sub.capability } : { kind: 'id' },
    usedBefore: await usedBefore(ctx, mandate.id, manifest, mandate.approval.firstUse),
    now: ctx.now(),
    facts: await factsOf(ctx, agent, { record: mandate.require.minSuccessRate !== undefined, evaluation: mandate.require.evaluated }),
    ...(sub.delegation ? { slotMaxCost: sub.delegation.slotMaxCost } : {}),
  };
  const admission = checkCall(mandate, manifest, request);
  const worst = wc.ok ? wc.total : null;
  if (admission.decision === 'deny') {
    return refuseAs(worst, { httpStatus: 403, code: 'denied', status: 'denied', reasons: admission.reasons });
  }
  let approvalId = sub.preApproved;
  if (sub.approval !== undefined && approvalId === undefined) {
    const found = await loadApproval(ctx.db, sub.approval, ctx.now());
    const mismatch = found
      ? grantMismatch(
          found.approval,
          {
            mandateId: mandate.id,
            agentId: manifest.id,
            agentVersion: manifest.version,
            input: sub.input,
            ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
          },
          ctx.now(),
        )
      : [`there is no approval ${sub.approval}`];
    if (mismatch.length) return refuseAs(worst, { httpStatus: 403, code: 'denied', status: 'denied', reasons: mismatch });
    approvalId = sub.approval;
  }
  // Every file handle must be the root issuer's own, and live: checked before an approval could keep the input.
  const files = await fileRefusal(ctx, sub.input, mandate);
  if (files) return refuseAs(worst, files);
  const problems = compileInterface(manifest).input(sub.input);
  if (admission.decision === 'approve' && approvalId === undefined && problems.length === 0) {
    // Held for a human: the input is validated first, so nothing is kept for an input the agent would refuse.
    const pending = newApprovalId();
    await createApproval(ctx.db, {
      id: pending,
      mandateId: mandate.id,
      agentId: manifest.id,
      agentVersion: manifest.version,
      input: sub.input,
      ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
      worstCase: worst!,
      currency: mandate.budget.currency,
      reasons: admission.reasons,
      receiptId: id,
      now: ctx.now(),
    });
    return refuseAs(worst, {
      httpStatus: 202,
      code: 'pending_approval',
      status: 'pending_approval',
      reasons: admission.reasons,
      approvalId: pending,
    });
  }
  if (problems.length) {
    return refuseAs(worst, {
      httpStatus: 422,
      code: 'rejected_input',
      status: 'rejected_input',
      reasons: [`the input does not match ${label(manifest)}'s interface.input (${problems.length} problem${problems.length === 1 ? '' : 's'})`],
      problems,
    });
  }
  const timeoutMs = manifest.runtime.timeoutS * 1000;
  const reserved = await reserve(ctx, id, stored, manifest, worst!, sub, timeoutMs, approvalId);
  if (reserved) return refuseAs(worst, reserved);

  try {
    await Promise.all([
      ctx.messaging.store.put(inputKey(id), JSON.stringify(sub.input), manifest.runtime.timeoutS + ctx.settings.queueGraceS),
      // Before the run is queued: a webhook that finishes first must know a synchronous answer still needs the output.
      sub.callbackUrl ? declareConsumers(ctx, id, sub.syncAnswer ? ['sync', 'webhook'] : ['webhook'], manifest.runtime.timeoutS) : undefined,
    ]);
    await enqueueRun(ctx, id);
  } catch (e) {
    // Funds are held: never leave them stuck. Close the call unbilled, settling inline if the queue is down.
    ctx.log.error({ call: id, err: { message: (e as Error).message } }, 'could not queue a reserved call');
    await abandonCall(ctx, id);
    throw new HolonError('queue_unavailable', 503, 'the gateway could not queue the call; nothing was charged and the reservation was released');
  }
  return { kind: 'queued', callId: id, timeoutMs };
}
