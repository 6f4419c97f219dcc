/**
 * Agents hiring agents (gateway.md §3, mandate.md §5): when a run starts for an agent that declares `calls`,
 * the gateway derives its sub-mandate, checks it never widens its parent, and gives the agent `ctx.call`.
 * Each child call goes through the same admission as an API call (`submitCall`), under the sub-mandate,
 * with `delegated: true` (nobody can approve), matched to a declared `calls` slot and its max_cost.
 */
import { checkAttenuation } from '../../core/mandate/attenuation.js';
import { deriveSubMandate } from '../../core/mandate/derive.js';
import { matchesAgent } from '../../core/mandate/patterns.js';
import type { Mandate } from '../../core/mandate/types.js';
import type { CallSlot, Manifest } from '../../core/manifest/types.js';
import { stringProblem } from '../../core/json-limits.js';
import { convert, ONE_RATE, tryParseAmount } from '../../core/money.js';
import { fxRateFor, subMandateBudget } from '../../core/pricing.js';
import { ensureAccountCached } from '../../ledger/accounts.js';
import type { CallWaiter } from '../answer/waiter.js';
import type { ServiceContext } from '../../context.js';
import { takeOutput } from '../answer/outputs.js';
import { saveMandate } from '../../mandates/store.js';
import { loadReceiptTree, type ReceiptView } from '../../receipts/store.js';
import { submitCall, type Delegation, type Submitted } from '../submit/submit.js';
import { refuseDelegated } from '../submit/refuse.js';

type CallTarget = string | { agent: string } | { capability: string };

export interface ChildResult {
  ok: boolean;
  output?: unknown;
  error?: { code: string; message: string };
  receipt: ReceiptView | null;
}

export interface RunningCall {
  id: string;
  rootId: string;
  payer: string;
  maxCost?: bigint;
}

/**
 * Derive and store the sub-mandate for a run, or say why the run cannot delegate. `null` when the agent gets no
 * `ctx.call` (no declared calls, or `delegation.max_depth` 0).
 */
export async function prepareDelegation(
  ctx: ServiceContext,
  parent: Mandate,
  manifest: Manifest,
  call: RunningCall,
): Promise<{ ok: true; sub: Mandate } | { ok: false; reason: string } | null> {
  if (manifest.calls.length === 0 || parent.delegation.maxDepth <= 0) return null;
  const budgetTotal = subMandateBudget(manifest, parent.budget, call.maxCost);
  const derived = deriveSubMandate(parent, manifest, { receiptId: call.id, budgetTotal });
  if (!derived.ok) return { ok: false, reason: derived.reason };
  const widening = checkAttenuation(parent, derived.mandate);
  if (widening.length) return { ok: false, reason: `the derived sub-mandate would widen its parent: ${widening.join('; ')}` };
  await saveMandate(ctx.db, derived.mandate, ctx.signingKey);
  await ctx.db('calls').where({ id: call.id }).update({ sub_mandate_id: derived.mandate.id });
  if (manifest.downstream?.mode === 'included') await ensureAccountCached(ctx.db, manifest.namespace);
  return { ok: true, sub: derived.mandate };
}

function slotFor(ctx: ServiceContext, manifest: Manifest, target: { agent: string } | { capability: string }): CallSlot | undefined {
  if ('capability' in target) return manifest.calls.find((c) => c.capability === target.capability);
  const resolved = ctx.registry.resolve(target.agent);
  if (!resolved.ok) return manifest.calls.find((c) => c.agent !== undefined && c.agent.split('@')[0] === target.agent.split('@')[0]);
  const { id, version } = resolved.agent.manifest;
  return manifest.calls.find((c) => c.agent !== undefined && matchesAgent(c.agent, id, version));
}

export interface ParentRun {
  call: RunningCall;
  manifest: Manifest;
  sub: Mandate;
}

/** What a running orchestrator asks for: the agent or capability to call, its input, and options (a `max_cost`). */
interface ChildRequest {
  target: CallTarget;
  input: unknown;
  options?: { max_cost?: string };
}

/**
 * Admit one child call of a running orchestrator (ctx.call, or POST /v0/calls with the run's delegation
 * token): match a declared slot, then the same admission as any call, under the sub-mandate.
 */
export async function submitChild(ctx: ServiceContext, parent: ParentRun, child: ChildRequest): Promise<Submitted> {
  const { target: rawTarget, input, options = {} } = child;
  const target = typeof rawTarget === 'string' ? { agent: rawTarget } : rawTarget;
  const { manifest, sub, call } = parent;
  const mode = manifest.downstream?.mode ?? 'passthrough';
  const delegation: Delegation = {
    parentCallId: call.id,
    rootId: call.rootId,
    caller: manifest.id,
    mode,
    payer: mode === 'included' ? manifest.namespace : call.payer,
    parentHoldId: call.id,
    slotMaxCost: 0n,
  };
  const named: unknown = 'capability' in target ? target.capability : target.agent;
  // The name comes from the agent's code: one that is not a storable string never reaches a receipt as is.
  const badName = typeof named !== 'string' ? 'is not a string' : (stringProblem(named) ?? (named.length > 300 ? 'is longer than 300 characters' : undefined));
  if (badName || typeof named !== 'string')
    return refuseDelegated(ctx, { sub, named: '(invalid name)', delegation, reasons: [`the called agent or capability ${badName}`] });
  const slot = slotFor(ctx, manifest, target);
  let maxCost: bigint | undefined;
  if (options.max_cost !== undefined) {
    const parsed = tryParseAmount(options.max_cost);
    if (!parsed.ok) return refuseDelegated(ctx, { sub, named: named, delegation, reasons: [`max_cost ${parsed.message}`] });
    maxCost = parsed.value;
  }
  if (!slot) return refuseDelegated(ctx, { sub, named: named, delegation, reasons: [`${manifest.id} declares no call to ${named} in its manifest's calls`] });
  const fx = fxRateFor(manifest.pricing.currency, sub.budget) ?? ONE_RATE;
  delegation.slotMaxCost = convert(slot.maxCost, fx);
  return submitCall(ctx, {
    mandateId: sub.id,
    ...('capability' in target ? { capability: target.capability } : { agent: target.agent }),
    input,
    ...(maxCost !== undefined ? { maxCost } : {}),
    delegation,
  });
}

/** One `ctx.call` of a running orchestrator: admit it, wait for it, hand back `{ok, output?, error?, receipt}`. */
export async function callChild(
  ctx: ServiceContext & { waiter: CallWaiter },
  parent: ParentRun & { signal: AbortSignal },
  child: ChildRequest,
): Promise<ChildResult> {
  const submitted = await submitChild(ctx, parent, child);
  if (submitted.kind === 'refused') return refused(submitted.receipt, submitted.code, submitted.message);
  // Nobody can approve inside a delegated run: admission denies such a call, it is never held.
  if (submitted.kind === 'held') return refused(submitted.receipt, 'denied', 'nobody can approve inside a delegated run');
  const childId = submitted.callId;
  const finished = await Promise.race([
    ctx.waiter.wait(childId, submitted.timeoutMs + 30_000),
    new Promise<false>((resolve) => parent.signal.addEventListener('abort', () => resolve(false), { once: true })),
  ]);
  const receipt = await loadReceiptTree(ctx.db, childId);
  if (!finished || !receipt) {
    return { ok: false, error: { code: 'timeout', message: 'the delegated call had not finished when the run stopped waiting' }, receipt };
  }
  if (receipt.status !== 'succeeded') {
    return { ok: false, error: { code: receipt.error ?? 'agent_error', message: `the delegated call failed: ${receipt.error ?? 'agent_error'}` }, receipt };
  }
  // The parent is the child's synchronous consumer: handed over, so a later GET of the child says `collected`.
  const output = await takeOutput(ctx, childId);
  return { ok: true, output: output ?? null, receipt };
}

function refused(receipt: ReceiptView | null, code = 'denied', message?: string): ChildResult {
  return { ok: false, error: { code, message: message ?? receipt?.reasons[0] ?? code }, receipt };
}
