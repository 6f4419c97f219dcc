/**
 * A call's events on the MCP request that follows it (docs/mcp.md, "Streams and questions"): `progress` and
 * `output.chunk` events become `notifications/progress` on the `call_agent` request (when the client sent a progress
 * token; a chunk's data travels as the message's JSON, author text escaped as every agent output is). A question
 * (`input_required`) is kept as the relay's `question`: call_agent turns it into an input request when the client
 * can answer one (follow.ts), else the call stays held for `POST /v0/calls/{id}/input` until HOLON_INPUT_TTL_S.
 */
import type { PrimitiveSchemaDefinition, ServerContext } from '@modelcontextprotocol/server';
import { eventsAfter } from '../../../shared/calls/events/read.js';
import type { CallEvent, InputRequest } from '../../../shared/calls/events/types.js';
import { CALLS_EVENTS_CHANNEL } from '../../../shared/calls/wire.js';
import type { McpDeps } from './tools.js';
import { untrustedJson } from './untrusted.js';

/** A question the call waits on: its event id and what it asks. */
export interface OpenQuestion {
  question: number;
  request: InputRequest;
}

export interface CallRelay {
  /** Wait up to `ms` for the call's end (`done`), or a new event (`event`, passed on), or neither (`idle`). */
  wait(ms: number): Promise<'done' | 'event' | 'idle'>;
  /** The call asked its caller a question: its clock stopped, so its caller waits longer. */
  readonly asked: boolean;
  /** The question the call waits on now, if any (cleared once it is answered). */
  readonly question: OpenQuestion | undefined;
  close(): Promise<void>;
}

/**
 * Relays a call's events after event `after` to the MCP request. Progress goes out only with a progress token;
 * questions are read whoever listens.
 */
export async function relayEvents(deps: McpDeps, callId: string, ctx: ServerContext, after = 0): Promise<CallRelay> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let seen = after;
  let progress = 1000;
  let poke: () => void = () => {};
  const unsubscribe = await deps.ctx.messaging.notifier.subscribe(CALLS_EVENTS_CHANNEL, (message) => {
    if (message === callId) poke();
  });
  const notify = async (message: string): Promise<void> => {
    if (progressToken === undefined || ctx.mcpReq.signal.aborted) return;
    progress += 1;
    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch(() => undefined);
  };
  const relay: { asked: boolean; question: OpenQuestion | undefined } & Omit<CallRelay, 'asked' | 'question'> = {
    asked: false,
    question: undefined,
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
      // Read on whatever woke it: a call that ended quickly (run at once where it was admitted) has events not yet
      // passed on, and they are passed on before its end.
      const page = await eventsAfter(deps.ctx, callId, seen, async () => null);
      for (const e of page.events) {
        if (e.event !== 'completed') await pass(e);
        seen = e.id;
      }
      return page.done || woke === 'done' ? 'done' : woke;
    },
    close: () => unsubscribe(),
  };
  const pass = async (e: CallEvent): Promise<void> => {
    if (e.event === 'progress' || e.event === 'output.chunk') await notify(`${e.event} ${untrustedJson(e.data)}`);
    if (e.event === 'input_provided') relay.question = undefined;
    if (e.event === 'input_required') {
      const data = e.data as { question: number; request: InputRequest | null; answered: boolean };
      relay.asked = true;
      if (data.answered) return;
      await notify(`input_required: question ${data.question}; answer it with POST /v0/calls/${callId}/input`);
      relay.question = data.request ? { question: data.question, request: data.request } : undefined;
    }
  };
  return relay;
}

type FormSchema = { type: 'object'; properties: Record<string, PrimitiveSchemaDefinition>; required?: string[] };

/** An elicitation form's schema from a question's: an object whose properties are all strings, numbers or booleans. */
export function formSchema(schema: Record<string, unknown> | undefined): FormSchema | undefined {
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
