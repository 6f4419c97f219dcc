/**
 * A running orchestrator's child call (gateway.md §3, mandate.md §5), from `ctx.call` (run/delegate.ts) or from
 * POST /v0/calls with the run's delegation token: matched to a slot its manifest declares (and its max_cost), then
 * admitted like any call (`submitCall`) under the sub-mandate, with `delegated: true`. A name that cannot be
 * stored, a bad max_cost or an undeclared call is refused here, with its receipt.
 */
import { matchesAgent } from '../../core/mandate/patterns.js';
import type { CallSlot, Manifest } from '../../core/manifest/types.js';
import { stringProblem } from '../../core/json-limits.js';
import { convert, ONE_RATE, tryParseAmount } from '../../core/money.js';
import { fxRateFor } from '../../core/pricing.js';
import type { ServiceContext } from '../../context.js';
import type { CallEngine } from '../engine-types.js';
import { refuseDelegated } from './refuse.js';
import { submitCall } from './submit.js';
import type { ChildRequest, Delegation, ParentRun, Submitted } from './types.js';

function slotFor(ctx: ServiceContext, manifest: Manifest, target: { agent: string } | { capability: string }): CallSlot | undefined {
  if ('capability' in target) return manifest.calls.find((c) => c.capability === target.capability);
  const resolved = ctx.registry.resolve(target.agent);
  if (!resolved.ok) return manifest.calls.find((c) => c.agent !== undefined && c.agent.split('@')[0] === target.agent.split('@')[0]);
  const { id, version } = resolved.agent.manifest;
  return manifest.calls.find((c) => c.agent !== undefined && matchesAgent(c.agent, id, version));
}

/**
 * Admit one child call of a running orchestrator (ctx.call, or POST /v0/calls with the run's delegation
 * token): match a declared slot, then the same admission as any call, under the sub-mandate.
 */
export async function submitChild(engine: CallEngine, parent: ParentRun, child: ChildRequest): Promise<Submitted> {
  const ctx = engine.resources;
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
  return submitCall(engine, {
    mandateId: sub.id,
    ...('capability' in target ? { capability: target.capability } : { agent: target.agent }),
    input,
    ...(maxCost !== undefined ? { maxCost } : {}),
    delegation,
  });
}
