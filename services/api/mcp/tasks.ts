/**
 * The MCP tasks of 2025-11-25 sessions on `/mcp` (docs/mcp.md, "Tasks"; served here: SDK v2 has no tasks API for the
 * 2025 era, and 2026-07-28 clients get the tasks extension, tasks-extension.ts): `call_agent` declares
 * `execution.taskSupport: "optional"`. A `tools/call` that carries `task` is admitted and reserved as ever, and
 * answered at once with the task; `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` read the calls table
 * (shared/calls/tasks.ts), never a process's memory, so any API process answers them and a restart loses nothing.
 *
 *   task id              the call id (= the receipt id)
 *   who sees it          its creator only (the agent key, or the dev operator, under the same mandate): else -32602
 *   tasks/result         waits (woken by `calls-done`, the receipt the truth) and answers what the synchronous
 *                        call_agent answers: {status, output?, receipt}; a success's output is handed over once
 *   tasks/cancel         the call's cancellation (shared/calls/cancel.ts): unbilled; a task already final is -32602
 *   approvals            a task never shows a form: a call that needs approval completes `pending_approval`
 */
import { ProtocolErrorCode, RELATED_TASK_META_KEY, type CallToolResult, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { approvalView, loadApproval } from '../../../shared/calls/submit/approvals.js';
import { cancelAndWait, requestCancel } from '../../../shared/calls/cancel.js';
import { takeOutput } from '../../../shared/calls/answer/outputs.js';
import { isTerminal, listTasks, readTask, recordTask, type CallTask, type TaskOwner } from '../../../shared/calls/tasks.js';
import { loadReceiptTree, type ReceiptView } from '../../../shared/receipts/store.js';
import { finishedAnswer, pendingAnswer, refusedAnswer } from './call-answers.js';
import { submitFor } from './call-agent.js';
import { protocolError } from './errors.js';
import type { CallAgentArgs } from './tool-args.js';
import type { McpDeps, McpPrincipal, ToolAnswer } from './tools.js';

/** How long one wait of tasks/result lasts before it reads the database again (a lost notification costs this). */
const RESULT_SLICE_MS = 30_000;

function ownerOf(who: McpPrincipal): TaskOwner {
  // A connection always has one (server.ts); without it nobody could be told apart, so nothing is shared.
  if (!who.owner) throw protocolError(ProtocolErrorCode.InvalidRequest, 'this connection cannot run tasks');
  return { owner: who.owner, mandateId: who.mandateId };
}
const ttlMs = (deps: McpDeps): number => deps.ctx.settings.resultTtlS * 1000;

/** `call_agent` as a task: admitted now, answered with the task; the call runs on as any other. */
export async function startLegacyTask(deps: McpDeps, who: McpPrincipal, args: CallAgentArgs): Promise<{ task: CallTask }> {
  const submitted = await submitFor(deps, who, args);
  const id = submitted.kind === 'queued' ? submitted.callId : submitted.receipt.id;
  try {
    await recordTask(deps.ctx.db, id, ownerOf(who));
  } catch (e) {
    // Nobody could follow or cancel it: the call must not run (or be billed) unseen.
    if (submitted.kind === 'queued') await requestCancel(deps.engine, id).catch(() => undefined);
    throw e;
  }
  return { task: await taskOf(deps, who, id) };
}

async function taskOf(deps: McpDeps, who: McpPrincipal, taskId: string): Promise<CallTask> {
  const task = await readTask(deps.ctx.db, taskId, ownerOf(who), ttlMs(deps));
  // Another principal's task, or none: indistinguishable.
  if (!task) throw protocolError(ProtocolErrorCode.InvalidParams, `there is no task ${taskId.slice(0, 100)} on this connection's mandate`);
  return task;
}

/** What the synchronous call_agent would have answered, for a call that is final. */
async function answerOf(deps: McpDeps, receipt: ReceiptView): Promise<ToolAnswer> {
  if (receipt.status === 'pending_approval' && receipt.approval) {
    const found = await loadApproval(deps.ctx.db, receipt.approval, deps.ctx.now());
    if (found) return pendingAnswer({ approval: approvalView(found.approval), receipt });
  }
  if (receipt.status === 'succeeded' || receipt.status === 'failed') {
    return finishedAnswer(receipt, receipt.status === 'succeeded' ? await takeOutput(deps.ctx, receipt.id) : undefined);
  }
  // Refused at admission (denied, rejected input): the receipt's reasons are the message.
  return refusedAnswer({ code: receipt.error ?? receipt.status, message: receipt.reasons.join('; ') || receipt.status, receipt });
}

const TaskParams = z.object({ taskId: z.string() }).loose();
const ListParams = z.object({ cursor: z.string().optional() }).loose();
const AnyResult = z.object({}).loose();

export function registerTaskHandlers(server: Server, deps: McpDeps, who: McpPrincipal, present: (answer: ToolAnswer) => CallToolResult): void {
  server.setRequestHandler('tasks/get', { params: TaskParams, result: AnyResult }, async (params) => taskOf(deps, who, params.taskId));

  server.setRequestHandler('tasks/list', { params: ListParams, result: AnyResult }, async (params) => {
    try {
      return await listTasks(deps.ctx.db, ownerOf(who), ttlMs(deps), params.cursor);
    } catch (e) {
      throw protocolError(ProtocolErrorCode.InvalidParams, (e as Error).message);
    }
  });

  server.setRequestHandler('tasks/result', { params: TaskParams, result: AnyResult }, async (params, ctx) => {
    const { taskId } = params;
    const { signal } = ctx.mcpReq;
    let task = await taskOf(deps, who, taskId);
    while (!isTerminal(task.status)) {
      if (signal.aborted) throw protocolError(ProtocolErrorCode.InvalidRequest, 'tasks/result was cancelled');
      await deps.waiter.wait(taskId, RESULT_SLICE_MS, { signal });
      task = await taskOf(deps, who, taskId);
    }
    const receipt = (await loadReceiptTree(deps.ctx.db, taskId))!;
    const result = present(await answerOf(deps, receipt));
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });

  server.setRequestHandler('tasks/cancel', { params: TaskParams, result: AnyResult }, async (params, ctx) => {
    const { taskId } = params;
    const task = await taskOf(deps, who, taskId);
    if (isTerminal(task.status)) throw protocolError(ProtocolErrorCode.InvalidParams, `task ${taskId} is already ${task.status}: it cannot be cancelled`);
    await cancelAndWait(deps.engine, deps.waiter, taskId, { signal: ctx.mcpReq.signal });
    // The receipt says what the cancel came to: `cancelled` (unbilled), or `completed` when the agent answered first.
    return taskOf(deps, who, taskId);
  });
}
