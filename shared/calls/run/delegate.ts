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
import { answerQuestion, type OpenQuestion, questionOf } from '../events/answer.js';
import { CALLS_EVENTS_CHANNEL } from '../wire.js';
import { lookUntilFound } from '../events/look.js';

export interface ChildResult {
  ok: boolean;
  output?: unknown;
  error?: { code: string; message: string };
  receipt: ReceiptView | null;
  /**
   * The child asks its caller — this run — a question (docs/delegation.md, "Questions inside a delegated run"): answer
   * it (`answer(input)` resolves as `ctx.call` does, once the child goes on and ends or asks again), or pass it up with
   * `ctx.ask` and answer with what comes back. A question nobody answers ends the child `no_answer`, unbilled.
   */
  input_required?: { question: number; message: string; schema?: Record<string, unknown>; answer(input: unknown): Promise<ChildResult> };
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
  return followChild(ctx, waiter, parent.signal, { id: submitted.callId, timeoutMs: submitted.timeoutMs });
}

/** Wait for a child: its end, or its question (handed to the parent run with the way to answer it). */
async function followChild(ctx: ServiceContext, waiter: CallWaiter, signal: AbortSignal, child: { id: string; timeoutMs: number }): Promise<ChildResult> {
  const childId = child.id;
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const asked = nextQuestion(ctx, childId, stop.signal);
  let outcome: { kind: 'ended'; finished: boolean } | { kind: 'asked'; q: OpenQuestion };
  try {
    outcome = await Promise.race([
      waiter.wait(childId, child.timeoutMs + 30_000, { signal: stop.signal }).then((finished) => ({ kind: 'ended' as const, finished })),
      asked.then((q) => (q ? { kind: 'asked' as const, q } : { kind: 'ended' as const, finished: false })),
    ]);
  } finally {
    stop.abort();
    signal.removeEventListener('abort', onAbort);
  }
  if (outcome.kind === 'asked' && !signal.aborted) {
    const { question, request } = outcome.q;
    return {
      ok: false,
      error: { code: 'input_required', message: `the delegated call asks a question (${question}): answer it, or pass it up with ctx.ask` },
      receipt: null,
      input_required: {
        question,
        message: request?.message ?? '',
        ...(request?.schema ? { schema: request.schema } : {}),
        answer: async (input) => {
          await answerQuestion(ctx, childId, input, question);
          return followChild(ctx, waiter, signal, child);
        },
      },
    };
  }
  const receipt = await loadReceiptTree(ctx.db, childId);
  if (!receipt) {
    return { ok: false, error: { code: 'timeout', message: 'the delegated call had not finished when the run stopped waiting' }, receipt };
  }
  if (receipt.status !== 'succeeded') {
    return { ok: false, error: { code: receipt.error ?? 'agent_error', message: `the delegated call failed: ${receipt.error ?? 'agent_error'}` }, receipt };
  }
  // The parent is the child's synchronous consumer: handed over, so a later GET of the child says `collected`.
  const output = await takeOutput(ctx, childId);
  return { ok: true, output: output ?? null, receipt };
}

/** The child's next open question, woken by `calls-events` (and a look every second); undefined once `stop` fires. */
function nextQuestion(ctx: ServiceContext, childId: string, stop: AbortSignal): Promise<OpenQuestion | undefined> {
  return lookUntilFound(ctx.messaging.notifier, { channel: CALLS_EVENTS_CHANNEL, callId: childId, everyMs: 1000, signal: stop }, () =>
    questionOf(ctx, childId),
  );
}

function refused(receipt: ReceiptView | null, code = 'denied', message?: string): ChildResult {
  return { ok: false, error: { code, message: message ?? receipt?.reasons[0] ?? code }, receipt };
}
