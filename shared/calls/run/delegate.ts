/**
 * Agents hiring agents (gateway.md §3, mandate.md §5): when a run starts for an agent that declares `calls`,
 * the gateway derives its sub-mandate, checks it never widens its parent, and gives the agent `ctx.call`.
 * Each child call goes through the same admission as an API call (`engine.submitChild`: submit/child.ts), under
 * the sub-mandate, with `delegated: true` (nobody can approve), matched to a declared `calls` slot and its max_cost.
 */
import { checkAttenuation } from '../../core/mandate/attenuation.js';
import { deriveSubMandate } from '../../core/mandate/derive.js';
import type { Mandate } from '../../core/mandate/types.js';
import type { Manifest } from '../../core/manifest/types.js';
import { subMandateBudget } from '../../core/pricing.js';
import { ensureAccountCached } from '../../ledger/accounts.js';
import type { CallWaiter } from '../answer/waiter.js';
import type { ServiceContext } from '../../context.js';
import { takeOutput } from '../answer/outputs.js';
import { saveMandate } from '../../mandates/store.js';
import { loadReceiptTree, type ReceiptView } from '../../receipts/store.js';
import type { CallEngine } from '../engine-types.js';
import { recordSubMandate } from '../transitions.js';
import type { ChildRequest, ParentRun, RunningCall } from '../submit/types.js';

export interface ChildResult {
  ok: boolean;
  output?: unknown;
  error?: { code: string; message: string };
  receipt: ReceiptView | null;
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
  await recordSubMandate(ctx.db, call.id, derived.mandate.id);
  if (manifest.downstream?.mode === 'included') await ensureAccountCached(ctx.db, manifest.namespace);
  return { ok: true, sub: derived.mandate };
}

/** One `ctx.call` of a running orchestrator: admit it, wait for it, hand back `{ok, output?, error?, receipt}`. */
export async function callChild(
  engine: CallEngine,
  waiter: CallWaiter,
  parent: ParentRun & { signal: AbortSignal },
  child: ChildRequest,
): Promise<ChildResult> {
  const ctx = engine.resources;
  const submitted = await engine.submitChild(parent, child);
  if (submitted.kind === 'refused') return refused(submitted.receipt, submitted.code, submitted.message);
  // Nobody can approve inside a delegated run: admission denies such a call, it is never held.
  if (submitted.kind === 'held') return refused(submitted.receipt, 'denied', 'nobody can approve inside a delegated run');
  const childId = submitted.callId;
  const finished = await Promise.race([
    waiter.wait(childId, submitted.timeoutMs + 30_000),
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
