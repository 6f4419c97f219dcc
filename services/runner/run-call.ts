/**
 * The runner's job (gateway.md §1 steps 5–6): claim the call row, invoke the agent at most once under its
 * hard timeout, check the output, compute the charge, and hand the outcome to the settler.
 *
 * BullMQ delivers at least once. The call row decides: only the delivery that moves it from `queued` to
 * `running` invokes the agent. A delivery that finds it already `running` means the runner that claimed it
 * died: the call is closed `failed / gateway_restarted`, unbilled, and its hold released by the settler.
 */
import { compileInterface } from '../../shared/core/manifest/interface-validator.js';
import { charge, fxRateFor, type Outcome } from '../../shared/core/pricing.js';
import { divRound, formatAmount } from '../../shared/core/money.js';
import type { RunResult } from './runtimes/types.js';
import { mandateFromRow } from '../../shared/mandates/store.js';
import type { CallWaiter } from '../../shared/calls/waiter.js';
import { callChild, mintDelegationToken, prepareDelegation, revokeDelegationToken } from '../../shared/admission/delegate.js';
import type { AgentContextExtension } from './runtimes/node.js';
import type { CancelWatcher } from '../../shared/calls/cancel.js';
import { inputKey, outputKey, SETTLE_QUEUE, type CallJob, type GatewayContext, type RuntimeRunner } from '../../shared/context.js';

/** The shape of an error code an agent may report (manifest.md §3: snake_case). */
const ERROR_CODE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const MAX_ERROR_CODE = 64;

/** What the runner decided, stored on the call row (never the output). */
export interface CallOutcome {
  kind: 'success' | 'declared_error' | 'failure';
  code?: string;
  billed: boolean;
  /** Charged for the agent's own work, micro-units of the mandate currency, as a string. */
  own: string;
  duration_ms: number;
}

export interface RunnerContext extends GatewayContext {
  runtimes: RuntimeRunner;
  /** Waits for delegated calls (ctx.call); without it, agents get no ctx.call. */
  waiter?: CallWaiter;
  /** Hears cancellations (spec/mcp.md §3); without it, a running call can only time out. */
  cancels?: CancelWatcher;
}

export async function runCall(ctx: RunnerContext, callId: string): Promise<void> {
  // The claim also brings the call's mandate (one round trip; the FROM row is read, not locked).
  const claimed = await ctx.db.raw<{ rows: Array<Record<string, unknown>> }>(
    `UPDATE calls c SET status = 'running', started_at = now(), deadline_at = now() + make_interval(secs => c.timeout_ms / 1000.0)
       FROM mandates m
      WHERE c.id = ? AND c.status = 'queued' AND m.id = c.mandate_id
     RETURNING c.*, m.doc AS mandate_doc, m.revoked_at AS mandate_revoked_at, m.total AS mandate_total,
               m.spent AS mandate_spent, m.reserved AS mandate_reserved`,
    [callId],
  );
  const call = claimed.rows[0];
  if (!call) {
    const row = await ctx.db('calls').where({ id: callId }).first('status');
    if (row?.status === 'running') await closeCall(ctx, callId, 'running', failure('gateway_restarted'));
    else if (row?.status === 'settling') await enqueueSettle(ctx, callId);
    return;
  }
  const log = ctx.log.child({ call: callId });
  // The run ends at its hard timeout, or earlier when the caller cancels it (the reason tells them apart).
  let cancelWatch: Awaited<ReturnType<CancelWatcher['watch']>> | undefined;
  try {
    cancelWatch = await ctx.cancels?.watch(callId);
    await runClaimed(ctx, callId, call, log, cancelWatch?.signal);
  } catch (e) {
    // A gateway-side failure after the claim (the store, the database, a bug): the call ends failed / gateway_error,
    // unbilled, and the settler releases its hold. If even that fails, the sweeper closes it past its deadline.
    log.error({ err: { name: (e as Error)?.name, message: (e as Error)?.message } }, 'the run failed on the gateway side');
    await closeCall(ctx, callId, 'running', failure('gateway_error')).catch(() => undefined);
  } finally {
    cancelWatch?.release();
  }
}

async function runClaimed(ctx: RunnerContext, callId: string, call: Record<string, unknown>, log: RunnerContext['log'], cancelled?: AbortSignal): Promise<void> {
  const started = Date.now();
  const finish = (o: Omit<CallOutcome, 'duration_ms'>) => closeCall(ctx, callId, 'running', { ...o, duration_ms: Date.now() - started });

  const rawInput = await ctx.messaging.store.take(inputKey(callId));
  const agent = ctx.registry.get(String(call.agent_id), String(call.agent_version));
  const stored = mandateFromRow({
    id: call.mandate_id, doc: call.mandate_doc, revoked_at: call.mandate_revoked_at,
    total: call.mandate_total, spent: call.mandate_spent, reserved: call.mandate_reserved,
  });
  if (rawInput === undefined || !agent) {
    log.warn({ input: rawInput !== undefined, agent: Boolean(agent) }, 'call cannot run: input or agent missing');
    await finish(failure('gateway_error'));
    return;
  }
  const { manifest } = agent;
  const budget = stored.mandate.budget;
  const maxCost = call.max_cost === null || call.max_cost === undefined ? undefined : BigInt(String(call.max_cost));
  const fx = fxRateFor(manifest.pricing.currency, budget);
  // The agent receives the cap in its own currency, rounded down so it never believes it may spend more.
  const agentCap = maxCost !== undefined && fx && fx.num > 0n ? divRound(maxCost * fx.den, fx.num, 'down') : undefined;

  const timeout = AbortSignal.timeout(Number(call.timeout_ms));
  const signal = cancelled ? AbortSignal.any([timeout, cancelled]) : timeout;
  let extendContext: AgentContextExtension | undefined;
  const running = { id: callId, rootId: String(call.root_id), payer: String(call.payer), ...(maxCost !== undefined ? { maxCost } : {}) };
  const prepared = await prepareDelegation(ctx, stored.mandate, manifest, running).catch((e: Error) => ({ ok: false as const, reason: e.message }));
  if (prepared && !prepared.ok) {
    log.warn({ reason: prepared.reason }, 'no sub-mandate could be derived');
    await finish(failure('gateway_error'));
    return;
  }
  if (prepared && ctx.waiter) {
    const delegating = { ...ctx, waiter: ctx.waiter };
    const parent = { call: running, manifest, sub: prepared.sub, signal };
    extendContext = (agentCtx) => {
      agentCtx.call = (target, input, options?: { max_cost?: string }) => callChild(delegating, parent, target, input, options);
    };
  }

  // Remote agents delegate through POST /v0/calls with a token valid only for this run.
  const delegationToken = prepared && manifest.runtime.kind !== 'node'
    ? await mintDelegationToken(ctx, callId, manifest.runtime.timeoutS + 60)
    : undefined;

  let result: RunResult;
  try {
    result = await ctx.runtimes.run(agent, JSON.parse(rawInput), {
      callId,
      signal,
      ...(extendContext ? { extendContext } : {}),
      ...(delegationToken ? { delegationToken } : {}),
      timeoutMs: Number(call.timeout_ms),
      ...(agentCap !== undefined ? { maxCost: { amount: formatAmount(agentCap), currency: manifest.pricing.currency } } : {}),
    });
  } catch (e) {
    log.error({ err: { name: (e as Error).name, message: (e as Error).message } }, 'runtime threw');
    result = { kind: 'failure', code: 'agent_error', message: 'the runtime failed' };
  }

  if (delegationToken) await revokeDelegationToken(ctx, delegationToken);

  let outcome: Outcome;
  let output: unknown;
  if (result.kind === 'output') {
    const problems = compileInterface(manifest).output(result.output);
    if (problems.length) outcome = { kind: 'failure', code: 'invalid_output' };
    else {
      outcome = { kind: 'success', ...(result.units !== undefined ? { units: result.units } : {}), ...(result.quote !== undefined ? { quote: result.quote } : {}) };
      output = result.output;
    }
  } else if (result.kind === 'error' && (result.code.length > MAX_ERROR_CODE || !ERROR_CODE.test(result.code))) {
    // An agent's error code lands in receipts: one that is not a plain snake_case code is an agent error.
    outcome = { kind: 'failure', code: 'agent_error' };
  } else if (result.kind === 'error') {
    outcome = { kind: 'declared_error', code: result.code, ...(result.units !== undefined ? { units: result.units } : {}), ...(result.quote !== undefined ? { quote: result.quote } : {}) };
  } else {
    outcome = { kind: 'failure', code: result.code };
  }

  let billed = false;
  let own = 0n;
  try {
    const c = charge(manifest, outcome, budget, maxCost);
    billed = c.billed;
    own = c.own;
  } catch (e) {
    log.warn({ err: { message: (e as Error).message } }, 'charge refused the reported usage');
    outcome = { kind: 'failure', code: 'agent_error' };
    output = undefined;
  }
  const code = outcome.kind === 'declared_error' || outcome.kind === 'failure' ? outcome.code : undefined;
  if (output !== undefined) {
    // The output waits outside Postgres for its pickup (sync answer, GET /v0/calls/{id}, or the callback).
    await ctx.messaging.store.put(outputKey(callId), JSON.stringify(output), ctx.settings.resultTtlS);
  }
  const closed = await finish({ kind: outcome.kind as CallOutcome['kind'], ...(code ? { code } : {}), billed, own: own.toString() });
  // Someone closed the call meanwhile (the sweeper, past its deadline): it failed, so its output is not kept.
  if (!closed && output !== undefined) await ctx.messaging.store.delete(outputKey(callId));
}

function failure(code: string): CallOutcome {
  return { kind: 'failure', code, billed: false, own: '0', duration_ms: 0 };
}

/**
 * Move the call from `from` to `settling` with its outcome, then hand it to the settler. A call that is no
 * longer in `from` (someone else closed it) is left alone.
 */
export async function closeCall(ctx: GatewayContext, callId: string, from: 'queued' | 'running', outcome: CallOutcome): Promise<boolean> {
  const r = await ctx.db.raw<{ rows: unknown[] }>(
    `UPDATE calls SET status = 'settling', outcome = ?::jsonb, finished_at = now(), error_code = ?, settle_enqueued_at = now()
      WHERE id = ? AND status = ? RETURNING id`,
    [JSON.stringify(outcome), outcome.code ?? null, callId, from],
  );
  if (r.rows.length === 0) return false;
  await addSettleJob(ctx, callId, 0);
  return true;
}

/**
 * Hand a settling call to the settler. The job id deduplicates; a re-handout (sweeper) uses a fresh id, because
 * a failed job's id stays taken in Redis for an hour and settling is idempotent anyway.
 */
export async function enqueueSettle(ctx: GatewayContext, callId: string, handout = 0): Promise<void> {
  await addSettleJob(ctx, callId, handout);
  await ctx.db('calls').where({ id: callId }).update({ settle_enqueued_at: new Date(ctx.now()) });
}

/** The settle job alone (the caller records `settle_enqueued_at`; closeCall does it in its own UPDATE). */
async function addSettleJob(ctx: GatewayContext, callId: string, handout: number): Promise<void> {
  const jobId = handout ? `settle-${callId}-${handout}` : `settle-${callId}`;
  await ctx.messaging.queues.queue<CallJob>(SETTLE_QUEUE).add({ callId }, { jobId, attempts: 10, backoffMs: 500 });
}
