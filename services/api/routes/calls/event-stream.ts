/**
 * A call's events as Server-Sent Events (docs/lifecycle.md, "A call's events"): `GET /v0/calls/{id}/events`, and
 * `POST /v0/calls` with `Accept: text/event-stream`. Any API process serves any call: the events are read from
 * Postgres (and their content from the ephemeral store) after the id the client names (`Last-Event-ID`), woken by the
 * `calls-events` and `calls-done` notices, with a look every few seconds in case a notice was lost. The stream ends
 * after `completed`.
 *
 * A call its caller asked to stream ends `disconnected` when its stream is cut and nobody attaches again within
 * HOLON_STREAM_RESUME_S: every attached stream writes its id as the call's last attached one (and writes it again
 * while it stays); a cut stream looks once the time is up, and cancels the call if the last attached one is still
 * itself. A stream ended because this process stops is not a cut: the client resumes on another process.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { requestCancel } from '../../../../shared/calls/cancel.js';
import { followEvents } from '../../../../shared/calls/events/follow.js';
import type { FinalAnswer } from '../../../../shared/calls/events/read.js';
import { sseFrame } from '../../../../shared/calls/events/types.js';
import { attachedKey, streamedKey } from '../../../../shared/calls/wire.js';
import type { AnswerDeps } from './answers.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

export interface StreamDeps extends AnswerDeps {
  /** Fires when this API process stops: its streams end (the clients resume elsewhere), not as a cut. */
  stopping?: AbortSignal;
}

/** Start an SSE answer: status, headers, flushed; `location` for a POST's own call. */
export function openEventStream(res: Response, location?: string): void {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-accel-buffering', 'no');
  if (location) res.setHeader('location', location);
  res.flushHeaders();
}

/** Whether the request asks for an event stream (`Accept: text/event-stream`). */
export function wantsEventStream(req: Request): boolean {
  return /\btext\/event-stream\b/i.test(req.get('accept') ?? '');
}

/** Mark a call as streamed to its caller: a cut not resumed in time ends it `disconnected`. */
export async function markStreamed(deps: AnswerDeps, callId: string, timeoutMs: number): Promise<void> {
  const ttl = Math.ceil(timeoutMs / 1000) + deps.ctx.settings.inputTtlS + deps.ctx.settings.resultTtlS;
  await deps.ctx.messaging.store.put(streamedKey(callId), '1', ttl);
}

/** Pump the call's events after `after` to `res` until `completed`, the client goes, or this process stops. */
export async function pumpEvents(deps: StreamDeps, res: Response, call: { id: string; after: number; final: FinalAnswer }): Promise<void> {
  const { ctx } = deps;
  const { store } = ctx.messaging;
  const callId = call.id;
  const me = randomBytes(8).toString('hex');
  const gone = new AbortController();
  const closed = (): void => gone.abort();
  res.on('close', closed);
  deps.stopping?.addEventListener('abort', closed, { once: true });
  const resumeS = ctx.settings.streamResumeS;
  const attach = (): Promise<void> => store.put(attachedKey(callId), me, resumeS + ctx.settings.resultTtlS).catch(() => undefined);
  await attach();
  const refresh = setInterval(() => void attach(), Math.max(250, (resumeS * 1000) / 3));
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
  let done = false;
  try {
    for await (const e of followEvents(ctx, call, gone.signal)) {
      res.write(sseFrame(e));
      if (e.event === 'completed') done = true;
    }
  } finally {
    clearInterval(refresh);
    clearInterval(keepAlive);
    res.off('close', closed);
    deps.stopping?.removeEventListener('abort', closed);
    if (!res.writableEnded) res.end();
  }
  if (!done && !deps.stopping?.aborted) await watchForReturn(deps, callId, me).catch(() => undefined);
}

/**
 * A cut stream: if its call was streamed and nobody attaches within HOLON_STREAM_RESUME_S, the call ends
 * `disconnected`. The look is this process's: when it stops first, the look goes with it (the call then runs on).
 */
async function watchForReturn(deps: StreamDeps, callId: string, me: string): Promise<void> {
  const { store } = deps.ctx.messaging;
  if ((await store.peek(streamedKey(callId))) === undefined) return;
  const look = async (): Promise<void> => {
    deps.stopping?.removeEventListener('abort', forget);
    if ((await store.peek(attachedKey(callId))) !== me) return;
    await requestCancel(deps.engine, callId, 'disconnected');
  };
  const timer = setTimeout(() => {
    look().catch((e: Error) => deps.ctx.log.warn({ call: callId, err: { message: e.message } }, 'a cut stream could not end its call'));
  }, deps.ctx.settings.streamResumeS * 1000);
  timer.unref();
  function forget(): void {
    clearTimeout(timer);
  }
  deps.stopping?.addEventListener('abort', forget, { once: true });
}
