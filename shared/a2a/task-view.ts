/**
 * A call as an A2A task (docs/a2a.md, "Tasks are calls"): the id is the call's (its receipt's) id, the state read
 * from the call row, its open question, its approval and its receipt every time, so any API process answers.
 *
 *   queued                                  → submitted
 *   running · settling                      → working
 *   running, its agent waiting on a question → input-required (the question; answered by a message on the task)
 *   held for approval, pending or granted   → input-required (the approval; a human decides it, never the agent key)
 *   held, the approval used                 → the task of the call it ran
 *   held, rejected or expired · denied · rejected_input → rejected
 *   succeeded                               → completed, the output as the `output` artifact's data part
 *   failed (cancelled)                      → canceled;  failed (anything else) → failed
 *
 * A final task's metadata carries the receipt as the API shows it (`holon/receipt`, with its detached signature)
 * and where its inclusion proof in the log is (`holon/receipt_proof`).
 */
import { type Artifact, type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import { outputFields, readOutput } from '../calls/answer/outputs.js';
import { questionOf } from '../calls/events/answer.js';
import { approvalView, loadApproval } from '../calls/submit/approvals.js';
import type { ServiceContext } from '../context.js';
import { describeFailure, loadReceiptTree, type ReceiptView } from '../receipts/store.js';

const OUTPUT_ARTIFACT = 'output';

/** A message from the gateway (role agent) with words and, when given, one data part. */
export function agentMessage(taskId: string, text: string, data?: unknown): Message {
  return {
    messageId: `${taskId}-${Date.now().toString(36)}`,
    contextId: taskId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
      ...(data !== undefined ? [dataPart(data)] : []),
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export const dataPart = (value: unknown) => ({ content: { $case: 'data' as const, value }, metadata: undefined, filename: '', mediaType: 'application/json' });

export function outputArtifact(output: unknown): Artifact {
  return { artifactId: OUTPUT_ARTIFACT, name: 'output', description: 'The call’s output', parts: [dataPart(output)], metadata: undefined, extensions: [] };
}

/** The receipt's metadata on a final task or status update. */
export const receiptMetadata = (base: string, receipt: ReceiptView) => ({
  'holon/receipt': receipt,
  'holon/receipt_proof': `${base}/v0/receipts/${receipt.id}/proof`,
});

/** The A2A state of a final receipt. */
export function finalState(receipt: ReceiptView): TaskState {
  if (receipt.status === 'succeeded') return TaskState.TASK_STATE_COMPLETED;
  if (receipt.status === 'failed') return receipt.error === 'cancelled' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
  return TaskState.TASK_STATE_REJECTED;
}

/** The words of a final receipt's status message. */
export function finalWords(receipt: ReceiptView): string {
  if (receipt.status === 'succeeded') return `succeeded; charged ${receipt.cost.total} ${receipt.currency}`;
  if (receipt.status === 'failed') return describeFailure(receipt).message;
  return `refused (${receipt.status}${receipt.error ? `: ${receipt.error}` : ''}); nothing was charged`;
}

export interface TaskContext {
  ctx: ServiceContext;
  /** The gateway's public origin (links in metadata). */
  base: string;
  contextId?: string;
}

const task = (
  id: string,
  contextId: string,
  state: TaskState,
  parts: { message?: Message; artifacts?: Artifact[]; metadata?: Record<string, unknown> },
): Task => ({
  id,
  contextId,
  status: { state, message: parts.message, timestamp: new Date().toISOString() },
  artifacts: parts.artifacts ?? [],
  history: [],
  metadata: parts.metadata,
});

/** The task `id` as it stands; undefined when there is no such call or receipt. */
export async function taskOf(t: TaskContext, id: string, depth = 0): Promise<Task | undefined> {
  const { ctx } = t;
  const contextId = t.contextId ?? id;
  const receipt = await loadReceiptTree(ctx.db, id);
  if (!receipt) {
    const call = (await ctx.db('calls').where({ id }).first('status')) as { status: string } | undefined;
    if (!call) return undefined;
    const open = call.status === 'running' ? await questionOf(ctx, id) : undefined;
    if (open) {
      const words = open.request?.message ?? 'the agent asks a question';
      const message = agentMessage(id, words, { question: open.question, schema: open.request?.schema ?? null });
      return task(id, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, { message, metadata: { 'holon/question': open.question } });
    }
    const state = call.status === 'queued' ? TaskState.TASK_STATE_SUBMITTED : TaskState.TASK_STATE_WORKING;
    return task(id, contextId, state, { message: agentMessage(id, `call ${id} ${call.status}`) });
  }
  if (receipt.status === 'pending_approval') return heldTask(t, receipt, depth);
  const output = receipt.status === 'succeeded' ? outputFields(await readOutput(ctx, id)) : undefined;
  return task(id, contextId, finalState(receipt), {
    message: agentMessage(id, finalWords(receipt)),
    ...(output ? { artifacts: [outputArtifact(output.output)] } : {}),
    metadata: { ...receiptMetadata(t.base, receipt), ...(output?.output_gone ? { 'holon/output_gone': output.output_gone } : {}) },
  });
}

/** A held request: its approval decides (pending or granted: input-required; used: the call it ran; else rejected). */
async function heldTask(t: TaskContext, receipt: ReceiptView, depth: number): Promise<Task> {
  const { ctx } = t;
  const id = receipt.id;
  const row = (await ctx.db('approvals').where({ receipt_id: id }).first('id')) as { id: string } | undefined;
  const found = row ? await loadApproval(ctx.db, row.id, ctx.now()) : null;
  const a = found?.approval;
  if (a?.status === 'used' && a.callId && depth === 0) {
    const ran = await taskOf({ ...t, contextId: t.contextId ?? id }, a.callId, 1);
    if (ran) return { ...ran, id, metadata: { ...ran.metadata, 'holon/call': a.callId } };
  }
  const metadata = { ...receiptMetadata(t.base, receipt), ...(a ? { 'holon/approval': approvalView(a) } : {}) };
  if (a && (a.status === 'pending' || a.status === 'approved')) {
    const words =
      a.status === 'pending'
        ? `approval ${a.id} needed: ${a.agentId}@${a.agentVersion}, worst case ${approvalView(a).worst_case} ${a.currency} (${a.reasons.join('; ')}). A human decides it (POST /v0/approvals/${a.id} with the human key, or the console); the agent key cannot.`
        : `approval ${a.id} granted: send a message on this task to run the call`;
    return task(id, t.contextId ?? id, TaskState.TASK_STATE_INPUT_REQUIRED, { message: agentMessage(id, words), metadata });
  }
  return task(id, t.contextId ?? id, TaskState.TASK_STATE_REJECTED, {
    message: agentMessage(id, `the approval was ${a?.status ?? 'not found'}; the call did not run and nothing was charged`),
    metadata,
  });
}
