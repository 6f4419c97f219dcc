/**
 * The `call_agent` tool (spec/mcp.md §1–3, docs/mcp.md): the same admission, reservation, billing and receipts as
 * POST /v0/calls, under the connection's mandate. One code path for both protocol eras, written as rounds of a
 * multi-round-trip request: what the tool needs from a human is an **input request** (`resultType: "input_required"`
 * with a sealed `requestState`, request-state.ts); a 2026-07-28 client answers it by retrying the call, and a 2025
 * session gets it as an elicitation form from the SDK's legacy shim, which re-enters the tool the same way.
 *
 *   needs approval   ask_in_client principal + a client that can answer forms → input request `approval` (agent,
 *                    worst case, reasons, the input it would receive): accept = approve and run now, decline =
 *                    reject, dismissed = stays pending. Otherwise `pending_approval` with the approval id.
 *   a question       the call's agent asks (the call events' input_required) → input request `answer` with the
 *                    question's form: accepted = the answer, declined = the call is cancelled, dismissed = the call
 *                    stays held for POST /v0/calls/{id}/input.
 *   queued/running   progress notifications every `progressIntervalMs` when the client sent a progress token; with
 *                    the tasks extension declared (2026-07-28), a task instead (tasks-extension.ts).
 *   cancelled        the client's cancellation cancels the call: the agent sees it and nothing is billed.
 *   finished         `{status, output?, receipt}`; a failure is `isError` with `{error: {code, message}}`.
 *
 * Each round is measured like POST /v0/calls: `holon_call_request_duration_seconds`, surface `mcp`, by the outcome
 * class of REST's answer to the same call (succeeded, pending, refused, failed, error).
 */
import { inputRequired, inputResponse, ProtocolErrorCode, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import { type ErrorCode, HolonError } from '../../../shared/core/errors.js';
import { formatAmount, parseAmount } from '../../../shared/core/money.js';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { answerQuestion } from '../../../shared/calls/events/answer.js';
import { approvalView, loadApproval } from '../../../shared/calls/submit/approvals.js';
import { decideAndSubmit } from '../../../shared/calls/submit/decide-approval.js';
import type { Submitted } from '../../../shared/calls/submit/submit.js';
import type { Held } from '../../../shared/calls/submit/types.js';
import { callOutcomeClass } from '../../../shared/platform/metrics.js';
import { addSpanAttributes } from '../../../shared/platform/tracing.js';
import { loadReceiptTree } from '../../../shared/receipts/store.js';
import { httpStatusOf } from '../http-status.js';
import { mandateTreeScope } from '../principal.js';
import { declinedAnswer, pendingAnswer, refusedAnswer } from './call-answers.js';
import { formSchema } from './call-events.js';
import { protocolError } from './errors.js';
import { follow, type Answered, type Followed } from './follow.js';
import { argumentsDigest, type CallAgentState, type StateBody } from './request-state.js';
import { startCallTask, type TaskCreated } from './tasks-extension.js';
import type { CallAgentArgs } from './tool-args.js';
import type { McpDeps, McpPrincipal } from './tools.js';
import { untrusted, untrustedJson } from './untrusted.js';

export interface CallAgentOptions {
  /** The MCP request's context (its signal, progress token, notifications, input responses, request state). */
  ctx: ServerContext;
  /** The client can answer input requests with forms (it declared `elicitation`). */
  canAsk: boolean;
  /** A 2026-07-28 client that declared the tasks extension: an admitted call is answered as a task. */
  canTask: boolean;
}

/** A round of call_agent: the tool's answer, an input request, or a task. */
export type CallRound = ({ kind: 'answer' } & Answered) | { kind: 'input'; result: InputRequiredResult } | { kind: 'task'; result: TaskCreated };

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

const outcomeOfCode = (code: ErrorCode): string => callOutcomeClass(httpStatusOf(code));

export async function callAgent(deps: McpDeps, who: McpPrincipal, args: CallAgentArgs, options: CallAgentOptions): Promise<CallRound> {
  const started = performance.now();
  let outcome = 'error';
  try {
    const round = await roundOf(new Rounds(deps, who, args, options));
    outcome = round.kind === 'answer' ? round.outcome : 'pending';
    return round;
  } catch (e) {
    // Thrown: bad arguments (a refused class, as REST's 4xx) or the gateway's own failure.
    outcome = e instanceof HolonError ? outcomeOfCode(e.code) : 'error';
    throw e;
  } finally {
    deps.ctx.metrics?.callRequestSeconds.observe({ surface: 'mcp', outcome }, (performance.now() - started) / 1000);
  }
}

function roundOf(r: Rounds): Promise<CallRound> {
  const state = r.options.ctx.mcpReq.requestState<CallAgentState>();
  if (state === undefined) return r.first();
  // The state opened (the server's verify hook): it is this principal's; it must also be for these arguments.
  if (typeof state !== 'object' || state.digest !== r.digest) {
    throw protocolError(ProtocolErrorCode.InvalidParams, 'requestState belongs to other arguments: retry with the arguments of the call that asked');
  }
  return state.step === 'approval' ? r.approval(state) : r.answer(state);
}

const answered = (a: Answered): CallRound => ({ kind: 'answer', ...a });

/** The rounds of one call_agent request: each reads what it needs and answers a CallRound. */
class Rounds {
  readonly digest: string;
  constructor(
    readonly deps: McpDeps,
    readonly who: McpPrincipal,
    readonly args: CallAgentArgs,
    readonly options: CallAgentOptions,
  ) {
    this.digest = argumentsDigest(args);
  }

  async first(): Promise<CallRound> {
    const submitted = await submitFor(this.deps, this.who, this.args);
    if (submitted.kind === 'held') {
      if (!this.who.askInClient || !this.options.canAsk) return answered(pending(submitted));
      return this.input('approval', this.approvalForm(submitted.approval), {
        step: 'approval',
        approval: submitted.approval.id,
        worstCase: submitted.approval.worst_case,
      });
    }
    return this.admitted(submitted);
  }

  /** The retry of an approval form: accepted runs the call now, declined rejects it, anything else leaves it pending. */
  async approval(state: Extract<CallAgentState, { step: 'approval' }>): Promise<CallRound> {
    const { deps, who } = this;
    const found = await loadApproval(deps.ctx.db, state.approval, deps.ctx.now());
    if (!found || found.approval.mandateId !== who.mandateId || formatAmount(found.approval.worstCase) !== state.worstCase) {
      throw protocolError(ProtocolErrorCode.InvalidParams, 'the approval this requestState names is not the one shown: call the tool again without it');
    }
    const receipt = (await loadReceiptTree(deps.ctx.db, found.approval.receiptId))!;
    const held = { approval: approvalView(found.approval), receipt };
    const response = inputResponse(this.options.ctx.mcpReq.inputResponses, 'approval');
    const action = response.kind === 'elicit' ? response.action : 'cancel';
    // Decided meanwhile (by the human key, or expired): the form's answer no longer decides anything.
    if (found.approval.status !== 'pending' || action === 'cancel') return answered(pending(held));
    if (action === 'decline') {
      await decideAndSubmit(deps.engine, found.approval.id, 'reject');
      return answered({ answer: declinedAnswer(held), outcome: 'refused' });
    }
    const decided = await decideAndSubmit(deps.engine, found.approval.id, 'run');
    if (decided.kind !== 'submitted') throw new HolonError('gateway_error', 'the approval did not submit the call');
    // Approved and run: a call cannot be held twice (its approval is used).
    if (decided.submitted.kind === 'held') return answered(pending(decided.submitted));
    return this.admitted(decided.submitted);
  }

  /** The retry of a question's form: the answer goes to the call, which is then followed again. */
  async answer(state: Extract<CallAgentState, { step: 'question' }>): Promise<CallRound> {
    const { deps } = this;
    const call = await deps.ctx.db('calls').where({ id: state.call }).first('timeout_ms', 'mandate_id');
    if (!call || call.mandate_id !== this.who.mandateId) throw protocolError(ProtocolErrorCode.InvalidParams, 'the call this requestState names is not yours');
    const response = inputResponse(this.options.ctx.mcpReq.inputResponses, 'answer');
    const action = response.kind === 'elicit' ? response.action : 'cancel';
    if (action === 'decline') await requestCancel(deps.engine, state.call);
    let after = state.question;
    if (action === 'accept') {
      try {
        await answerQuestion(deps.ctx, state.call, response.kind === 'elicit' ? (response.content ?? {}) : {}, state.question);
      } catch (e) {
        if (!(e instanceof HolonError)) throw e;
        // Refused by the question's schema (422): asked again. Answered elsewhere meanwhile (409): the call goes on.
        if (e.code === 'rejected_input') after = state.question - 1;
      }
    }
    return this.followed(state.call, Number(call.timeout_ms), { after, ...(action === 'cancel' ? { dismissed: state.question } : {}) });
  }

  /** An admitted call: a task for a client that takes them, else followed on this request. */
  private async admitted(submitted: Exclude<Submitted, { kind: 'held' }>): Promise<CallRound> {
    if (submitted.kind === 'refused') return answered({ answer: refusedAnswer(submitted), outcome: outcomeOfCode(submitted.code) });
    addSpanAttributes({ 'holon.call_id': submitted.callId });
    if (this.options.canTask && !this.who.paying) return { kind: 'task', result: await startCallTask(this.deps, this.who, submitted) };
    return this.followed(submitted.callId, submitted.timeoutMs, {});
  }

  private async followed(callId: string, timeoutMs: number, resume: { after?: number; dismissed?: number }): Promise<CallRound> {
    const f: Followed = await follow(this.deps, { callId, timeoutMs }, this.options.ctx, { canAsk: this.options.canAsk, ...resume });
    if (f.kind === 'answer') return f;
    const { question, request } = f.question;
    const schema = formSchema(request.schema)!;
    const message = `The agent of call ${callId} asks: ${untrusted(request.message)}`;
    return this.input('answer', { message, requestedSchema: schema }, { step: 'question', call: callId, question });
  }

  private input(key: string, form: { message: string; requestedSchema: ReturnType<typeof formSchema> & object }, body: StateBody): CallRound {
    const { deps, who } = this;
    const requestState = deps.requestState.mint(ownerOf(who), body, this.digest);
    return { kind: 'input', result: inputRequired({ inputRequests: { [key]: inputRequired.elicit({ mode: 'form', ...form }) }, requestState }) };
  }

  private approvalForm(approval: Held['approval']): { message: string; requestedSchema: { type: 'object'; properties: Record<string, never> } } {
    const agent = this.deps.ctx.registry.resolve(approval.agent);
    const summary = agent.ok ? agent.agent.manifest.summary : '';
    const message = [
      `Holon: approve a call to ${approval.agent}?`,
      `Worst case: ${approval.worst_case} ${approval.currency} (reserved before the run; only what the agent's pricing allows is charged).`,
      `Why approval is needed: ${approval.reasons.join('; ')}.`,
      ...(summary ? [`What the author says it does: ${untrusted(summary)}`] : []),
      `The input it would receive:`,
      untrustedJson(this.args.input),
    ].join('\n');
    return { message, requestedSchema: { type: 'object', properties: {} } };
  }
}

const pending = (held: Pick<Held, 'approval' | 'receipt'>): Answered => ({ answer: pendingAnswer(held), outcome: 'pending' });

/** Whose request state it is (its seal's additional data): the principal that made the call. */
export const ownerOf = (who: McpPrincipal): string => `${who.owner ?? 'payer'}|${who.mandateId}`;
