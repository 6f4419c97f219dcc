/**
 * The `call_agent` tool (spec/mcp.md §1–3): the same admission, reservation, billing and receipts as
 * POST /v0/calls, under the connection's mandate, always answered in the same tool call:
 *
 *   needs approval   ask_in_client principal + a client that declared `elicitation` → a form (agent, worst case,
 *                    reasons, the input it would receive): accept = approve and run now, decline = reject,
 *                    dismissed or unanswered = stays pending. Otherwise `pending_approval` with the approval id.
 *   queued/running   progress notifications every `progressIntervalMs` when the client sent a progress token.
 *   cancelled        the client's `notifications/cancelled` cancels the call: the agent sees the cancellation
 *                    and nothing is billed (failed / cancelled).
 *   finished         `{status, output?, receipt}`; a failure is `isError` with `{error: {code, message}}`.
 *
 * Each call_agent is measured like POST /v0/calls: `holon_call_request_duration_seconds`, surface `mcp`, by the
 * outcome class of REST's answer to the same call (succeeded, pending, refused, failed, error).
 */
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type ErrorCode, HolonError, type Problem } from '../../../shared/core/errors.js';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { callStatus } from '../../../shared/calls/transitions.js';
import { decideAndSubmit } from '../../../shared/calls/submit/decide-approval.js';
import { takeOutput } from '../../../shared/calls/answer/outputs.js';
import { describeFailure, loadReceiptTree, type ReceiptView } from '../../../shared/receipts/store.js';
import type { Submitted } from '../../../shared/calls/submit/submit.js';
import type { Held } from '../../../shared/calls/submit/types.js';
import { parseAmount } from '../../../shared/core/money.js';
import { callOutcomeClass } from '../../../shared/platform/metrics.js';
import { httpStatusOf } from '../http-status.js';
import { mandateTreeScope } from '../principal.js';
import { describeReceipt, type McpDeps, type McpPrincipal, type ToolAnswer } from './tools.js';
import { untrusted, untrustedJson } from './untrusted.js';
import { relayEvents } from './call-events.js';
import type { CallAgentArgs } from './tool-args.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How long past its hard timeout a call may take to settle before the tool answers `running`. */
const SETTLE_GRACE_MS = 15_000;

type PendingApproval = Held['approval'];

/** A refusal as call_agent answers it: from admission (its code), or read back from a receipt (a task's). */
interface RefusedCall {
  code: string;
  message: string;
  problems?: readonly Problem[];
  receipt: ReceiptView;
}

export interface CallAgentOptions {
  /** The MCP request's context (its signal, progress token, notifications). */
  extra: Extra;
  /** The client declared the elicitation capability. */
  canElicit: boolean;
}

/** The call `call_agent` asks for, through the same admission as POST /v0/calls, under the connection's mandate. */
export async function submitFor(deps: McpDeps, who: McpPrincipal, args: CallAgentArgs): Promise<Submitted> {
  const { agent, capability, approval } = args;
  if ((agent === undefined) === (capability === undefined)) throw new HolonError('invalid_request', 'name exactly one of "agent" or "capability"');
  const maxCost = args.max_cost !== undefined ? parseAmount(args.max_cost) : undefined;
  return deps.engine.submit({
    mandateId: who.mandateId,
    ...(agent ? { agent } : {}),
    ...(capability ? { capability } : {}),
    input: args.input,
    ...(maxCost !== undefined ? { maxCost } : {}),
    ...(approval ? { approval: { id: approval, inScope: mandateTreeScope(who.mandateId) } } : {}),
  });
}

/** What call_agent answered, and its outcome class in the call-latency histogram (callOutcomeClass's words). */
export interface Answered {
  answer: ToolAnswer;
  outcome: string;
}

const outcomeOfCode = (code: ErrorCode): string => callOutcomeClass(httpStatusOf(code));

export async function callAgent(deps: McpDeps, who: McpPrincipal, args: CallAgentArgs, options: CallAgentOptions): Promise<ToolAnswer> {
  const started = performance.now();
  let outcome = 'error';
  try {
    const answered = await answerCall(deps, who, args, options);
    outcome = answered.outcome;
    return answered.answer;
  } catch (e) {
    // Thrown: bad arguments (a refused class, as REST's 4xx) or the gateway's own failure.
    outcome = e instanceof HolonError ? outcomeOfCode(e.code) : 'error';
    throw e;
  } finally {
    deps.ctx.metrics?.callRequestSeconds.observe({ surface: 'mcp', outcome }, (performance.now() - started) / 1000);
  }
}

async function answerCall(deps: McpDeps, who: McpPrincipal, args: CallAgentArgs, options: CallAgentOptions): Promise<Answered> {
  const { extra } = options;
  let submitted = await submitFor(deps, who, args);
  const pending = (held: Pick<Held, 'approval' | 'receipt'>): Answered => ({ answer: pendingAnswer(held), outcome: 'pending' });

  if (submitted.kind === 'held') {
    const held = submitted;
    if (!who.askInClient || !options.canElicit) return pending(held);
    const action = await askInClient(deps, extra, held.approval, args.input);
    if (action === 'accept') {
      const decided = await decideAndSubmit(deps.engine, held.approval.id, 'run');
      if (decided.kind !== 'submitted') throw new HolonError('gateway_error', 'the approval did not submit the call');
      submitted = decided.submitted;
    } else if (action === 'decline') {
      await decideAndSubmit(deps.engine, held.approval.id, 'reject');
      return { answer: declinedAnswer(held), outcome: 'refused' };
    } else {
      return pending(held);
    }
  }

  if (submitted.kind === 'refused') return { answer: refusedAnswer(submitted), outcome: outcomeOfCode(submitted.code) };
  // Approved in the client and run: a call cannot be held twice (its approval is used).
  if (submitted.kind === 'held') return pending(submitted);
  return follow(deps, submitted, extra, options.canElicit);
}

function declinedAnswer(held: Pick<Held, 'approval' | 'receipt'>): ToolAnswer {
  return {
    isError: true,
    structured: {
      status: 'rejected',
      error: { code: 'approval_rejected', message: 'the approval was declined in the client; nothing ran and nothing was charged' },
      receipt: held.receipt,
    },
    text: `declined: the call to ${held.approval.agent} did not run; nothing was charged. ${describeReceipt(held.receipt)}`,
  };
}

export function pendingAnswer(held: Pick<Held, 'approval' | 'receipt'>): ToolAnswer {
  const a = held.approval;
  return {
    structured: { status: 'pending_approval', approval: a, receipt: held.receipt },
    text:
      `pending approval ${a.id}: ${a.agent}, worst case ${a.worst_case} ${a.currency} (${a.reasons.join('; ')}). ` +
      `A human decides it with the human key (POST /v0/approvals/${a.id}); once granted, call again with "approval": "${a.id}".`,
  };
}

export function refusedAnswer(r: RefusedCall): ToolAnswer {
  return {
    isError: true,
    structured: {
      status: r.receipt.status,
      error: { code: r.code, message: r.message, ...(r.problems ? { problems: r.problems } : {}) },
      receipt: r.receipt,
    },
    text: `${r.receipt.status}: ${r.message}${r.problems ? ` (${r.problems.map((p) => `${p.path} ${p.message}`).join('; ')})` : ''}. ${describeReceipt(r.receipt)}`,
  };
}

type ElicitAction = 'accept' | 'decline' | 'cancel';

async function askInClient(deps: McpDeps, extra: Extra, approval: PendingApproval, input: unknown): Promise<ElicitAction> {
  const agent = deps.ctx.registry.resolve(approval.agent);
  const summary = agent.ok ? agent.agent.manifest.summary : '';
  const message = [
    `Holon: approve a call to ${approval.agent}?`,
    `Worst case: ${approval.worst_case} ${approval.currency} (reserved before the run; only what the agent's pricing allows is charged).`,
    `Why approval is needed: ${approval.reasons.join('; ')}.`,
    ...(summary ? [`What the author says it does: ${untrusted(summary)}`] : []),
    `The input it would receive:`,
    untrustedJson(input),
  ].join('\n');
  try {
    const result = await extra.sendRequest(
      { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } } },
      ElicitResultSchema,
      { signal: extra.signal, timeout: deps.elicitationTimeoutMs },
    );
    return result.action;
  } catch (e) {
    if (extra.signal.aborted) throw e;
    // The client failed to answer (timeout, error): the approval stays pending for the human key.
    deps.ctx.log.warn({ approval: approval.id, err: { message: (e as Error).message } }, 'approval form unanswered');
    return 'cancel';
  }
}

/**
 * Wait for the call, reporting progress and relaying its events (call-events.ts: chunks, progress, questions); the
 * client's cancellation cancels the call.
 */
export async function follow(deps: McpDeps, call: { callId: string; timeoutMs: number }, extra: Extra, canElicit = false): Promise<Answered> {
  const { ctx, waiter } = deps;
  const { callId, timeoutMs } = call;
  const onCancel = (): void => {
    requestCancel(deps.engine, callId).catch((e) => ctx.log.error({ call: callId, err: { message: (e as Error).message } }, 'cancelling the call failed'));
  };
  if (extra.signal.aborted) onCancel();
  else extra.signal.addEventListener('abort', onCancel, { once: true });
  const relay = await relayEvents(deps, callId, extra, canElicit);
  try {
    const progressToken = extra._meta?.progressToken;
    let progress = 0;
    const report = async (status: string): Promise<void> => {
      if (progressToken === undefined || extra.signal.aborted) return;
      progress += 1;
      await extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: `call ${callId} ${status}` } })
        .catch(() => undefined);
    };
    await report('queued');
    let deadline = Date.now() + timeoutMs + SETTLE_GRACE_MS;
    let waited = false;
    const status = async () => (await callStatus(ctx.db, callId)) ?? 'queued';
    for (;;) {
      const left = deadline - Date.now();
      // Without a progress token there is nobody to report to: wait for the whole of what is left.
      const slice = progressToken === undefined && !relay ? left : Math.min(deps.progressIntervalMs, left);
      const woke = relay ? await relay.wait(Math.max(1, slice)) : (await waiter.wait(callId, Math.max(1, slice))) ? 'done' : 'idle';
      if (woke === 'done') break;
      // A question stops the call's clock: its caller may take up to HOLON_INPUT_TTL_S to answer it.
      if (relay?.asked && !waited) {
        waited = true;
        deadline += ctx.settings.inputTtlS * 1000;
      }
      if (Date.now() >= deadline) {
        const now = await status();
        return {
          answer: {
            structured: { status: 'running', call: { id: callId, status: now } },
            text: `call ${callId} is still ${now}; follow it with get_receipt("${callId}") once it settles.`,
          },
          outcome: 'pending',
        };
      }
      if (woke === 'idle') await report(await status());
    }
  } finally {
    extra.signal.removeEventListener('abort', onCancel);
    await relay?.close();
  }
  const receipt = (await loadReceiptTree(ctx.db, callId))!;
  const succeeded = receipt.status === 'succeeded';
  return { answer: finishedAnswer(receipt, succeeded ? await takeOutput(ctx, callId) : undefined), outcome: succeeded ? 'succeeded' : 'failed' };
}

export function finishedAnswer(receipt: ReceiptView, output: unknown): ToolAnswer {
  if (receipt.status === 'succeeded') {
    return {
      structured: { status: 'succeeded', output: output ?? null, receipt },
      text: `${describeReceipt(receipt)}\noutput of ${receipt.agent ?? 'the agent'}:\n${untrustedJson(output ?? null)}`,
    };
  }
  const failure = describeFailure(receipt);
  return {
    isError: true,
    structured: { status: receipt.status, error: failure, receipt },
    text: `failed (${failure.code}). ${describeReceipt(receipt)}`,
  };
}
