/**
 * The MCP tasks extension `io.modelcontextprotocol/tasks` for 2026-07-28 clients (docs/mcp.md, "Tasks"), backed by the
 * calls table like the 2025 tasks (tasks.ts, shared/calls/tasks.ts): a task IS a call, its id the call id, its state
 * read from the call row and the receipt every time, so any API process answers and a restart loses nothing.
 *
 *   creation      a client that declared the extension gets `resultType: "task"` from call_agent for every admitted
 *                 call (approvals are settled first, as input requests, per the extension); the task row is written
 *                 before the answer. The SDK checks tools/call results as CallToolResult, so the task result also
 *                 carries an empty `content`.
 *   tasks/get     the task; `input_required` carries the call's question as the input request `answer` (a form);
 *                 a question no form can ask reads `working`, its status message naming POST /v0/calls/{id}/input;
 *                 `completed` carries call_agent's result (a failed call too: it is a tool result with `isError`);
 *                 a cancelled call is `cancelled`. Reading hands the output to nobody (it is kept for HOLON_RESULT_TTL_S).
 *   tasks/update  `inputResponses.answer` answers the open question (checked like any answer; a refused answer is
 *                 -32602); other keys are ignored, as the extension asks.
 *   tasks/cancel  the call's cancellation (unbilled, as REST cancel); acknowledged with an empty result.
 * Another principal's task, or none, is -32602 "no task". A request that does not declare the extension in its
 * capabilities gets none of the three methods: -32021 (Missing Required Client Capability, HTTP 400), as the extension
 * requires.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  MissingRequiredClientCapabilityError,
  ProtocolErrorCode,
  type ServerContext,
  type CallToolResult,
  type InputRequests,
  type Server,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { readOutput } from '../../../shared/calls/answer/outputs.js';
import { answerQuestion, questionOf } from '../../../shared/calls/events/answer.js';
import type { Submitted } from '../../../shared/calls/submit/submit.js';
import { readTask, recordTask, type CallTask, type TaskOwner } from '../../../shared/calls/tasks.js';
import { HolonError } from '../../../shared/core/errors.js';
import { loadReceiptTree } from '../../../shared/receipts/store.js';
import { finishedAnswer } from './call-answers.js';
import { formSchema } from './call-events.js';
import { protocolError } from './errors.js';
import type { McpDeps, McpPrincipal, ToolAnswer } from './tools.js';
import { untrusted } from './untrusted.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The extension's Task, as its wire has it. */
type WireTask = {
  taskId: string;
  status: CallTask['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number;
};

/** call_agent's answer when it created a task. */
export type TaskCreated = WireTask & { resultType: 'task'; content: [] };

function ownerOf(who: McpPrincipal): TaskOwner {
  if (!who.owner) throw protocolError(ProtocolErrorCode.InvalidRequest, 'this connection cannot run tasks');
  return { owner: who.owner, mandateId: who.mandateId };
}

const wire = (t: CallTask): WireTask => ({
  taskId: t.taskId,
  status: t.status,
  ...(t.statusMessage ? { statusMessage: t.statusMessage } : {}),
  createdAt: t.createdAt,
  lastUpdatedAt: t.lastUpdatedAt,
  ttlMs: t.ttl,
  pollIntervalMs: t.pollInterval,
});

async function taskOf(deps: McpDeps, who: McpPrincipal, taskId: string): Promise<CallTask> {
  const task = await readTask(deps.ctx.db, taskId, ownerOf(who), deps.ctx.settings.resultTtlS * 1000);
  if (!task) throw protocolError(ProtocolErrorCode.InvalidParams, `there is no task ${taskId.slice(0, 100)} of yours`);
  return task;
}

/** An admitted call as a task: recorded before it is answered; a call nobody could follow is cancelled. */
export async function startCallTask(deps: McpDeps, who: McpPrincipal, submitted: Extract<Submitted, { kind: 'queued' }>): Promise<TaskCreated> {
  try {
    await recordTask(deps.ctx.db, submitted.callId, ownerOf(who));
  } catch (e) {
    await requestCancel(deps.engine, submitted.callId).catch(() => undefined);
    throw e;
  }
  return { resultType: 'task', ...wire(await taskOf(deps, who, submitted.callId)), content: [] };
}

/** tasks/get's answer: the task, with its question, its result or nothing, by status. */
async function detailed(deps: McpDeps, who: McpPrincipal, taskId: string, present: (a: ToolAnswer) => CallToolResult) {
  const task = await taskOf(deps, who, taskId);
  if (task.status === 'input_required') {
    const open = await questionOf(deps.ctx, taskId);
    const schema = formSchema(open?.request?.schema);
    if (!open?.request || !schema) return { ...wire(task), status: 'working' as const };
    const message = `The agent of call ${taskId} asks: ${untrusted(open.request.message)}`;
    const inputRequests: InputRequests = { answer: inputRequired.elicit({ mode: 'form', message, requestedSchema: schema }) };
    return { ...wire(task), inputRequests, _meta: { 'holon/question': open.question } };
  }
  if (task.status !== 'completed' && task.status !== 'failed') return wire(task);
  const receipt = (await loadReceiptTree(deps.ctx.db, taskId))!;
  const output = receipt.status === 'succeeded' ? await readOutput(deps.ctx, taskId) : undefined;
  const result = present(finishedAnswer(receipt, output?.kept ? output.output : null));
  return { ...wire(task), status: 'completed' as const, result };
}

const TaskParams = z.object({ taskId: z.string().min(1).max(200) }).loose();
const UpdateParams = z.object({ taskId: z.string().min(1).max(200), inputResponses: z.record(z.string(), z.unknown()).optional() }).loose();
const AnyResult = z.object({}).loose();

/** Whether the request declared the extension in its capabilities (the envelope of 2026-07-28). */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return caps?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The extension's methods are for requests that declare it. */
function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `declare the ${TASKS_EXTENSION} extension to use tasks`,
    );
  }
}

export function registerTasksExtension(server: Server, deps: McpDeps, who: McpPrincipal, present: (a: ToolAnswer) => CallToolResult): void {
  server.setRequestHandler('tasks/get', { params: TaskParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    return detailed(deps, who, params.taskId, present);
  });

  server.setRequestHandler('tasks/update', { params: UpdateParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    await taskOf(deps, who, params.taskId);
    // The SDK lifts `inputResponses` out of the params into the request's context.
    const response = inputResponse(ctx.mcpReq.inputResponses ?? params.inputResponses, 'answer');
    if (response.kind !== 'elicit') return {};
    if (response.action === 'decline') await requestCancel(deps.engine, params.taskId);
    if (response.action !== 'accept') return {};
    try {
      await answerQuestion(deps.ctx, params.taskId, response.content ?? {});
    } catch (e) {
      if (!(e instanceof HolonError)) throw e;
      // No open question (answered already, or none): ignored, as the extension asks of satisfied keys.
      if (e.code === 'rejected_input')
        throw protocolError(ProtocolErrorCode.InvalidParams, `${e.message}: ${(e.problems ?? []).map((p) => `${p.path} ${p.message}`).join('; ')}`);
    }
    return {};
  });

  server.setRequestHandler('tasks/cancel', { params: TaskParams, result: AnyResult }, async (params, ctx) => {
    requireTasks(ctx);
    const task = await taskOf(deps, who, params.taskId);
    // Cooperative, as the extension says: a final task stays what it is; tasks/get tells.
    if (task.status === 'working' || task.status === 'input_required') await requestCancel(deps.engine, params.taskId);
    return {};
  });
}
