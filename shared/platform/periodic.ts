/**
 * A background sweep run every `everyMs` (the settler's sweeps, the evaluator's recovery): one run at a time (a slow
 * run, on a busy database, is never overtaken by the next), optionally once at start, a failed run logged and tried
 * again at the next tick. The timer is unref'd; `stop` clears it and waits for the run in progress.
 */
import type { Logger } from './log.js';

export interface Periodic {
  stop(): Promise<void>;
}

export interface PeriodicOptions {
  everyMs: number;
  /** Run once at once, before the first interval (default false). */
  atStart?: boolean;
  /** What the log says when a run fails (its error's message is added, nothing else). */
  failure: string;
}

export function startPeriodic(log: Logger, run: () => Promise<unknown>, options: PeriodicOptions): Periodic {
  let running: Promise<unknown> | undefined;
  const tick = (): void => {
    if (running) return;
    running = run()
      .catch((e: unknown) => log.error({ err: { message: (e as Error)?.message } }, options.failure))
      .finally(() => {
        running = undefined;
      });
  };
  if (options.atStart) tick();
  const timer = setInterval(tick, options.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
