/**
 * Admission: resolve → admit (checkCall) → check input → reserve → enqueue (gateway.md §1, steps 1–4).
 * Every request that names a mandate gets a receipt, denied and rejected ones included.
 */
import { compileInterface } from '../core/manifest/interface-validator.js';
import type { Manifest } from '../core/manifest/types.js';
import { checkCall } from '../core/mandate/check-call.js';
import type { AgentFacts, CallRequest } from '../core/mandate/types.js';
import { formatAmount } from '../core/money.js';
import { worstCase } from '../core/pricing.js';
import { rankCapability, type Candidate } from '../core/resolution.js';
import type { Problem } from '../core/errors.js';
import { HolonError } from '../core/errors.js';
import { ensureBalanceRow, reserveForCall, reserveFromParentHold } from '../ledger/holds.js';
import { readBalance } from '../ledger/accounts.js';
import type { AgentVersion } from '../../services/runner/runtimes/types.js';
import { newReceiptId } from '../calls/ids.js';
import { describeBudget, loadMandate, type StoredMandate } from '../mandates/store.js';
import { insertReceipt, loadReceiptTree, type ReceiptStatus, type ReceiptView } from '../receipts/store.js';
import { EMPTY_RECORD, loadRecords, recordKey } from '../catalogue/agent-record.js';
import { inputKey, RUN_QUEUE, type CallJob, type GatewayContext } from '../context.js';
import { closeCall } from '../../services/runner/run-call.js';
import { approvalView, createApproval, grantMismatch, loadApproval, newApprovalId } from './approvals.js';
import { settleCall } from '../settlement/settle.js';

/** Close a reserved call that never reached a runner: failed / gateway_error, unbilled, hold released. */
async function abandonCall(ctx: GatewayContext, id: string): Promise<void> {
  try {
    await closeCall(ctx, id, 'queued', { kind: 'failure', code: 'gateway_error', billed: false, own: '0', duration_ms: 0 });
  } catch {
    // the settle queue is down too: the call row is `settling` (or still `queued` for the sweeper); settle here
  }
  await settleCall(ctx, id).catch((e) => ctx.log.error({ call: id, err: { message: (e as Error).message } }, 'inline settlement failed; the sweeper will retry'));
}

export interface CallSubmission {
  mandateId: string;
  /** `ns/name[@range]` — exactly one of agent / capability. */
  agent?: string;
  capability?: string;
  input: unknown;
  /** The caller's cap, in the mandate's currency. */
  maxCost?: bigint;
  callbackUrl?: string;
  /** A granted approval (`{"run": false}`) this call redeems: same mandate, version, input and max_cost. */
  approval?: string;
  /** Internal: an approval already moved to `used` by `POST /v0/approvals/{id}` with `{}`. */
  preApproved?: string;
  /** Internal: a call made by a running agent (ctx.call), under its sub-mandate. */
  delegation?: Delegation;
}

export interface Delegation {
  parentCallId: string;
  rootId: string;
  /** The orchestrator's agent id: the caller of the child call. */
  caller: string;
  /** passthrough: the original payer, out of the parent's hold; included: the orchestrator's author. */
  mode: 'passthrough' | 'included';
  payer: string;
  parentHoldId: string;
  /** The declared slot's max_cost, in the mandate's currency. */
  slotMaxCost: bigint;
}

export type Submitted =
  | { kind: 'queued'; callId: string; timeoutMs: number }
  | { kind: 'refused'; httpStatus: number; code: string; message: string; receipt: ReceiptView; problems?: Problem[]; approval?: ReturnType<typeof approvalView> };

interface Refusal {
  httpStatus: number;
  code: string;
  status: ReceiptStatus;
  reasons: string[];
  problems?: Problem[];
  approvalId?: string;
}

const label = (m: Manifest) => `${m.id}@${m.version}`;

export async function submitCall(ctx: GatewayContext, sub: CallSubmission): Promise<Submitted> {
  const id = newReceiptId(ctx.now());
  const stored = await loadMandate(ctx.db, sub.mandateId);
  if (!stored) {
    return refuse(ctx, id, null, sub.agent ?? sub.capability ?? null, null, {
      httpStatus: 404, code: 'unknown_mandate', status: 'denied', reasons: [`there is no mandate ${sub.mandateId}`],
    }, sub.delegation);
  }
  const { mandate } = stored;
  const resolved = await resolveAgent(ctx, stored, sub);
  if (!resolved.ok) return refuse(ctx, id, stored, sub.agent ?? sub.capability ?? null, null, resolved.refusal, sub.delegation);
  const agent = resolved.agent;
  const { manifest } = agent;

  const wc = worstCase(manifest, mandate.budget, sub.maxCost);
  const request: CallRequest = {
    worstCase: wc.ok ? wc.total : null,
    ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
    depth: mandate.depth,
    delegated: sub.delegation !== undefined,
    via: sub.capability ? { kind: 'capability', capability: sub.capability } : { kind: 'id' },
    usedBefore: await usedBefore(ctx, mandate.id, manifest, mandate.approval.firstUse),
    now: ctx.now(),
    facts: await factsOf(ctx, agent, mandate.require.minSuccessRate !== undefined),
  };
  const admission = checkCall(mandate, manifest, request);
  const worst = wc.ok ? wc.total : null;
  if (sub.delegation && worst !== null && worst > sub.delegation.slotMaxCost) {
    admission.decision = 'deny';
    admission.reasons.push(`the worst case ${formatAmount(worst)} ${mandate.budget.currency} does not fit the declared call's max_cost ${formatAmount(sub.delegation.slotMaxCost)} ${mandate.budget.currency}`);
  }
  if (admission.decision === 'deny') {
    return refuse(ctx, id, stored, label(manifest), worst, { httpStatus: 403, code: 'denied', status: 'denied', reasons: admission.reasons }, sub.delegation);
  }
  let approvalId = sub.preApproved;
  if (sub.approval !== undefined && approvalId === undefined) {
    const found = await loadApproval(ctx.db, sub.approval, ctx.now());
    const mismatch = found
      ? grantMismatch(found.approval, { mandateId: mandate.id, agentId: manifest.id, agentVersion: manifest.version, input: sub.input, ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}) }, ctx.now())
      : [`there is no approval ${sub.approval}`];
    if (mismatch.length) return refuse(ctx, id, stored, label(manifest), worst, { httpStatus: 403, code: 'denied', status: 'denied', reasons: mismatch }, sub.delegation);
    approvalId = sub.approval;
  }
  const problems = compileInterface(manifest).input(sub.input);
  if (admission.decision === 'approve' && approvalId === undefined && problems.length === 0) {
    // Held for a human: the input is validated first, so nothing is kept for an input the agent would refuse.
    const pending = newApprovalId();
    await createApproval(ctx.db, {
      id: pending, mandateId: mandate.id, agentId: manifest.id, agentVersion: manifest.version, input: sub.input,
      ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}), worstCase: worst!, currency: mandate.budget.currency,
      reasons: admission.reasons, receiptId: id, now: ctx.now(),
    });
    return refuse(ctx, id, stored, label(manifest), worst, {
      httpStatus: 202, code: 'pending_approval', status: 'pending_approval', reasons: admission.reasons, approvalId: pending,
    }, sub.delegation);
  }
  if (problems.length) {
    return refuse(ctx, id, stored, label(manifest), worst, {
      httpStatus: 422, code: 'rejected_input', status: 'rejected_input',
      reasons: [`the input does not match ${label(manifest)}'s interface.input (${problems.length} problem${problems.length === 1 ? '' : 's'})`],
      problems,
    }, sub.delegation);
  }
  const timeoutMs = manifest.runtime.timeoutS * 1000;
  const reserved = await reserve(ctx, id, stored, manifest, worst!, sub, timeoutMs, approvalId);
  if (reserved) return refuse(ctx, id, stored, label(manifest), worst, reserved, sub.delegation);

  try {
    await ctx.messaging.store.put(inputKey(id), JSON.stringify(sub.input), manifest.runtime.timeoutS + ctx.settings.queueGraceS);
    await ctx.messaging.queues.queue<CallJob>(RUN_QUEUE).add({ callId: id }, { jobId: id });
  } catch (e) {
    // Funds are held: never leave them stuck. Close the call unbilled, settling inline if the queue is down.
    ctx.log.error({ call: id, err: { message: (e as Error).message } }, 'could not queue a reserved call');
    await abandonCall(ctx, id);
    throw new HolonError('queue_unavailable', 503, 'the gateway could not queue the call; nothing was charged and the reservation was released');
  }
  return { kind: 'queued', callId: id, timeoutMs };
}

type Resolution = { ok: true; agent: AgentVersion } | { ok: false; refusal: Refusal };

async function resolveAgent(ctx: GatewayContext, stored: StoredMandate, sub: CallSubmission): Promise<Resolution> {
  if (sub.agent !== undefined) {
    const r = ctx.registry.resolve(sub.agent);
    if (r.ok) return r;
    return { ok: false, refusal: { httpStatus: r.code === 'invalid_ref' ? 400 : 404, code: r.code, status: 'denied', reasons: [r.message] } };
  }
  const capability = sub.capability!;
  const versions = ctx.registry.implementers(capability);
  if (versions.length === 0) {
    return { ok: false, refusal: { httpStatus: 404, code: 'unknown_capability', status: 'denied', reasons: [`no listed agent implements ${capability}`] } };
  }
  const records = await loadRecords(ctx.db, versions.map((v) => ({ id: v.manifest.id, version: v.manifest.version })));
  const candidates: Candidate[] = [];
  for (const v of versions) {
    const record = records.get(recordKey(v.manifest.id, v.manifest.version)) ?? EMPTY_RECORD;
    candidates.push({
      manifest: v.manifest,
      facts: { origin: v.origin, evaluation: 'none', record },
      record,
      usedBefore: await usedBefore(ctx, stored.mandate.id, v.manifest, stored.mandate.approval.firstUse),
    });
  }
  const ranking = rankCapability(capability, candidates, stored.mandate, {
    ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
    depth: stored.mandate.depth,
    delegated: sub.delegation !== undefined,
    usedBefore: false,
    now: ctx.now(),
    ...(sub.delegation ? { slotMaxCost: sub.delegation.slotMaxCost } : {}),
  });
  const best = ranking.ranked[0];
  if (!best) {
    const reasons = ranking.denied.flatMap((d) => d.reasons.map((r) => `${label(d.manifest)}: ${r}`));
    return { ok: false, refusal: { httpStatus: 403, code: 'denied', status: 'denied', reasons } };
  }
  return { ok: true, agent: versions.find((v) => v.manifest === best.manifest)! };
}

/**
 * `approval.first_use`: was this agent version called before under the mandate — counting the whole tree of a
 * root mandate (a sub-mandate is `<root>.<receipt>`; every run derives a new one, so its own history is empty).
 */
async function usedBefore(ctx: GatewayContext, mandateId: string, manifest: Manifest, needed: boolean): Promise<boolean> {
  if (!needed) return true;
  const root = mandateId.split('.')[0]!;
  const row = await ctx.db('calls')
    .where({ agent_id: manifest.id, agent_version: manifest.version })
    .where((q) => q.where({ mandate_id: root }).orWhere('mandate_id', 'like', `${root.replace(/[\\%_]/g, '\\$&')}.%`))
    .first('id');
  return row !== undefined;
}

async function factsOf(ctx: GatewayContext, agent: AgentVersion, withRecord: boolean): Promise<AgentFacts> {
  const facts: AgentFacts = { origin: agent.origin, evaluation: 'none' };
  if (withRecord) {
    const records = await loadRecords(ctx.db, [{ id: agent.manifest.id, version: agent.manifest.version }]);
    const r = records.get(recordKey(agent.manifest.id, agent.manifest.version)) ?? EMPTY_RECORD;
    facts.record = { runs: r.runs, successes: r.successes };
  }
  return facts;
}

/**
 * Reserve the worst case: one transaction, row locks in the global order (mandate, then the payer's balance).
 * Both the mandate's remaining budget and the payer's available balance must cover it. Returns a refusal
 * saying what was short, or null once the call row, the hold and the mandate's `reserved` are written.
 */
class Shortfall extends Error {
  constructor(readonly what: 'budget_short' | 'balance_short' | 'approval_used') {
    super(what);
  }
}

/**
 * Reserve the worst case: one transaction. The call row (and a redeemed grant) are written first; the two
 * hot rows — the mandate, then the payer's balance, the global lock order — are taken last, each by one
 * conditional UPDATE that checks what is left (`reserveForCall`). A shortfall rolls everything back and is
 * explained with a fresh read.
 */
async function reserve(
  ctx: GatewayContext,
  id: string,
  stored: StoredMandate,
  manifest: Manifest,
  worst: bigint,
  sub: CallSubmission,
  timeoutMs: number,
  approvalId: string | undefined,
): Promise<Refusal | null> {
  const currency = stored.mandate.budget.currency;
  const d = sub.delegation;
  const payer = d ? d.payer : stored.mandate.issuer;
  await ensureBalanceRow(ctx.db, payer, currency);
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
      await trx('calls').insert({
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
        status: 'queued',
        timeout_ms: timeoutMs,
        deadline_at: new Date(ctx.now() + timeoutMs + ctx.settings.queueGraceS * 1000),
        callback_url: sub.callbackUrl ?? null,
        approval_id: approvalId ?? null,
      });
      const outcome = d?.mode === 'passthrough'
        ? await reserveFromParentHold(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, parentHoldId: d.parentHoldId, amount: worst })
        : await reserveForCall(trx, { holdId: id, callId: id, mandateId: stored.mandate.id, account: payer, currency, amount: worst });
      if (outcome === 'parent_short') throw new Shortfall('budget_short');
      if (outcome !== 'reserved') throw new Shortfall(outcome);
    });
    return null;
  } catch (e) {
    if (!(e instanceof Shortfall)) throw e;
    const money = (v: bigint) => `${formatAmount(v)} ${currency}`;
    if (e.what === 'approval_used') {
      return { httpStatus: 409, code: 'approval_used', status: 'denied', reasons: [`approval ${approvalId} was already used`] };
    }
    if (e.what === 'budget_short') {
      const now = await loadMandate(ctx.db, stored.mandate.id);
      return { httpStatus: 403, code: 'denied', status: 'denied', reasons: [`${now ? describeBudget(now) : `mandate ${stored.mandate.id} is gone`}; the call's worst case is ${money(worst)}`] };
    }
    const b = await readBalance(ctx.db, payer, currency);
    return { httpStatus: 403, code: 'denied', status: 'denied', reasons: [`account ${payer} has ${money(b.available)} available; the call's worst case is ${money(worst)}`] };
  }
}

/** A delegated call refused before admission (no declared slot, a bad max_cost): its receipt, under the run. */
export async function refuseDelegated(ctx: GatewayContext, sub: { id: string }, named: string, d: Delegation, reasons: string[]): Promise<Submitted> {
  const stored = await loadMandate(ctx.db, sub.id);
  return refuse(ctx, newReceiptId(ctx.now()), stored, named, null, { httpStatus: 403, code: 'denied', status: 'denied', reasons }, d);
}

async function refuse(
  ctx: GatewayContext,
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
    reasons: r.reasons,
    worstCase: worst,
    currency: stored?.mandate.budget.currency ?? null,
    payer: d?.payer ?? stored?.mandate.issuer ?? null,
    approvalId: r.approvalId ?? null,
  });
  const receipt = await loadReceiptTree(ctx.db, id);
  if (!receipt) throw new HolonError('gateway_error', 500, 'a receipt could not be read back');
  const approval = r.approvalId ? (await loadApproval(ctx.db, r.approvalId, ctx.now()))?.approval : undefined;
  return {
    kind: 'refused', httpStatus: r.httpStatus, code: r.code, message: r.reasons[0] ?? r.code, receipt,
    ...(r.problems ? { problems: r.problems } : {}),
    ...(approval ? { approval: approvalView(approval) } : {}),
  };
}
