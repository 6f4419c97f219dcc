/**
 * Admission: resolve → admit (checkCall) → check input → reserve → enqueue (gateway.md §1, steps 1–4).
 * Every request that names a mandate gets a receipt, denied and rejected ones included. A reserved call that cannot
 * be queued is closed and settled through the engine (`engine.close`, `engine.settle`).
 */
import { compileInterface } from '../../core/manifest/interface-validator.js';
import type { CallRequest } from '../../core/mandate/types.js';
import { checkCall } from '../../core/mandate/check-call.js';
import { worstCase } from '../../core/pricing.js';
import { HolonError } from '../../core/errors.js';
import { jsonProblem, MAX_JSON_DEPTH } from '../../core/json-limits.js';
import type { ServiceContext } from '../../context.js';
import { newReceiptId } from '../ids.js';
import { inputKey } from '../wire.js';
import { declareConsumers } from '../answer/outputs.js';
import { unbilled } from '../call-outcome.js';
import { claimedOf, enqueueRun } from '../transitions.js';
import type { AdmittedCall } from '../../ledger/money-functions.js';
import type { CallEngine, RunSlot } from '../engine-types.js';
import { knownMandate, type KnownMandate } from '../../mandates/store.js';
import type { AgentVersion } from '../../registry/agent-version.js';
import type { Manifest } from '../../core/manifest/types.js';
import { createApproval, grantMismatch, loadApproval, newApprovalId } from './approvals.js';
import { fileRefusal } from './files.js';
import { holdForApproval, refuse, type RefusedRequest } from './refuse.js';
import { reserve } from './reserve.js';
import { factsOf, resolveAgent, usedBefore } from './resolve.js';
import { label, type CallSubmission, type Held, type Queued, type Refusal, type Submitted } from './types.js';

export type { CallSubmission, Submitted } from './types.js';

async function abandonCall(engine: CallEngine, id: string, from: 'queued' | 'running'): Promise<void> {
  try {
    await engine.close(id, from, unbilled('gateway_error'));
  } catch {
    // the settle queue is down too: the call row is `settling` (or still `queued` for the sweeper); settle here
  }
  await engine
    .settle(id)
    .catch((e) => engine.resources.log.error({ call: id, err: { message: (e as Error).message } }, 'inline settlement failed; the sweeper will retry'));
}

type Step<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };
const next = <T>(value: T): Step<T> => ({ ok: true, value });
const stop = (refusal: Refusal): Step<never> => ({ ok: false, refusal });

/** An input that cannot be stored or nests too deep: refused before anything hashes, validates or keeps it. */
function storableInput(sub: CallSubmission): Step<true> {
  // From HTTP the body check said so already; a delegated call's input comes from an agent.
  const unstorable = jsonProblem(sub.input, '$.input', MAX_JSON_DEPTH - 1);
  if (!unstorable) return next(true);
  return stop({ code: 'rejected_input', status: 'rejected_input', reasons: [`the input ${unstorable.message} at ${unstorable.path}`], problems: [unstorable] });
}

/** The mandate's decision on this call (checkCall): allowed, or to be approved by a human; a denial stops here. */
async function admit(
  ctx: ServiceContext,
  { stored, agent, sub, worst }: { stored: KnownMandate; agent: AgentVersion; sub: CallSubmission; worst: bigint | null },
): Promise<Step<{ decision: 'allow' | 'approve'; reasons: string[] }>> {
  const { mandate } = stored;
  const { manifest } = agent;
  const request: CallRequest = {
    worstCase: worst,
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
  if (admission.decision === 'deny') return stop({ code: 'denied', status: 'denied', reasons: admission.reasons });
  return next({ decision: admission.decision, reasons: admission.reasons });
}

/**
 * The approval this call redeems: the one `POST /v0/approvals/{id}` moved to used, or a granted one that matches.
 * Ownership first: an approval outside the caller's scope is refused exactly like an id that names nothing.
 */
async function redeemedApproval(ctx: ServiceContext, stored: KnownMandate, manifest: Manifest, sub: CallSubmission): Promise<Step<string | undefined>> {
  const named = sub.approval;
  if (sub.preApproved !== undefined || named === undefined) return next(sub.preApproved);
  const found = await loadApproval(ctx.db, named.id, ctx.now());
  const own = found && named.inScope(found.approval.mandateId) ? found.approval : null;
  const mismatch = own
    ? grantMismatch(
        own,
        {
          mandateId: stored.mandate.id,
          agentId: manifest.id,
          agentVersion: manifest.version,
          input: sub.input,
          ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
        },
        ctx.now(),
      )
    : [`there is no approval ${named.id}`];
  if (!mismatch.length) return next(named.id);
  // A spent approval is its own refusal (409, as the race reserve.ts loses answers): the grantee re-sent a used grant.
  const code = own?.status === 'used' ? 'approval_used' : 'denied';
  return stop({ code, status: 'denied', reasons: mismatch });
}

/** Held for a human: the approval (binding the mandate, version, input and max_cost) and its receipt. */
async function hold(
  ctx: ServiceContext,
  req: RefusedRequest & { stored: KnownMandate },
  { manifest, sub, reasons }: { manifest: Manifest; sub: CallSubmission; reasons: string[] },
): Promise<Held> {
  const pending = newApprovalId();
  await createApproval(ctx.db, {
    id: pending,
    mandateId: req.stored.mandate.id,
    agentId: manifest.id,
    agentVersion: manifest.version,
    input: sub.input,
    ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
    worstCase: req.worst!,
    currency: req.stored.mandate.budget.currency,
    reasons,
    receiptId: req.id,
    now: ctx.now(),
  });
  return holdForApproval(ctx, req, pending, reasons);
}

/** What was admitted: the call, its agent, and where it runs (a slot of this process's runner, or the run queue). */
interface Admitted {
  id: string;
  manifest: Manifest;
  sub: CallSubmission;
  /** Admitted `running` into this slot (run/run-here.ts); absent: queued. */
  here?: { slot: RunSlot; row: AdmittedCall };
}

/**
 * The consumers of its output declared, then the call started here (admitted `running` into a slot of this process's
 * runner) or its input kept for a runner and its run queued; a failure on the way releases the hold.
 */
async function enqueue(engine: CallEngine, { id, manifest, sub, here }: Admitted): Promise<Queued> {
  const ctx = engine.resources;
  try {
    await sub.beforeRun?.(id);
    await Promise.all([
      here ? undefined : ctx.messaging.store.put(inputKey(id), JSON.stringify(sub.input), manifest.runtime.timeoutS + ctx.settings.queueGraceS),
      // Before the run starts: a webhook that finishes first must know a synchronous answer still needs the output.
      sub.callbackUrl ? declareConsumers(ctx, id, sub.syncAnswer ? ['sync', 'webhook'] : ['webhook'], manifest.runtime.timeoutS) : undefined,
    ]);
    if (here) here.slot.start(id, claimedOf(here.row), sub.input);
    else await enqueueRun(ctx, id);
  } catch (e) {
    // Funds are held: never leave them stuck. Close the call unbilled, settling inline if the queue is down.
    here?.slot.release();
    ctx.log.error({ call: id, err: { message: (e as Error).message } }, 'could not queue a reserved call');
    await abandonCall(engine, id, here ? 'running' : 'queued');
    throw new HolonError('queue_unavailable', 'the gateway could not queue the call; nothing was charged and the reservation was released');
  }
  return { kind: 'queued', callId: id, timeoutMs: manifest.runtime.timeoutS * 1000 };
}

/**
 * Admit one call: the mandate, the agent, the mandate's decision, the approval it redeems, its files and its input,
 * the reservation — each step refuses (with a receipt) or hands on — then queue it, or hold it for a human.
 */
export async function submitCall(engine: CallEngine, sub: CallSubmission): Promise<Submitted> {
  const ctx = engine.resources;
  const id = newReceiptId(ctx.now());
  const named = sub.agent ?? sub.capability ?? null;
  // The document only, cached (store.ts `knownMandate`): the reservation's SQL checks the budget and revocation.
  const document = await knownMandate(ctx.db, sub.mandateId);
  const stored = document ? { mandate: document } : null;
  if (!stored) {
    const refusal: Refusal = { code: 'unknown_mandate', status: 'denied', reasons: [`there is no mandate ${sub.mandateId}`] };
    return refuse(ctx, { id, stored: null, agent: named, worst: null, delegation: sub.delegation, requester: sub.requester }, refusal);
  }
  const resolved = await resolveAgent(ctx, stored, sub);
  if (!resolved.ok) return refuse(ctx, { id, stored, agent: named, worst: null, delegation: sub.delegation }, resolved.refusal);
  const { manifest } = resolved.agent;
  const unstorable = storableInput(sub);
  if (!unstorable.ok) return refuse(ctx, { id, stored, agent: label(manifest), worst: null, delegation: sub.delegation }, unstorable.refusal);

  const wc = worstCase(manifest, stored.mandate.budget, sub.maxCost);
  const req = { id, stored, agent: label(manifest), worst: wc.ok ? wc.total : null, delegation: sub.delegation };
  const decision = await admit(ctx, { stored, agent: resolved.agent, sub, worst: req.worst });
  if (!decision.ok) return refuse(ctx, req, decision.refusal);
  const approval = await redeemedApproval(ctx, stored, manifest, sub);
  if (!approval.ok) return refuse(ctx, req, approval.refusal);
  // Every file handle must be the root issuer's own, and live: checked before an approval could keep the input.
  const files = await fileRefusal(ctx, sub.input, stored.mandate);
  if (files) return refuse(ctx, req, files);
  const problems = compileInterface(manifest).input(sub.input);
  // Held for a human only once the input is valid: nothing is kept for an input the agent would refuse.
  if (decision.value.decision === 'approve' && approval.value === undefined && problems.length === 0) {
    return hold(ctx, req, { manifest, sub, reasons: decision.value.reasons });
  }
  if (problems.length) {
    const reasons = [`the input does not match ${label(manifest)}'s interface.input (${problems.length} problem${problems.length === 1 ? '' : 's'})`];
    return refuse(ctx, req, { code: 'rejected_input', status: 'rejected_input', reasons, problems });
  }
  // A free slot of this process's runner: the call is admitted `running` and starts here (run/run-here.ts).
  const slot = engine.takeRunSlot();
  const reserved = await reserve(ctx, { id, stored, manifest, worst: req.worst!, sub, approvalId: approval.value, runHere: slot !== null }).catch(
    (e: unknown) => {
      slot?.release();
      throw e;
    },
  );
  if (reserved.status !== 'running') slot?.release();
  if ('refusal' in reserved) return refuse(ctx, req, reserved.refusal);
  const here = slot && reserved.status === 'running' ? { slot, row: reserved.row } : undefined;
  return enqueue(engine, { id, manifest, sub, ...(here ? { here } : {}) });
}
