/**
 * The runner's job (gateway.md §1 steps 5–6): claim the call row, invoke the agent at most once under its
 * hard timeout, check the output, compute the charge, and hand the outcome to the settler.
 *
 * BullMQ delivers at least once. The call row decides (shared/calls/transitions.ts): only the delivery that
 * moves it from `queued` to `running` invokes the agent. A delivery that finds it already `running` means the
 * runner that claimed it died: the call is closed `failed / gateway_restarted`, unbilled, and its hold released
 * by the settler. Every end of a run goes through `engine.close`, which hands the call to settlement.
 */
import { fxRateFor } from '../../core/pricing.js';
import { divRound, formatAmount } from '../../core/money.js';
import { knownMandate } from '../../mandates/store.js';
import { callChild, prepareDelegation } from './delegate.js';
import { mintDelegationToken, revokeDelegationToken } from '../delegation-tokens.js';
import type { CallEngine, CallResources, RunnerParts } from '../engine-types.js';
import { inputKey, outputKey, streamedKey } from '../wire.js';
import type { CallOutcome } from '../call-outcome.js';
import { unbilled, type UnbilledCode } from '../call-outcome.js';
import { callStatus, claimCall, enqueueSettle, type ClaimedCall } from '../transitions.js';
import { checkCallFiles, fileLinks, type FileLink } from '../../files/access.js';
import type { AgentContextExtension } from '../../runtimes/node.js';
import type { AgentVersion, RunResult } from '../../runtimes/types.js';
import type { Mandate } from '../../core/mandate/types.js';
import type { Manifest } from '../../core/manifest/types.js';
import type { CancelWatcher } from './cancel-watcher.js';
import { decideRun, type StreamedRun } from './decide-outcome.js';
import type { Closing } from '../settle/settle.js';
import { CancelledError, runDeadline } from '../../runtimes/abort.js';
import { createRunStream } from './run-stream.js';
import { addSpanAttributes } from '../../platform/tracing.js';
import { runErrorLabel } from '../../platform/metrics.js';

/** What a run works with: the engine (its resources, its other phases) and the runner's own parts. */
interface Runner {
  engine: CallEngine;
  ctx: CallResources;
  parts: RunnerParts;
}

/** The reason a run's signal fires with when its runner hands it back (the stop grace passed): neither cancel nor timeout. */
export class HandedBack extends Error {
  override readonly name = 'HandedBack';
  constructor() {
    super('the runner stopped before the run ended');
  }
}

/**
 * The signal a run ends on early: the caller's cancel or the runner's hand-back, whichever fires first (with its reason).
 * Not `AbortSignal.any`: the hand-back signal lives as long as the runner, and every run's listener on it is removed
 * here when the run ends (`dispose`) instead of waiting on the garbage collector.
 */
function earlyEnd(cancelled: AbortSignal | undefined, handBack: AbortSignal | undefined): { signal?: AbortSignal; dispose(): void } {
  const sources = [cancelled, handBack].filter((s): s is AbortSignal => s !== undefined);
  if (sources.length < 2) return { ...(sources[0] ? { signal: sources[0] } : {}), dispose: () => {} };
  const controller = new AbortController();
  const listeners = sources.map((s) => {
    const fire = () => controller.abort(s.reason);
    if (s.aborted) fire();
    else s.addEventListener('abort', fire, { once: true });
    return () => s.removeEventListener('abort', fire);
  });
  return {
    signal: controller.signal,
    dispose: () => {
      for (const off of listeners) off();
    },
  };
}

export async function runCall(engine: CallEngine, parts: RunnerParts, callId: string): Promise<void> {
  const ctx = engine.resources;
  const call = await claimCall(ctx.db, callId);
  if (!call) {
    const status = await callStatus(ctx.db, callId);
    if (status === 'running') await engine.close(callId, 'running', unbilled('gateway_restarted'));
    else if (status === 'settling') await enqueueSettle(ctx, callId);
    return;
  }
  await runOwned({ engine, ctx, parts }, { callId, call, log: ctx.log.child({ call: callId }) });
}

/**
 * A call admitted `running` in this process (run-here.ts): its admission stood for the claim, and its input is the
 * admitted one, never stored.
 */
export function runAdmitted(
  engine: CallEngine,
  parts: RunnerParts,
  callId: string,
  admitted: { call: ClaimedCall; input: unknown; ranOut?: () => void },
): Promise<void> {
  const ctx = engine.resources;
  const { call, input, ranOut } = admitted;
  return runOwned({ engine, ctx, parts }, { callId, call, log: ctx.log.child({ call: callId }), admitted: { input, ...(ranOut ? { ranOut } : {}) } });
}

async function runOwned(runner: Runner, claimed: Claimed): Promise<void> {
  const { engine, parts } = runner;
  const { callId, log } = claimed;
  // The run ends at its hard timeout, or earlier when the caller cancels it (the reason tells them apart).
  let cancelWatch: Awaited<ReturnType<CancelWatcher['watch']>> | undefined;
  try {
    // Registered before the admission that started it here answers: no cancel can have come first.
    cancelWatch = await parts.cancels?.watch(callId, { admittedHere: claimed.admitted !== undefined });
    await runClaimed(runner, claimed, cancelWatch?.signal);
  } catch (e) {
    // A gateway-side failure after the claim (the store, the database, a bug): the call ends failed / gateway_error,
    // unbilled, and the settler releases its hold. If even that fails, the sweeper closes it past its deadline.
    log.error({ err: { name: (e as Error)?.name, message: (e as Error)?.message } }, 'the run failed on the gateway side');
    await engine.close(callId, 'running', unbilled('gateway_error')).catch(() => undefined);
  } finally {
    cancelWatch?.release();
  }
}

type Finish = (o: Omit<CallOutcome, 'duration_ms'>) => Promise<boolean>;

/** A call this runner claimed: its id, its row, and the log that names it. */
interface Claimed {
  callId: string;
  call: ClaimedCall;
  log: CallResources['log'];
  /** Admitted `running` here: the input as admitted (no store round trip); `ranOut` frees its slot once the agent is done. */
  admitted?: { input: unknown; ranOut?: () => void };
}

async function runClaimed(runner: Runner, claimed: Claimed, cancelled?: AbortSignal): Promise<void> {
  const { engine, ctx, parts } = runner;
  const { callId, call, log } = claimed;
  const started = Date.now();
  let facts: Closing['facts'] | undefined;
  const finish: Finish = (o) => engine.close(callId, 'running', { ...o, duration_ms: Date.now() - started }, facts);

  const loaded = await loadRun(runner, claimed);
  if ('fail' in loaded) {
    await finish(unbilled(loaded.fail));
    return;
  }
  const { agent, input, mandate, links } = loaded;
  const { manifest } = agent;
  facts = closingFacts(ctx, claimed, manifest);
  addSpanAttributes({ 'holon.agent_id': manifest.id, 'holon.runtime': manifest.runtime.kind });
  const budget = mandate.budget;
  const { maxCost } = call;
  const fx = fxRateFor(manifest.pricing.currency, budget);
  // The agent receives the cap in its own currency, rounded down so it never believes it may spend more.
  const agentCap = maxCost !== undefined && fx && fx.num > 0n ? divRound(maxCost * fx.den, fx.num, 'down') : undefined;

  const early = earlyEnd(cancelled, parts.handBack);
  const deadline = runDeadline(call.timeoutMs, early.signal);
  const { signal } = deadline;
  const stream = createRunStream({ ctx, callId, manifest, budget, maxCost, deadline });
  try {
    const delegation = await delegationFor(runner, claimed, { mandate, manifest, signal });
    if (!delegation) {
      await finish(unbilled('gateway_error'));
      return;
    }
    const { extendContext, delegationToken } = delegation;

    let result: RunResult;
    const ranAt = Date.now();
    try {
      result = await parts.runtimes.run(agent, input, {
        callId,
        signal,
        ...(links ? { files: links } : {}),
        ...(extendContext ? { extendContext } : {}),
        ...(delegationToken ? { delegationToken } : {}),
        timeoutMs: call.timeoutMs,
        stream,
        ...(agentCap !== undefined ? { maxCost: { amount: formatAmount(agentCap), currency: manifest.pricing.currency } } : {}),
      });
    } catch (e) {
      log.error({ err: { name: (e as Error).name, message: (e as Error).message } }, 'runtime threw');
      result = { kind: 'failure', code: 'agent_error', message: 'the runtime failed' };
    }

    // The agent is done: a slot it held here is free for the next call while this one closes and settles.
    claimed.admitted?.ranOut?.();
    // What the stream delivered is final once the appends in flight are in: nothing joins it after the result.
    await stream.seal();
    // Read as the run returns: a hand-back that fires after the agent answered changes nothing.
    const handedBack = signal.reason instanceof HandedBack && result.kind === 'failure';
    if (delegationToken) await revokeDelegationToken(ctx, delegationToken);
    if (handedBack) {
      // Handed back: whatever the agent did is not billed, and the call ends for its caller now (it may send it again).
      log.warn('the runner stopped before the run ended: gateway_restarted, unbilled');
      await finish(unbilled('gateway_restarted'));
      return;
    }
    // Only a run that streamed, asked or was cancelled reads how its caller followed it (no store read on the hot path).
    const followed = stream.state.active || manifest.interface.stream || signal.aborted ? await howCancelled(ctx, callId, signal) : {};
    const streamed = { state: stream.state, ...followed };
    await closeRun(ctx, claimed, { manifest, result, budget, maxCost, ranAt, streamed }, finish);
  } finally {
    deadline.dispose();
    early.dispose();
  }
}

/**
 * The row's facts its settlement needs, known here: only for a top-level call that can derive no sub-mandate and is
 * not paid from outside — such a call is closed in its settlement's own transaction (settle/settle.ts `Closing`).
 */
function closingFacts(ctx: CallResources, { callId, call }: Claimed, manifest: Manifest): Closing['facts'] | undefined {
  if (call.rootId !== callId || manifest.calls.length > 0 || call.payer === ctx.payments?.externalAccount) return undefined;
  return { agentId: call.agentId, agentVersion: call.agentVersion, payer: call.payer, currency: call.currency };
}

/** What a claimed call runs with: its input, its agent, the mandate it runs under, and the links of the files it names. */
interface LoadedRun {
  input: unknown;
  agent: AgentVersion;
  mandate: Mandate;
  links: Record<string, FileLink> | undefined;
}

/** The input (taken from the store), the agent, the mandate and the input's files; or why the call cannot run. */
async function loadRun(runner: Runner, { callId, call, log, admitted }: Claimed): Promise<LoadedRun | { fail: UnbilledCode }> {
  const { ctx, parts } = runner;
  const rawInput = admitted ? undefined : await ctx.messaging.store.take(inputKey(callId));
  const agent = ctx.registry.get(call.agentId, call.agentVersion);
  const mandate = await knownMandate(ctx.db, call.mandateId);
  if ((!admitted && rawInput === undefined) || !agent || !mandate) {
    log.warn(
      { input: admitted !== undefined || rawInput !== undefined, agent: Boolean(agent), mandate: Boolean(mandate) },
      'call cannot run: input, agent or mandate missing',
    );
    return { fail: 'gateway_error' };
  }
  const input: unknown = admitted ? admitted.input : JSON.parse(rawInput!);
  // The files the input names, checked again: one deleted or expired since admission fails the call, never billed.
  const files = await checkCallFiles(ctx.db, input, mandate, ctx.now());
  if (!files.ok) {
    log.info('a file the input names is gone: file_not_found');
    return { fail: 'file_not_found' };
  }
  let links: Record<string, FileLink> | undefined;
  if (files.files.length > 0) {
    if (!parts.fileLinks) {
      log.error('the input names files and this runner cannot sign links');
      return { fail: 'gateway_error' };
    }
    links = fileLinks(parts.fileLinks, files.files, ctx.now());
  }
  return { input, agent, mandate, links };
}

/**
 * How the agent may delegate: `ctx.call` (with a waiter) under the sub-mandate derived for this run, and a token for
 * remote agents. Null when no sub-mandate could be derived (the call fails).
 */
async function delegationFor(
  runner: Runner,
  claimed: Claimed,
  run: { mandate: Mandate; manifest: Manifest; signal: AbortSignal },
): Promise<{ extendContext?: AgentContextExtension; delegationToken?: string } | null> {
  const { engine, ctx } = runner;
  const { callId, call, log } = claimed;
  const { mandate, manifest, signal } = run;
  let extendContext: AgentContextExtension | undefined;
  const running = { id: callId, rootId: call.rootId, payer: call.payer, ...(call.maxCost !== undefined ? { maxCost: call.maxCost } : {}) };
  const prepared = await prepareDelegation(ctx, mandate, manifest, running).catch((e: Error) => ({ ok: false as const, reason: e.message }));
  if (prepared && !prepared.ok) {
    log.warn({ reason: prepared.reason }, 'no sub-mandate could be derived');
    return null;
  }
  const { waiter } = engine;
  if (prepared && waiter) {
    const parent = { call: running, manifest, sub: prepared.sub, signal };
    extendContext = (agentCtx) => {
      agentCtx.call = (target, input, options?: { max_cost?: string }) => callChild(engine, waiter, parent, { target, input, options });
    };
  }

  // Remote agents delegate through POST /v0/calls with a token valid only for this run.
  const delegationToken = prepared && manifest.runtime.kind !== 'node' ? await mintDelegationToken(ctx, callId, manifest.runtime.timeoutS + 60) : undefined;
  return { ...(extendContext ? { extendContext } : {}), ...(delegationToken ? { delegationToken } : {}) };
}

/** The run's end: its outcome decided from the result, measured, the output kept for its pickup, the call closed. */
async function closeRun(
  ctx: CallResources,
  claimed: Pick<Claimed, 'callId' | 'log'>,
  run: { manifest: Manifest; result: RunResult; budget: Mandate['budget']; maxCost: bigint | undefined; ranAt: number; streamed: StreamedRun },
  finish: Finish,
): Promise<void> {
  const { callId, log } = claimed;
  const { manifest, result } = run;
  // Which endpoint, and how it failed (remote.ts: origin and path only, never a credential or a query string).
  if (result.kind === 'failure' && result.code === 'runtime_unavailable') {
    log.warn({ agent: `${manifest.id}@${manifest.version}`, code: result.code, reason: result.message }, `runtime_unavailable: ${result.message}`);
  }

  const decided = decideRun(manifest, result, { budget: run.budget, maxCost: run.maxCost }, run.streamed);
  ctx.metrics?.runSeconds.observe({ runtime: manifest.runtime.kind, outcome: decided.outcome.kind }, (Date.now() - run.ranAt) / 1000);
  addSpanAttributes({ 'holon.outcome': decided.outcome.kind, 'holon.error_code': runErrorLabel(decided.outcome.code) });
  if (decided.refusedUsage) log.warn({ err: { message: decided.refusedUsage } }, 'charge refused the reported usage');
  const { output } = decided;
  if (output !== undefined) {
    // The output waits outside Postgres for its pickup (sync answer, GET /v0/calls/{id}, or the callback).
    await ctx.messaging.store.put(outputKey(callId), JSON.stringify(output), ctx.settings.resultTtlS);
  }
  const closed = await finish(decided.outcome);
  // Someone closed the call meanwhile (the sweeper, past its deadline): it failed, so its output is not kept.
  if (!closed && output !== undefined) await ctx.messaging.store.delete(outputKey(callId));
}

/** Whether the caller asked for the call's stream, and, for a cancelled run, who ended it (a cancel, or a caller gone). */
async function howCancelled(ctx: CallResources, callId: string, signal: AbortSignal): Promise<Omit<StreamedRun, 'state'>> {
  const streamed = (await ctx.messaging.store.peek(streamedKey(callId))) !== undefined;
  const why = signal.reason instanceof CancelledError ? signal.reason.why : undefined;
  return { ...(streamed ? { streamed } : {}), ...(why ? { cancelWhy: why } : {}) };
}
