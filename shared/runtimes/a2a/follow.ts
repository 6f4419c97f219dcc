/**
 * Following an A2A task to its end (docs/a2a-agents.md): over the stream when the card says capabilities.streaming
 * (artifact updates → the run's chunks), else by polling tasks/get (100 ms, doubling, at most 2 s). Input-required
 * asks the run's caller and sends the answer back on the same task; the task is cancelled (best effort) whenever the
 * run stops following it before it ended: the signal fired, a chunk was refused, the agent sent something unusable.
 */
import {
  TaskState,
  type Message,
  type SendMessageResult,
  type StreamResponse,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import type { Client, RequestOptions } from '@a2a-js/sdk/client';
import { readBilling } from '../mcp/tool-result.js';
import { abortedResult, pauseOrAbort } from '../abort.js';
import { agentError, truncate } from '../messages.js';
import type { RunContext, RunResult } from '../types.js';
import { dataPartOf, schemaOf, sendRequest, textOf, userMessage } from './parts.js';
import { emptyView, isSettled, isTerminal, outcomeOf, outputOf, type View } from './states.js';

const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2_000;
/** The most questions one run may ask: the next one is an agent_error (as for webhook agents). */
const MAX_QUESTIONS = 10;
/** cancelTask after the run stopped following is a courtesy: never waited on for longer than this. */
const CANCEL_TIMEOUT_MS = 2_000;

/** One run's conversation with an agent: its client, and the task once the agent named it. */
export class Conversation {
  taskId: string | undefined;
  contextId = '';
  /** The task reached a terminal state: nothing to cancel. */
  ended = false;
  asked = 0;
  /** The status (View.statusKey) of the last question answered. */
  answered = '';

  constructor(
    readonly client: Client,
    readonly options: RequestOptions,
    readonly run: RunContext,
    /** The skill named in each message; whether artifact updates are the run's chunks (interface.stream declared). */
    readonly profile: { skill: string | undefined; chunks: boolean },
  ) {}

  /** cancelTask for the task being followed, unless it ended; best effort, its own short deadline, never throws. */
  cancel(): void {
    if (this.taskId === undefined || this.ended) return;
    this.ended = true;
    const { serviceParameters } = this.options;
    void this.client
      .cancelTask(
        { tenant: '', id: this.taskId, metadata: undefined },
        { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), ...(serviceParameters ? { serviceParameters } : {}) },
      )
      .catch(() => undefined);
  }

  /** Take in a task snapshot. */
  absorb(task: Task, view: View): void {
    this.note(task.id, task.contextId);
    view.state = task.status?.state ?? view.state;
    view.message = task.status?.message;
    view.statusKey = task.status?.message?.messageId || task.status?.timestamp || '';
    const last = [...(task.artifacts ?? [])].reverse().find((a) => dataPartOf(a.parts));
    if (last) view.artifact = dataPartOf(last.parts);
    if (task.metadata !== undefined) view.metadata = task.metadata;
    if (isTerminal(view.state)) this.ended = true;
  }

  note(taskId: string, contextId: string): void {
    if (typeof taskId === 'string' && taskId !== '') this.taskId = taskId;
    if (typeof contextId === 'string' && contextId !== '') this.contextId = contextId;
  }
}

/** A message that answers the request instead of a task: its data part is the output. */
function messageOutcome(message: Message): RunResult {
  return outputOf(dataPartOf(message.parts), message.metadata, 'the message metadata');
}

/**
 * Ask the caller the task's question: the answer as the message to send back, or the result the run ends with.
 * Without a caller (an evaluation) the question has nobody to answer it.
 */
async function askCaller(conv: Conversation, view: View): Promise<Message | RunResult> {
  const { run } = conv;
  if (!run.stream) return agentError('the agent asked a question, but nobody can answer a question here (no caller is attached)');
  if (conv.asked >= MAX_QUESTIONS) return agentError(`the agent asked more than ${MAX_QUESTIONS} questions in one run`);
  if (conv.taskId === undefined) return agentError('the agent asked a question outside a task');
  conv.asked += 1;
  conv.answered = view.statusKey;
  const schema = schemaOf(view.message);
  let reply: unknown;
  try {
    reply = await run.stream.ask({ message: textOf(view.message) || 'the agent needs more input', ...(schema ? { schema } : {}) });
  } catch (err) {
    if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
    return agentError(`the question was not answered: ${err instanceof Error ? err.message : String(err)}`);
  }
  return userMessage(reply, run, conv.profile.skill, { taskId: conv.taskId, contextId: conv.contextId });
}

/** sendMessage (the client returns at once) and tasks/get until the task settles; questions asked on the way. */
export async function poll(conv: Conversation, first: SendMessageResult): Promise<RunResult> {
  const { client, options, run } = conv;
  let current = first;
  let delay = FIRST_POLL_MS;
  for (;;) {
    if ('messageId' in current) return messageOutcome(current);
    const view = emptyView();
    conv.absorb(current, view);
    if (conv.taskId === undefined) return agentError('the agent answered with a task without an id');
    let outcome = outcomeOf(view);
    // A snapshot taken before the agent read our answer still shows the question it answered: keep polling.
    if (outcome === 'ask' && view.statusKey !== '' && view.statusKey === conv.answered) outcome = undefined;
    if (outcome === 'ask') {
      const reply = await askCaller(conv, view);
      if (!('messageId' in reply)) return reply;
      current = await client.sendMessage(sendRequest(reply), options);
      delay = FIRST_POLL_MS;
      continue;
    }
    if (outcome) return outcome;
    await pauseOrAbort(delay, run.signal);
    delay = Math.min(delay * 2, MAX_POLL_MS);
    current = await client.getTask({ tenant: '', id: conv.taskId }, options);
  }
}

/**
 * An artifact update: its data part is the output so far and, for an agent that declares a streamed output, the run's
 * next chunk, with the cumulative `holon/units` when present.
 */
async function deliver(conv: Conversation, update: TaskArtifactUpdateEvent, view: View): Promise<RunResult | undefined> {
  const data = dataPartOf(update.artifact?.parts);
  if (!data) return undefined;
  view.artifact = data;
  const billing = readBilling(update.metadata, 'the artifact update metadata');
  if (!billing.ok) return agentError(billing.message);
  const { units } = billing.value;
  if (units !== undefined) view.artifactUnits = units;
  if (!conv.profile.chunks) return undefined;
  try {
    await conv.run.stream?.emit(data.value, units);
  } catch {
    // The stream refused the chunk (the budget, an invalid chunk, the run over): the runner decides.
    return abortedResult(conv.run.signal.reason, conv.run.timeoutMs);
  }
  return undefined;
}

/** A status update into `view`; a working status's text is the call's progress (nowhere without a stream). */
function absorbStatus(conv: Conversation, update: TaskStatusUpdateEvent, view: View): void {
  conv.note(update.taskId, update.contextId);
  view.state = update.status?.state ?? view.state;
  view.message = update.status?.message;
  view.statusKey = update.status?.message?.messageId || update.status?.timestamp || '';
  if (update.metadata !== undefined) {
    view.metadata = update.metadata;
    view.where = 'the status update metadata';
  }
  if (isTerminal(view.state)) conv.ended = true;
  const text = textOf(view.message);
  if (view.state === TaskState.TASK_STATE_WORKING && text !== '') conv.run.stream?.progress({ message: truncate(text, 500) }).catch(() => undefined);
}

/** One stream's events into `view`, until the task settles or the stream ends: a result when the run ends here. */
async function readStream(conv: Conversation, stream: AsyncGenerator<StreamResponse>, view: View): Promise<RunResult | undefined> {
  for await (const event of stream) {
    const payload = event?.payload;
    if (!payload) return agentError('the agent sent a stream event that is not a task, message, status or artifact update');
    if (payload.$case === 'message') return messageOutcome(payload.value);
    if (payload.$case === 'task') conv.absorb(payload.value, view);
    else if (payload.$case === 'statusUpdate') absorbStatus(conv, payload.value, view);
    else {
      conv.note(payload.value.taskId, payload.value.contextId);
      const stop = await deliver(conv, payload.value, view);
      if (stop) return stop;
    }
    if (isSettled(view.state)) return undefined;
  }
  return undefined;
}

/** sendMessageStream, read until the task settles; questions answered on a new stream; a stream cut short → polling. */
export async function stream(conv: Conversation, first: Message): Promise<RunResult> {
  const { client, options } = conv;
  const view = emptyView();
  let message = first;
  for (;;) {
    const ended = await readStream(conv, client.sendMessageStream(sendRequest(message), options), view);
    if (ended) return ended;
    const outcome = outcomeOf(view);
    if (outcome === undefined) {
      // The stream ended before the task did: follow it by polling.
      if (conv.taskId === undefined) return agentError('the stream ended before the agent named a task');
      return poll(conv, await client.getTask({ tenant: '', id: conv.taskId }, options));
    }
    if (outcome !== 'ask') return outcome;
    const reply = await askCaller(conv, view);
    if (!('messageId' in reply)) return reply;
    message = reply;
    view.state = emptyView().state;
  }
}

/** What a run may quote of a thrown SDK error. */
export function sdkMessage(err: unknown): string {
  return truncate(err instanceof Error ? err.message || err.name : String(err), 150);
}
