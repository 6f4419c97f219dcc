/**
 * A call's events, followed live in any process (REST's Server-Sent Events, A2A's streams): read from Postgres after
 * the id given, woken by the `calls-events` and `calls-done` notices, with a look every few seconds in case a notice
 * was lost; over after `completed`, or when `signal` fires.
 */
import type { ServiceContext } from '../../context.js';
import { CALLS_DONE_CHANNEL, CALLS_EVENTS_CHANNEL, readCallsDone } from '../wire.js';
import { eventsAfter, type FinalAnswer } from './read.js';
import type { CallEvent } from './types.js';

/** How often a follower looks for events even without a notice (a lost one costs at most this). */
const LOOK_MS = 2000;

export async function* followEvents(
  ctx: ServiceContext,
  call: { id: string; after: number; final: FinalAnswer },
  signal: AbortSignal,
): AsyncGenerator<CallEvent, void, undefined> {
  const { notifier } = ctx.messaging;
  const callId = call.id;
  let wake: () => void = () => {};
  const onNotice = (message: string): void => {
    if (message === callId) wake();
  };
  const unsubscribeEvents = await notifier.subscribe(CALLS_EVENTS_CHANNEL, onNotice);
  const unsubscribeDone = await notifier.subscribe(CALLS_DONE_CHANNEL, (message) => onNotice(readCallsDone(message).callId));
  let after = call.after;
  try {
    while (!signal.aborted) {
      const page = await eventsAfter(ctx, callId, after, call.final);
      for (const e of page.events) {
        yield e;
        after = e.id;
      }
      if (page.done) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, LOOK_MS);
        function finish(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', finish);
          resolve();
        }
        wake = finish;
        signal.addEventListener('abort', finish, { once: true });
      });
    }
  } finally {
    await unsubscribeEvents().catch(() => undefined);
    await unsubscribeDone().catch(() => undefined);
  }
}
