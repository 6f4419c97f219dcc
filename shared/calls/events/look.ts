/**
 * Waiting on something a call's events will bring (an answer to a question, a child's question): look now, then on
 * every notice naming the call on `channel`, and every `everyMs` in case a notice was lost (notices are hints; the
 * rows are the truth); stop when found, when `signal` fires, or once `waitMs` has passed.
 */
import type { Notifier } from '../../messaging/types.js';

export interface LookWatch {
  channel: string;
  callId: string;
  everyMs: number;
  /** The longest to look for; absent: until found or `signal`. */
  waitMs?: number;
  signal: AbortSignal;
}

export async function lookUntilFound<T>(notifier: Notifier, watch: LookWatch, look: () => Promise<T | undefined>): Promise<T | undefined> {
  let wake: () => void = () => {};
  const unsubscribe = await notifier.subscribe(watch.channel, (message) => {
    if (message === watch.callId) wake();
  });
  const until = watch.waitMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + watch.waitMs;
  try {
    while (!watch.signal.aborted && Date.now() < until) {
      const found = await look();
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          watch.signal.removeEventListener('abort', done);
          wake = () => {};
          resolve();
        };
        const timer = setTimeout(done, Math.min(watch.everyMs, Math.max(0, until - Date.now())));
        wake = done;
        watch.signal.addEventListener('abort', done, { once: true });
      });
    }
    return undefined;
  } finally {
    await unsubscribe().catch(() => undefined);
  }
}
