/**
 * The gateway as an A2A server (docs/a2a.md): the SDK's transports (JSON-RPC, HTTP+JSON) over this request handler,
 * which turns each A2A method into the call engine's: `SendMessage` and `SendStreamingMessage` submit a Holon call
 * under the key's mandate (every rule applies: admission, approval, reservation, settlement); a task IS that call
 * (task-view.ts), recorded as the key's task so that `GetTask`, `ListTasks`, `CancelTask` and `SubscribeToTask`
 * find only the key's own (another's is the same answer as a missing one). A message on a task answers the agent's
 * open question, or runs a call whose approval a human granted. Nothing here decides a rule: it translates.
 */
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { answerQuestion, questionOf } from '../../../shared/calls/events/answer.js';
import { loadApproval } from '../../../shared/calls/submit/approvals.js';
import type { Submitted } from '../../../shared/calls/submit/submit.js';
import { ownedTask, ownedTaskIds, recordTask } from '../../../shared/calls/tasks.js';
import { HolonError } from '../../../shared/core/errors.js';
import { tryParseAmount } from '../../../shared/core/money.js';
import { deletePushConfig, type PushConfig, pushConfigOf, setPushConfig } from '../../../shared/a2a/push.js';
import { assertPublicUrl } from '../../../shared/platform/guarded-net.js';
import { httpUrlOf } from '../body-reader.js';
import { httpStatusOf } from '../http-status.js';
import { mandateTreeScope } from '../principal.js';
import { callerOf, type A2aCaller } from './caller.js';
import type { A2aDeps } from './deps.js';
import { askPayment, payAndRun } from './paid.js';
import { streamTask } from './task-stream.js';
import { taskOf } from '../../../shared/a2a/task-view.js';

const PAGE_SIZE = 50;

/** The input a message carries: its one data part, else its text parsed as JSON. */
function inputOf(message: Message): unknown {
  const data = message.parts.filter((p) => p.content?.$case === 'data');
  if (data.length === 1) return (data[0]!.content as { value: unknown }).value ?? {};
  if (data.length > 1) throw new RequestMalformedError('send the input as one data part (JSON)');
  const text = message.parts.find((p) => p.content?.$case === 'text');
  if (text) {
    try {
      return JSON.parse((text.content as { value: string }).value);
    } catch {
      throw new RequestMalformedError('send the input as a data part (JSON), or a text part holding JSON');
    }
  }
  throw new RequestMalformedError('the message has no input: send it as a data part (JSON)');
}

const metaString = (m: Record<string, unknown> | undefined, key: string): string | undefined => {
  const v = m?.[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > 200) throw new RequestMalformedError(`metadata "${key}" must be a string`);
  return v;
};

/** The caller's cap (`holon/max_cost`, a decimal in the agent's currency), if it set one. */
function maxCostOf(metadata: Record<string, unknown>): bigint | undefined {
  const text = metaString(metadata, 'holon/max_cost');
  if (text === undefined) return undefined;
  const parsed = tryParseAmount(text);
  if (!parsed.ok) throw new RequestMalformedError(`metadata "holon/max_cost": ${parsed.message}`);
  return parsed.value;
}

/** A Holon refusal in A2A's words: a caller's mistake is a malformed request, a missing thing a missing task. */
function translated(e: unknown): unknown {
  if (!(e instanceof HolonError)) return e;
  if (e.code === 'not_found') return new TaskNotFoundError(e.message);
  if (httpStatusOf(e.code) < 500) return new RequestMalformedError({ message: e.message, metadata: { code: e.code } });
  return e;
}

async function translating<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw translated(e);
  }
}

export class HolonA2aHandler implements A2ARequestHandler {
  constructor(private readonly deps: A2aDeps) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.deps.versionCard;
  }

  async getAuthenticatedExtendedAgentCard(_p: GetExtendedAgentCardRequest, _c: ServerCallContext): Promise<AgentCard> {
    throw new UnsupportedOperationError('this gateway has no extended agent card');
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    return translating(async () => {
      const who = callerOf(context);
      if (who.paying) return this.paid(who, params);
      const { id, contextId, callId } = await this.start(who, params);
      if (callId && !params.configuration?.returnImmediately) await this.waitForTurn(callId);
      return (await this.view(who, id, contextId))!;
    });
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const who = callerOf(context);
    // A paid call is answered to its message: its one task, once it ends (or asks for payment).
    if (who.paying) {
      yield { payload: { $case: 'task', value: await translating(() => this.paid(who, params)) } };
      return;
    }
    const { id, contextId } = await translating(() => this.start(who, params));
    yield* this.stream(who, id, contextId);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const who = callerOf(context);
    const owned = await ownedTask(this.deps.ctx.db, params.id, who);
    if (!owned) throw new TaskNotFoundError(`there is no task ${params.id.slice(0, 100)}`);
    yield* this.stream(who, params.id, owned.contextId ?? params.id);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return translating(async () => {
      const found = await this.view(callerOf(context), params.id);
      if (!found) throw new TaskNotFoundError(`there is no task ${params.id.slice(0, 100)}`);
      return found;
    });
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return translating(async () => {
      const who = callerOf(context);
      const size = Math.min(Math.max(params.pageSize ?? PAGE_SIZE, 1), PAGE_SIZE);
      const { tasks: ids, total } = await ownedTaskIds(this.deps.ctx.db, who, {
        limit: size + 1,
        ...(params.pageToken ? { after: params.pageToken } : {}),
        ...(params.contextId ? { contextId: params.contextId } : {}),
      });
      const page = ids.slice(0, size);
      const tasks: Task[] = [];
      for (const t of page) {
        const task = await taskOf(this.taskContext(who, t.contextId ?? t.id), t.id);
        // A state filter applies within the page (a task's state is read, not stored).
        if (!task || (params.status > 0 && task.status?.state !== params.status)) continue;
        tasks.push(params.includeArtifacts ? task : { ...task, artifacts: [] });
      }
      return { tasks, nextPageToken: ids.length > size ? page[page.length - 1]!.id : '', pageSize: size, totalSize: total };
    });
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return translating(async () => {
      const who = callerOf(context);
      const before = await this.view(who, params.id);
      if (!before) throw new TaskNotFoundError(`there is no task ${params.id.slice(0, 100)}`);
      const call = (await this.deps.ctx.db('calls').where({ id: params.id }).first('id')) as { id: string } | undefined;
      if (!call) throw new TaskNotCancelableError(`task ${params.id} is not a running call`);
      if ((await requestCancel(this.deps.engine, params.id)) === 'too_late') throw new TaskNotCancelableError(`task ${params.id} has ended`);
      await this.deps.waiter.wait(params.id, 5_000);
      return (await this.view(who, params.id))!;
    });
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return translating(async () => {
      const who = callerOf(context);
      await this.ownedCall(who, params.taskId);
      const config = await this.pushConfigOf(params);
      await this.setPush(who, params.taskId, config);
      return shownConfig(params.taskId, config);
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return translating(async () => {
      await this.ownedCall(callerOf(context), params.taskId);
      const config = await pushConfigOf(this.deps.ctx.db, params.taskId);
      if (!config || (params.id && config.id !== params.id)) throw new TaskNotFoundError(`task ${params.taskId} has no push config ${params.id}`);
      return shownConfig(params.taskId, config);
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return translating(async () => {
      await this.ownedCall(callerOf(context), params.taskId);
      const config = await pushConfigOf(this.deps.ctx.db, params.taskId);
      return { configs: config ? [shownConfig(params.taskId, config)] : [], nextPageToken: '' };
    });
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return translating(async () => {
      await this.ownedCall(callerOf(context), params.taskId);
      if (!(await deletePushConfig(this.deps.ctx.db, params.taskId, params.id)))
        throw new TaskNotFoundError(`task ${params.taskId} has no push config ${params.id}`);
    });
  }

  /** The caller's task that is a call (a refused or held request has no call to notify about). */
  private async ownedCall(who: A2aCaller, id: string): Promise<void> {
    if (!(await ownedTask(this.deps.ctx.db, id, who))) throw new TaskNotFoundError(`there is no task ${id.slice(0, 100)}`);
    if (!(await this.deps.ctx.db('calls').where({ id }).first('id')))
      throw new UnsupportedOperationError(`task ${id} is not a call that runs: nothing to notify`);
  }

  /** A push config as the request gives it: its URL checked like a REST callback_url, a token only where it can be sealed. */
  private async pushConfigOf(p: Pick<TaskPushNotificationConfig, 'id' | 'url' | 'token' | 'authentication'>): Promise<PushConfig> {
    const url = httpUrlOf(p.url);
    if (!url || url.length > 2048) throw new RequestMalformedError('the push config needs an absolute http(s) URL without user-info');
    if (this.deps.callbackGuard) await assertPublicUrl(url, this.deps.callbackGuard.allowPrivate, { path: '$.url' });
    if (p.authentication?.scheme) throw new RequestMalformedError('push authentication schemes are not supported: give a token');
    if (p.token && (p.token.length > 500 || !this.deps.pushKey)) {
      throw new RequestMalformedError(
        p.token.length > 500 ? 'the push token is too long (at most 500 characters)' : 'push tokens need HOLON_FILE_SECRET on this gateway',
      );
    }
    const id = (p.id || 'push').slice(0, 200);
    return { id, url, ...(p.token ? { token: p.token } : {}) };
  }

  private async setPush(who: A2aCaller, callId: string, config: PushConfig): Promise<void> {
    const set = await setPushConfig(this.deps.ctx, this.deps.pushKey, { callId, config, base: who.base });
    if (!set) throw new RequestMalformedError(`task ${callId} has a push config already: delete it first (one per task)`);
  }

  /** A keyless caller's message: the payment a call asks for, or (on that task) the call, paid. */
  private paid(who: A2aCaller, params: SendMessageRequest): Promise<Task> {
    const message = params.message;
    if (!message) throw new RequestMalformedError('SendMessage needs a message');
    if (message.taskId) return payAndRun(this.deps, who, message);
    const metadata = { ...params.metadata, ...message.metadata };
    const capability = who.target.kind === 'gateway' ? metaString(metadata, 'holon/capability') : undefined;
    if (who.target.kind === 'gateway' && !capability) throw new RequestMalformedError('name the capability to call in the message metadata "holon/capability"');
    const maxCost = maxCostOf(metadata);
    return askPayment(this.deps, who, {
      ...(who.target.kind === 'agent' ? { agent: who.target.id } : { capability: capability! }),
      input: inputOf(message),
      ...(maxCost !== undefined ? { maxCost } : {}),
    });
  }

  private taskContext(who: A2aCaller, contextId?: string) {
    return { ctx: this.deps.ctx, base: who.base, ...(contextId !== undefined ? { contextId } : {}) };
  }

  /** The task, if it is the caller's; undefined otherwise. */
  private async view(who: A2aCaller, id: string, contextId?: string): Promise<Task | undefined> {
    const owned = await ownedTask(this.deps.ctx.db, id, who);
    if (!owned) return undefined;
    return taskOf(this.taskContext(who, contextId ?? owned.contextId ?? id), id);
  }

  /** A new call for the message, or the message answers its task: the task's id and context, and the call it follows. */
  private async start(who: A2aCaller, params: SendMessageRequest): Promise<{ id: string; contextId: string; callId?: string }> {
    const message = params.message;
    if (!message) throw new RequestMalformedError('SendMessage needs a message');
    const contextId = message.contextId ? message.contextId.slice(0, 200) : undefined;
    if (message.taskId) return { id: message.taskId, contextId: contextId ?? message.taskId, callId: await this.continueTask(who, message) };
    const metadata = { ...params.metadata, ...message.metadata };
    const capability = who.target.kind === 'gateway' ? metaString(metadata, 'holon/capability') : undefined;
    if (who.target.kind === 'gateway' && !capability) throw new RequestMalformedError('name the capability to call in the message metadata "holon/capability"');
    const maxCost = maxCostOf(metadata);
    const given = params.configuration?.taskPushNotificationConfig;
    const push = given?.url ? await this.pushConfigOf(given) : undefined;
    const submitted = await this.deps.engine.submit({
      mandateId: who.mandateId,
      ...(who.target.kind === 'agent' ? { agent: who.target.id } : { capability: capability! }),
      input: inputOf(message),
      ...(maxCost !== undefined ? { maxCost } : {}),
      // In place before the run starts (it may start at once, here): a question asked first is pushed too. A refused or
      // held request has no call to notify about: its answer says all there is.
      ...(push ? { beforeRun: (callId: string) => this.setPush(who, callId, push) } : {}),
    });
    const id = idOf(submitted);
    await recordTask(this.deps.ctx.db, id, who, contextId);
    // A refused or held request has no call to wait for: its task is final, or waits on a human.
    return { id, contextId: contextId ?? id, ...(submitted.kind === 'queued' ? { callId: id } : {}) };
  }

  /** A message on a task: the answer to its open question, or the go-ahead of a call whose approval was granted; the call it goes on in. */
  private async continueTask(who: A2aCaller, message: Message): Promise<string> {
    const { ctx, engine } = this.deps;
    const id = message.taskId;
    if (!(await ownedTask(ctx.db, id, who))) throw new TaskNotFoundError(`there is no task ${id.slice(0, 100)}`);
    const open = await questionOf(ctx, id);
    if (open) {
      await answerQuestion(ctx, id, inputOf(message), open.question);
      return id;
    }
    const held = (await ctx.db('approvals').where({ receipt_id: id }).first('id')) as { id: string } | undefined;
    const found = held ? await loadApproval(ctx.db, held.id, ctx.now()) : null;
    if (found?.approval.status === 'approved') {
      const a = found.approval;
      const submitted = await engine.submit({
        mandateId: who.mandateId,
        agent: `${a.agentId}@${a.agentVersion}`,
        input: inputOf(message),
        ...(a.maxCost !== null ? { maxCost: a.maxCost } : {}),
        approval: { id: a.id, inScope: mandateTreeScope(who.mandateId) },
      });
      if (submitted.kind === 'refused') throw new RequestMalformedError({ message: submitted.message, metadata: { code: submitted.code } });
      return idOf(submitted);
    }
    throw new UnsupportedOperationError(`task ${id} is not waiting for input: send a new message (no taskId) for a new call`);
  }

  /** Until the call's end or its agent's question, at most syncWaitMs. */
  private async waitForTurn(id: string): Promise<void> {
    const { ctx, waiter } = this.deps;
    const until = Date.now() + this.deps.syncWaitMs;
    for (;;) {
      const left = until - Date.now();
      if (left <= 0) return;
      if (await waiter.wait(id, Math.min(left, 500))) return;
      if (await questionOf(ctx, id)) return;
    }
  }

  private stream(who: A2aCaller, id: string, contextId: string): AsyncGenerator<StreamResponse, void, undefined> {
    return streamTask({ ctx: this.deps.ctx, base: who.base, contextId }, id, (task) => this.view(who, task, contextId));
  }
}

/** A config as its owner sees it: never its token. */
const shownConfig = (taskId: string, c: { id: string; url: string }): TaskPushNotificationConfig => ({
  tenant: '',
  id: c.id,
  taskId,
  url: c.url,
  token: '',
  authentication: undefined,
});

/** The task id of what admission answered: the call (queued), or the receipt of a refusal or a held request. */
function idOf(s: Submitted): string {
  switch (s.kind) {
    case 'queued':
      return s.callId;
    case 'refused':
      return s.receipt.id;
    case 'held':
      return s.receipt.id;
  }
}
