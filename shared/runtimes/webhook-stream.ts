/**
 * What a webhook answer may be besides one JSON body (webhook.ts has the contract): a streamed answer
 * (`application/x-ndjson`, read line by line as it arrives, each chunk and progress passed to the run's stream), and a
 * question (`{"input_required", "continuation"}`) whose answer goes back to the endpoint in a new POST. The reading of
 * one answer lives in webhook.ts; here are the lines and the conversation.
 */
import { abortedResult } from './abort.js';
import { agentError, MAX_DECLARED_MESSAGE, truncate } from './messages.js';
import { describeLimit } from './remote.js';
import type { RunContext, RunResult } from './types.js';

/** The most questions one run may ask: the next one is an agent_error. */
const MAX_QUESTIONS = 10;
/** The longest continuation token. */
const MAX_CONTINUATION = 1024;

/** An answer that asks the caller: what to ask, and the token the answer goes back with. */
export interface Question {
  kind: 'question';
  request: { message: string; schema?: Record<string, unknown> };
  continuation: string;
}

/** One answer of the endpoint, read: a result, or a question. */
export type Answer = RunResult | Question;

type Body = AsyncIterable<Buffer> & { destroyed: boolean; destroy(): void; on(event: 'error', listener: () => void): unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drop an answer unread (or the rest of it): the connection closes. */
export function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The `{"error": {"code": "<string>", "message"?}}` shape, if the answer has it. */
export function declaredError(body: unknown): { code: string; message?: string } | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (!isObject(error)) return undefined;
  const { code, message } = error;
  if (typeof code !== 'string') return undefined;
  return { code, ...(typeof message === 'string' ? { message: truncate(message, MAX_DECLARED_MESSAGE) } : {}) };
}

/** Whether a 2xx answer is streamed: `Content-Type: application/x-ndjson` (parameters allowed). */
export function isNdjson(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return (value ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-ndjson';
}

/**
 * A parsed 2xx JSON answer as a question, when it has `input_required` and `continuation`; undefined when it is an
 * output; agent_error when it is a question badly put.
 */
export function questionOf(parsed: unknown): Question | RunResult | undefined {
  if (!isObject(parsed) || !('input_required' in parsed) || !('continuation' in parsed)) return undefined;
  const { input_required: asked, continuation } = parsed;
  if (!isObject(asked) || typeof asked.message !== 'string') return agentError('input_required needs {"message": "<string>", "schema"?: {…}}');
  if (asked.schema !== undefined && !isObject(asked.schema)) return agentError("input_required's schema must be a JSON Schema object");
  // It goes back as a header: visible ASCII only.
  if (typeof continuation !== 'string' || !/^[\x21-\x7e]+$/.test(continuation) || continuation.length > MAX_CONTINUATION) {
    return agentError(`the continuation must be a string of 1 to ${MAX_CONTINUATION} visible ASCII characters`);
  }
  const request = { message: asked.message, ...(asked.schema !== undefined ? { schema: asked.schema } : {}) };
  return { kind: 'question', request, continuation };
}

/**
 * Ask the caller each question an answer puts, and send the answer back (`send`), until an answer is a result:
 * at most MAX_QUESTIONS questions. Without a stream (an evaluation) a question has nobody to answer it.
 */
export async function converse(first: Answer, send: (continuation: string, answer: unknown) => Promise<Answer>, run: RunContext): Promise<RunResult> {
  let answer = first;
  for (let asked = 0; answer.kind === 'question'; asked++) {
    if (!run.stream) return agentError('the agent asked a question, but nobody can answer a question here (no caller is attached)');
    if (asked >= MAX_QUESTIONS) return agentError(`the agent asked more than ${MAX_QUESTIONS} questions in one run`);
    let reply: unknown;
    try {
      reply = await run.stream.ask(answer.request);
    } catch (err) {
      if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
      return agentError(`the question was not answered: ${err instanceof Error ? err.message : String(err)}`);
    }
    answer = await send(answer.continuation, reply);
  }
  return answer;
}

class TooLarge extends Error {}

/** The answer's lines (without their `\n`) as they arrive; past `limit` bytes in all, TooLarge. */
async function* linesOf(body: Body, limit: number): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) throw new TooLarge();
    const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let end = buf.indexOf(0x0a, start); end >= 0; end = buf.indexOf(0x0a, start)) {
      yield buf.subarray(start, end);
      start = end + 1;
    }
    pending = buf.subarray(start);
  }
  if (pending.length) yield pending;
}

type Line =
  | { kind: 'chunk'; chunk: unknown; units?: bigint }
  | { kind: 'progress'; progress: { message?: string; fraction?: number } }
  | { kind: 'end'; result: RunResult; units?: bigint }
  | { kind: 'bad'; why: string };

const SHAPES: Record<string, readonly string[]> = {
  chunk: ['chunk', 'units'],
  progress: ['progress'],
  output: ['output', 'units'],
  error: ['error', 'units'],
};
const EXPECTED = '{"chunk"}, {"progress"}, {"output"} or {"error"}';

/** One line of a streamed answer, read; the text is not blank. */
function parseLine(text: string): Line {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'bad', why: `is not JSON (expected ${EXPECTED})` };
  }
  const kind = isObject(value) ? Object.keys(SHAPES).find((k) => k in value) : undefined;
  if (!isObject(value) || kind === undefined) return { kind: 'bad', why: `is not one of ${EXPECTED}` };
  const extra = Object.keys(value).find((k) => !SHAPES[kind]!.includes(k));
  if (extra !== undefined) return { kind: 'bad', why: `has "${truncate(extra, 40)}" beside "${kind}"` };
  let units: bigint | undefined;
  if ('units' in value) {
    if (typeof value.units !== 'number' || !Number.isSafeInteger(value.units) || value.units < 0) {
      return { kind: 'bad', why: 'has units that are not a non-negative whole number' };
    }
    units = BigInt(value.units);
  }
  const withUnits = units !== undefined ? { units } : {};
  if (kind === 'chunk') return { kind: 'chunk', chunk: value.chunk, ...withUnits };
  if (kind === 'output') return { kind: 'end', result: { kind: 'output', output: value.output }, ...withUnits };
  if (kind === 'error') {
    const declared = declaredError(value);
    if (!declared) return { kind: 'bad', why: 'is an error line without {"error": {"code": "<string>"}}' };
    return { kind: 'end', result: { kind: 'error', ...declared }, ...withUnits };
  }
  const p = value.progress;
  if (!isObject(p) || (p.message !== undefined && typeof p.message !== 'string') || (p.fraction !== undefined && typeof p.fraction !== 'number')) {
    return { kind: 'bad', why: 'is a progress line without {"progress": {"message"?: "<string>", "fraction"?: <number>}}' };
  }
  return {
    kind: 'progress',
    progress: { ...(p.message !== undefined ? { message: p.message } : {}), ...(p.fraction !== undefined ? { fraction: p.fraction } : {}) },
  };
}

/**
 * A streamed answer, read line by line as it arrives: chunks and progress go to the run's stream in order (nowhere
 * without one), the last line is the output or the agent's error. The stream refusing a chunk (the budget, an invalid
 * chunk, the run over) stops the reading and closes the connection: the runner decides from the stream's state.
 * A network error while reading is thrown (webhook.ts reads it).
 */
export async function readNdjson(body: Body, run: RunContext, limit: number): Promise<RunResult> {
  const stop = (result: RunResult): RunResult => {
    if (!body.destroyed) discard(body);
    return result;
  };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let end: Extract<Line, { kind: 'end' }> | undefined;
  let units: bigint | undefined;
  let n = 0;
  try {
    for await (const bytes of linesOf(body, limit)) {
      n += 1;
      let text: string;
      try {
        text = decoder.decode(bytes);
      } catch {
        return stop(agentError(`line ${n} of the streamed answer is not UTF-8`));
      }
      if (text.trim() === '') continue;
      if (end) return stop(agentError(`the streamed answer goes on after its final line (line ${n})`));
      const line = parseLine(text);
      if (line.kind === 'bad') return stop(agentError(`line ${n} of the streamed answer ${line.why}`));
      if (line.kind === 'end') end = line;
      else {
        if (line.kind === 'chunk' && line.units !== undefined) units = line.units;
        try {
          if (line.kind === 'chunk') await run.stream?.emit(line.chunk, line.units);
          else await run.stream?.progress(line.progress);
        } catch {
          return stop(abortedResult(run.signal.reason, run.timeoutMs));
        }
      }
    }
  } catch (err) {
    if (err instanceof TooLarge) return stop(agentError(`answer larger than ${describeLimit(limit)}`));
    throw err;
  }
  if (!end) return agentError('the streamed answer ended without its final {"output"} or {"error"} line');
  // A per_unit agent's units: the final line's, else the last chunk's.
  const total = end.units ?? units;
  return total !== undefined && end.result.kind !== 'failure' ? { ...end.result, units: total } : end.result;
}
