/**
 * A finished call's output and who it is for (docs/lifecycle.md, "The output and its consumers").
 *
 * The runner stores the output in the ephemeral store for HOLON_RESULT_TTL_S (`outputKey`, shared/calls/run/run-call.ts).
 * It is kept until every consumer the call declared has it, or until that TTL ends, whichever comes first:
 *   - `sync`: the synchronous answer (POST /v0/calls without `Prefer: respond-async`, MCP call_agent, tasks/result,
 *     a parent's ctx.call);
 *   - `webhook`: the delivery of `callback_url`, once an attempt succeeded.
 * A call with a `callback_url` names its consumers at admission, before its run is queued (`declareConsumers`), so a
 * consumer finishing first never deletes what another still needs; a call with one consumer needs no list (its one
 * hand-over collects it). Reading — GET /v0/calls/{id}, a long-poll, an Idempotency-Key replay, a webhook attempt —
 * hands nothing over, however often. Once collected, a note says so (for HOLON_RESULT_TTL_S): an answer without the
 * output then says `collected`, and `expired` when the TTL ended first. Nothing of the output outlives its TTL.
 */
import type { ServiceContext } from '../../context.js';
import type { Kept } from '../../messaging/types.js';
import { outputKey } from '../wire.js';

export type OutputConsumer = 'sync' | 'webhook';

/** Why a succeeded call's output is not there: every declared consumer had it, or its TTL ended first. */
export type OutputGone = 'collected' | 'expired';

export type OutputState = { kept: true; output: unknown } | { kept: false; gone: OutputGone };

function stateOf(found: Kept): OutputState {
  if (found.kind === 'kept') return { kept: true, output: JSON.parse(found.value) };
  return { kept: false, gone: found.kind === 'collected' ? 'collected' : 'expired' };
}

/**
 * Admission (before the run is queued): the output of `callId` is kept for these consumers. Lives as long as the
 * output could: the input's wait and the run (`timeoutS` each), the queue grace, then the output's own TTL.
 */
export async function declareConsumers(ctx: ServiceContext, callId: string, consumers: readonly OutputConsumer[], timeoutS: number): Promise<void> {
  if (consumers.length === 0) return;
  await ctx.messaging.store.keepFor(outputKey(callId), consumers, 2 * timeoutS + ctx.settings.queueGraceS + ctx.settings.resultTtlS);
}

/** The output as a reader sees it (GET, long-poll, replay, a webhook attempt): handed to nobody. */
export async function readOutput(ctx: ServiceContext, callId: string): Promise<OutputState> {
  return stateOf(await ctx.messaging.store.peekKept(outputKey(callId)));
}

/** `consumer` has the output (read in the same step); deleted when it was the last consumer the call declared. */
export async function handOutput(ctx: ServiceContext, callId: string, consumer: OutputConsumer): Promise<OutputState> {
  return stateOf(await ctx.messaging.store.handOver(outputKey(callId), consumer, ctx.settings.resultTtlS));
}

/** The synchronous consumer's pickup (MCP call_agent and tasks/result, a parent's ctx.call): the output or undefined. */
export async function takeOutput(ctx: ServiceContext, callId: string): Promise<unknown> {
  const state = await handOutput(ctx, callId, 'sync');
  return state.kept ? state.output : undefined;
}

/** A succeeded call's output in an answer: `{output}`, or `{output: null, output_gone}` saying why it is not there. */
export function outputFields(state: OutputState): { output: unknown; output_gone?: OutputGone } {
  return state.kept ? { output: state.output } : { output: null, output_gone: state.gone };
}
