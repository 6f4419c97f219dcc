/**
 * Following a call from the MCP request that made it (or resumed it): progress notifications while it is queued or
 * running, its events relayed (call-events.ts), the client's cancellation cancelling it, and its end read from the
 * receipt. A question the call asks ends the follow with the question, when the client can answer it as a form
 * (call-agent.ts turns it into an input request); otherwise the call stays held for `POST /v0/calls/{id}/input` and
 * the follow waits on, as long as the question may stay open.
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { callStatus } from '../../../shared/calls/transitions.js';
import { takeOutput } from '../../../shared/calls/answer/outputs.js';
import { loadReceiptTree } from '../../../shared/receipts/store.js';
import { finishedAnswer } from './call-answers.js';
import { formSchema, relayEvents, type OpenQuestion } from './call-events.js';
import type { McpDeps, ToolAnswer } from './tools.js';

/** How long past its hard timeout a call may take to settle before the tool answers `running`. */
const SETTLE_GRACE_MS = 15_000;

/** What call_agent answered, and its outcome class in the call-latency histogram (callOutcomeClass's words). */
export interface Answered {
  answer: ToolAnswer;
  outcome: string;
}

/** How a follow ended: with the tool's answer, or with a question the client can answer as a form. */
export type Followed = ({ kind: 'answer' } & Answered) | { kind: 'question'; callId: string; question: OpenQuestion };

export interface FollowOptions {
  /** The client can answer a question as a form (an input request). */
  canAsk: boolean;
  /** Relay only the events after this one (a resumed follow has relayed the earlier ones). */
  after?: number;
  /** A question not to ask again on this request (its form was dismissed). */
  dismissed?: number;
}

export async function follow(deps: McpDeps, call: { callId: string; timeoutMs: number }, ctx: ServerContext, options: FollowOptions): Promise<Followed> {
  const { callId, timeoutMs } = call;
  const { signal } = ctx.mcpReq;
  const onCancel = (): void => {
    requestCancel(deps.engine, callId).catch((e) => deps.ctx.log.error({ call: callId, err: { message: (e as Error).message } }, 'cancelling the call failed'));
  };
  if (signal.aborted) onCancel();
  else signal.addEventListener('abort', onCancel, { once: true });
  const progressToken = ctx.mcpReq._meta?.progressToken;
  // Events are read only for someone who hears them (progress) or can answer them (a form): a plain call waits on its end.
  const relay = progressToken !== undefined || options.canAsk ? await relayEvents(deps, callId, ctx, options.after) : undefined;
  try {
    let progress = 0;
    const report = async (status: string): Promise<void> => {
      if (progressToken === undefined || signal.aborted) return;
      progress += 1;
      await ctx.mcpReq
        .notify({ method: 'notifications/progress', params: { progressToken, progress, message: `call ${callId} ${status}` } })
        .catch(() => undefined);
    };
    await report('queued');
    // A follow resumed after a question starts as one that waited: the question stopped the call's clock.
    let waited = options.after !== undefined;
    let deadline = Date.now() + timeoutMs + SETTLE_GRACE_MS + (waited ? deps.ctx.settings.inputTtlS * 1000 : 0);
    const status = async () => (await callStatus(deps.ctx.db, callId)) ?? 'queued';
    for (;;) {
      const left = deadline - Date.now();
      const slice = Math.max(1, relay ? Math.min(deps.progressIntervalMs, left) : left);
      const woke = relay ? await relay.wait(slice) : (await deps.waiter.wait(callId, slice)) ? 'done' : 'idle';
      if (woke === 'done') break;
      const q = relay?.question;
      if (q && options.canAsk && q.question !== options.dismissed && formSchema(q.request.schema)) return { kind: 'question', callId, question: q };
      // A question stops the call's clock: its caller may take up to HOLON_INPUT_TTL_S to answer it.
      if (relay?.asked && !waited) {
        waited = true;
        deadline += deps.ctx.settings.inputTtlS * 1000;
      }
      if (Date.now() >= deadline) {
        const now = await status();
        return {
          kind: 'answer',
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
    signal.removeEventListener('abort', onCancel);
    await relay?.close();
  }
  const receipt = (await loadReceiptTree(deps.ctx.db, callId))!;
  const succeeded = receipt.status === 'succeeded';
  return {
    kind: 'answer',
    answer: finishedAnswer(receipt, succeeded ? await takeOutput(deps.ctx, callId) : undefined),
    outcome: succeeded ? 'succeeded' : 'failed',
  };
}
