/**
 * A call's events on the MCP request that made it (docs/mcp.md, "Streams and questions"): `progress` and
 * `output.chunk` events become `notifications/progress` on the `call_agent` request (when the client sent a progress
 * token; a chunk's data travels as the message's JSON, author text escaped as every agent output is), and a question
 * (`input_required`) becomes an elicitation form when the client declared `elicitation` and the question's schema
 * is one a form can ask (an object of strings, numbers, booleans). Accepted: the form's content is the answer, checked
 * like any answer. Declined: the call is cancelled. Dismissed, or no form: the call stays held for an answer by
 * `POST /v0/calls/{id}/input` until HOLON_INPUT_TTL_S.
 */
import { ElicitResultSchema, type PrimitiveSchemaDefinition, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { requestCancel } from '../../../shared/calls/cancel.js';
import { answerQuestion } from '../../../shared/calls/events/answer.js';
import { eventsAfter } from '../../../shared/calls/events/read.js';
import type { CallEvent, InputRequest } from '../../../shared/calls/events/types.js';
import { CALLS_EVENTS_CHANNEL } from '../../../shared/calls/wire.js';
import type { McpDeps } from './tools.js';
import { untrusted, untrustedJson } from './untrusted.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface CallRelay {
  /** Wait up to `ms` for the call's end (`done`), or a new event (`event`, passed on), or neither (`idle`). */
  wait(ms: number): Promise<'done' | 'event' | 'idle'>;
  /** The call asked its caller a question: its clock stopped, so its caller waits longer. */
  readonly asked: boolean;
  close(): Promise<void>;
}

/** Relays a call's events to the MCP request, or undefined when nobody on the request would hear them. */
export async function relayEvents(deps: McpDeps, callId: string, extra: Extra, canElicit: boolean): Promise<CallRelay | undefined> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined && !canElicit) return undefined;
  let seen = 0;
  let progress = 1000;
  let poke: () => void = () => {};
  const unsubscribe = await deps.ctx.messaging.notifier.subscribe(CALLS_EVENTS_CHANNEL, (message) => {
    if (message === callId) poke();
  });
  const notify = async (message: string): Promise<void> => {
    if (progressToken === undefined || extra.signal.aborted) return;
    progress += 1;
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch(() => undefined);
  };
  const pass = async (e: CallEvent): Promise<void> => {
    if (e.event === 'progress' || e.event === 'output.chunk') await notify(`${e.event} ${untrustedJson(e.data)}`);
    if (e.event === 'input_required') {
      const data = e.data as { question: number; request: InputRequest | null; answered: boolean };
      if (data.answered) return;
      await notify(`input_required: question ${data.question}; answer it with POST /v0/calls/${callId}/input`);
      if (canElicit && data.request) await askInClient(deps, extra, callId, { question: data.question, request: data.request });
    }
  };
  const relay = {
    asked: false,
    async wait(ms: number): Promise<'done' | 'event' | 'idle'> {
      const stop = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const event = new Promise<'event' | 'idle'>((resolve) => {
        poke = () => resolve('event');
        timer = setTimeout(() => resolve('idle'), ms);
      });
      const done = deps.waiter.wait(callId, ms, { signal: stop.signal }).then((r) => (r ? ('done' as const) : ('idle' as const)));
      const woke = await Promise.race([done, event]);
      stop.abort();
      clearTimeout(timer);
      if (woke === 'done') return woke;
      const page = await eventsAfter(deps.ctx, callId, seen, async () => null);
      for (const e of page.events) {
        if (e.event === 'input_required') relay.asked = true;
        if (e.event !== 'completed') await pass(e);
        seen = e.id;
      }
      return page.done ? 'done' : woke;
    },
    close: () => unsubscribe(),
  };
  return relay;
}

/** The question as an elicitation form, when its schema is one a form can ask; its answer given back to the call. */
async function askInClient(deps: McpDeps, extra: Extra, callId: string, q: { question: number; request: InputRequest }): Promise<void> {
  const requestedSchema = formSchema(q.request.schema);
  if (!requestedSchema) return;
  try {
    const result = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: { mode: 'form', message: `The agent of call ${callId} asks: ${untrusted(q.request.message)}`, requestedSchema },
      },
      ElicitResultSchema,
      { signal: extra.signal, timeout: deps.elicitationTimeoutMs },
    );
    if (result.action === 'accept') await answerQuestion(deps.ctx, callId, result.content ?? {}, q.question);
    else if (result.action === 'decline') await requestCancel(deps.engine, callId);
  } catch (e) {
    // Unanswered, or an answer the question's schema refuses: the call stays held for POST /v0/calls/{id}/input.
    deps.ctx.log.warn({ call: callId, err: { message: (e as Error).message } }, 'a question asked in the client got no usable answer');
  }
}

type FormSchema = { type: 'object'; properties: Record<string, PrimitiveSchemaDefinition>; required?: string[] };

/** An elicitation form's schema from a question's: an object whose properties are all strings, numbers or booleans. */
function formSchema(schema: Record<string, unknown> | undefined): FormSchema | undefined {
  if (schema?.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) return undefined;
  const properties: FormSchema['properties'] = {};
  for (const [name, p] of Object.entries(schema.properties as Record<string, unknown>)) {
    if (typeof p !== 'object' || p === null) return undefined;
    const { type, title, description, minLength, maxLength, minimum, maximum, enum: choices } = p as Record<string, unknown>;
    if (!['string', 'number', 'integer', 'boolean'].includes(String(type))) return undefined;
    // Checked above: a string, number or boolean property, with only the keywords a form knows.
    properties[name] = Object.fromEntries(
      Object.entries({ type, title, description, minLength, maxLength, minimum, maximum, enum: choices }).filter(([, v]) => v !== undefined),
    ) as PrimitiveSchemaDefinition;
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}
