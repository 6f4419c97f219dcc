/**
 * A run's side of the call's events (docs/lifecycle.md, "A call's events"): what the agent tells its caller before it
 * ends — chunks of a streamed output, progress, questions — appended in order to the call's stream. This run is the
 * stream's only writer, so its events are numbered here.
 *
 * Every chunk is checked before anyone can read it: its JSON against `interface.stream.chunk`, its cumulative units
 * against the reservation. The chunk that would take the cost past what was reserved ends the run (`budget`) and is
 * never delivered; an invalid chunk ends it as invalid output does. A question stops the run's clock; its answer
 * comes through the row the answer takes (events/answer.ts) and the store, announced on `calls-input`.
 */
import { checkAuthorSchema } from '../../core/manifest/rules/author-schema.js';
import type { Manifest } from '../../core/manifest/types.js';
import type { MandateBudget } from '../../core/pricing.js';
import type { Micros } from '../../core/money.js';
import type { RunDeadline } from '../../runtimes/abort.js';
import type { RunStream } from '../../runtimes/types.js';
import type { CallResources } from '../engine-types.js';
import { answerRefOf, appendEventRow } from '../events/rows.js';
import { lookUntilFound } from '../events/look.js';
import { FIRST_APPENDED_ID, type InputRequest } from '../events/types.js';
import { checkChunk, jsonText, StreamEnded, type StreamState } from './stream-state.js';
import { moveRunDeadline } from '../transitions.js';
import { openQuestionDelivery } from '../../webhooks/deliveries.js';
import { answerKey, CALLS_EVENTS_CHANNEL, CALLS_INPUT_CHANNEL, eventKey } from '../wire.js';

const MAX_MESSAGE = 2000;
/** How often a waiting question looks at its row, in case the `calls-input` notice was lost. */
const ANSWER_POLL_MS = 1000;

export interface RunStreamParts {
  ctx: CallResources;
  callId: string;
  manifest: Manifest;
  budget: MandateBudget;
  maxCost: Micros | undefined;
  deadline: RunDeadline;
}

export function createRunStream(parts: RunStreamParts): RunStream & { state: StreamState; seal(): Promise<void> } {
  const { ctx, callId, manifest, budget, maxCost, deadline } = parts;
  const { store, notifier } = ctx.messaging;
  const state: StreamState = { chunks: 0, units: 0n, active: false };
  let next = FIRST_APPENDED_ID;
  let tail: Promise<unknown> = Promise.resolve();
  /** The run is over (its result is in): nothing more joins the stream, so what it delivered is final. */
  let sealed = false;
  // Content lives as long as the run can, then as long as an output waits for pickup.
  const ttl = (): number => ctx.settings.resultTtlS + Math.ceil(deadline.remainingMs() / 1000) + 5;

  /** One append at a time, in the order the agent made them. */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
  const end = (e: StreamEnded): never => {
    if (!state.ended) {
      state.ended = e;
      deadline.end(e);
    }
    throw state.ended;
  };
  const json = (value: unknown, what: string): string => {
    const text = jsonText(value, what);
    return typeof text === 'string' ? text : end(text);
  };
  const append = async (
    kind: 'progress' | 'output.chunk' | 'input_required' | 'input_provided',
    content: string | undefined,
    row: { chunk?: number; units?: bigint; fraction?: number } = {},
  ) => {
    // An agent that goes on after its run ended (aborted, cancelled, timed out) reaches nobody.
    if (sealed || (deadline.signal.aborted && kind !== 'input_provided')) throw state.ended ?? deadline.signal.reason;
    const seq = next++;
    state.active = true;
    if (content !== undefined) await store.put(eventKey(callId, seq), content, ttl());
    await appendEventRow(ctx.db, callId, { seq, kind, ...row });
    void notifier.publish(CALLS_EVENTS_CHANNEL, callId).catch(() => undefined);
    return seq;
  };

  return {
    state,
    async seal() {
      sealed = true;
      await tail;
    },
    emit(chunk, units) {
      return serial(async () => {
        if (state.ended) throw state.ended;
        const checked = checkChunk(manifest, { chunk, units }, state, { budget, maxCost });
        if (checked instanceof StreamEnded) return end(checked);
        const data = `{"seq":${state.chunks},"data":${checked.text}${units !== undefined ? `,"units_so_far":${checked.total}` : ''}}`;
        await append('output.chunk', data, { chunk: state.chunks, units: checked.total });
        state.chunks += 1;
        state.units = checked.total;
      });
    },
    progress(p) {
      return serial(async () => {
        if (state.ended) throw state.ended;
        const message = typeof p?.message === 'string' ? p.message.slice(0, MAX_MESSAGE) : undefined;
        const fraction = typeof p?.fraction === 'number' && p.fraction >= 0 && p.fraction <= 1 ? p.fraction : undefined;
        await append('progress', JSON.stringify({ ...(message !== undefined ? { message } : {}), ...(fraction !== undefined ? { fraction } : {}) }), {
          ...(fraction !== undefined ? { fraction } : {}),
        });
      });
    },
    async ask(request) {
      const seq = await serial(async () => {
        if (state.ended) throw state.ended;
        const asked = checkRequest(request);
        if (typeof asked === 'string') return end(new StreamEnded('error', 'agent_error', asked));
        return append('input_required', json(asked, 'a question'));
      });
      // A caller with a callback_url hears of it there too (call.input_required), at once.
      await openQuestionDelivery(ctx.db, ctx.messaging.queues, callId, seq).catch((e: Error) =>
        ctx.log.warn({ call: callId, err: { message: e.message } }, 'the question could not be sent to the callback_url'),
      );
      // The clock stops while the caller thinks; the sweeper's deadline moves with it.
      deadline.pause();
      const waitMs = ctx.settings.inputTtlS * 1000;
      await moveRunDeadline(ctx.db, callId, waitMs + deadline.remainingMs());
      const answer = await waitForAnswer(ctx, { callId, seq, waitMs, signal: deadline.signal });
      if (answer === undefined) {
        if (deadline.signal.aborted) throw deadline.signal.reason;
        return end(new StreamEnded('no_answer', 'no_answer', `nobody answered the question within ${ctx.settings.inputTtlS} s`));
      }
      await serial(() => append('input_provided', undefined, { chunk: seq }));
      await moveRunDeadline(ctx.db, callId, deadline.remainingMs());
      deadline.resume();
      return JSON.parse(answer) as unknown;
    },
  };
}

/** A question as the agent asked it, checked: words, and a schema the answer can be checked against. */
function checkRequest(request: unknown): InputRequest | string {
  if (typeof request !== 'object' || request === null) return 'ctx.ask needs {message, schema?}';
  const { message, schema } = request as { message?: unknown; schema?: unknown };
  if (typeof message !== 'string' || message.trim() === '') return 'a question needs a message (a non-empty string)';
  if (message.length > MAX_MESSAGE) return `a question's message is over ${MAX_MESSAGE} characters`;
  if (schema === undefined) return { message };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return "a question's schema must be a JSON Schema object";
  const problems = checkAuthorSchema(schema as Record<string, unknown>, '$.schema').problems;
  if (problems.length) return `a question's schema is not usable: ${problems[0]!.path} ${problems[0]!.message}`;
  return { message, schema: schema as Record<string, unknown> };
}

/** The answer to question `seq` (its JSON), once someone gave one; undefined at the end of the wait or when the run ends. */
async function waitForAnswer(ctx: CallResources, question: { callId: string; seq: number; waitMs: number; signal: AbortSignal }): Promise<string | undefined> {
  const { callId, seq, waitMs, signal } = question;
  const watch = { channel: CALLS_INPUT_CHANNEL, callId, everyMs: ANSWER_POLL_MS, waitMs, signal };
  const found = await lookUntilFound(ctx.messaging.notifier, watch, async () => {
    const ref = await answerRefOf(ctx.db, callId, seq);
    // Taken, but lost by the store (a restarted in-process store): nothing to give the agent.
    return ref === undefined ? undefined : { answer: await ctx.messaging.store.take(answerKey(callId, ref)) };
  });
  return found?.answer;
}
