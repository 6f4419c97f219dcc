/**
 * A task's A2A stream (`SendStreamingMessage`, `SubscribeToTask`): the task as it stands, then the call's events
 * (shared/calls/events/) as A2A updates, until the task ends or is interrupted:
 *
 *   queued · running · input_provided → status submitted · working
 *   progress                          → status working, the agent's words, `holon/fraction`
 *   output.chunk                      → artifact `chunks`: the chunk as a data part (append after the first),
 *                                       `holon/units` the units delivered so far
 *   input_required (unanswered)       → status input-required with the question; the stream ends (answer with a
 *                                       message on the task, then subscribe again)
 *   completed                         → artifact `output` (a success's output, lastChunk), then the final status with
 *                                       the receipt (`holon/receipt`, `holon/receipt_proof`)
 */
import { type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { outputFields, readOutput } from '../../../shared/calls/answer/outputs.js';
import { followEvents } from '../../../shared/calls/events/follow.js';
import { type CallEvent, QUEUED_ID, RUNNING_ID } from '../../../shared/calls/events/types.js';
import type { ReceiptView } from '../../../shared/receipts/store.js';
import { agentMessage, dataPart, finalState, finalWords, outputArtifact, receiptMetadata, type TaskContext } from '../../../shared/a2a/task-view.js';

const CHUNKS_ARTIFACT = 'chunks';

const INTERRUPTED = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export async function* streamTask(
  t: TaskContext & { contextId: string },
  id: string,
  view: (id: string) => Promise<Task | undefined>,
): AsyncGenerator<StreamResponse, void, undefined> {
  const first = await view(id);
  if (!first) return;
  yield { payload: { $case: 'task', value: first } };
  // A refused or held request has no call to follow; a task already over or waiting on its caller has nothing new.
  const call = (await t.ctx.db('calls').where({ id }).first('id')) as { id: string } | undefined;
  if (!call || INTERRUPTED.has(first.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) return;
  const stop = new AbortController();
  try {
    // What the snapshot said already is not said again: a working task's stream starts after `running`.
    const after = first.status?.state === TaskState.TASK_STATE_WORKING ? RUNNING_ID : first.status?.state === TaskState.TASK_STATE_SUBMITTED ? QUEUED_ID : 0;
    for await (const e of followEvents(t.ctx, { id, after, final: async (receipt) => receipt }, stop.signal)) {
      const updates = await updatesOf(t, id, e);
      for (const u of updates) yield u;
      if (e.event === 'completed' || (e.event === 'input_required' && !(e.data as { answered?: boolean }).answered)) return;
    }
  } finally {
    stop.abort();
  }
}

const status = (
  t: TaskContext & { contextId: string },
  id: string,
  state: TaskState,
  extra: { text: string; data?: unknown; metadata?: Record<string, unknown> },
): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: {
      taskId: id,
      contextId: t.contextId,
      status: { state, message: agentMessage(id, extra.text, extra.data), timestamp: new Date().toISOString() },
      metadata: extra.metadata,
    },
  },
});

async function updatesOf(t: TaskContext & { contextId: string }, id: string, e: CallEvent): Promise<StreamResponse[]> {
  const data = e.data as Record<string, unknown>;
  switch (e.event) {
    case 'queued':
      return [status(t, id, TaskState.TASK_STATE_SUBMITTED, { text: `call ${id} queued` })];
    case 'running':
    case 'input_provided':
      return [status(t, id, TaskState.TASK_STATE_WORKING, { text: `call ${id} running` })];
    case 'progress':
      return [
        status(t, id, TaskState.TASK_STATE_WORKING, {
          text: typeof data.message === 'string' ? data.message : `call ${id} running`,
          ...(typeof data.fraction === 'number' ? { metadata: { 'holon/fraction': data.fraction } } : {}),
        }),
      ];
    case 'output.chunk': {
      const seq = typeof data.seq === 'number' ? data.seq : 0;
      const parts = data.expired ? [] : [dataPart(data.data ?? null)];
      return [
        {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId: id,
              contextId: t.contextId,
              artifact: { artifactId: CHUNKS_ARTIFACT, name: 'chunks', description: 'The output, chunk by chunk', parts, metadata: undefined, extensions: [] },
              append: seq > 0,
              lastChunk: false,
              metadata: { 'holon/seq': seq, ...(data.units_so_far !== undefined ? { 'holon/units': String(data.units_so_far) } : {}) },
            },
          },
        },
      ];
    }
    case 'input_required': {
      if (data.answered) return [status(t, id, TaskState.TASK_STATE_WORKING, { text: `call ${id} running` })];
      const request = (data.request ?? {}) as { message?: string; schema?: unknown };
      return [
        status(t, id, TaskState.TASK_STATE_INPUT_REQUIRED, {
          text: request.message ?? 'the agent asks a question',
          data: { question: data.question, schema: request.schema ?? null },
          metadata: { 'holon/question': data.question },
        }),
      ];
    }
    case 'completed':
      return completed(t, id, e.data as ReceiptView);
    default:
      return [];
  }
}

async function completed(t: TaskContext & { contextId: string }, id: string, receipt: ReceiptView): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  if (receipt.status === 'succeeded') {
    const output = outputFields(await readOutput(t.ctx, id));
    out.push({
      payload: {
        $case: 'artifactUpdate',
        value: { taskId: id, contextId: t.contextId, artifact: outputArtifact(output.output), append: false, lastChunk: true, metadata: undefined },
      },
    });
  }
  out.push(status(t, id, finalState(receipt), { text: finalWords(receipt), metadata: receiptMetadata(t.base, receipt) }));
  return out;
}
