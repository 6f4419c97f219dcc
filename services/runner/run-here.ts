/**
 * The run hand-off (docs/PERFORMANCE.md): a call admitted in a process that runs a runner starts right there, with no
 * run-queue hop (`ServiceContext.runHere`; `holon serve`), while this process's runner has a free slot. The call row,
 * `queued`, stays the durable hand-off, as the settle hand-off's `settling` row does: the claim decides who runs it,
 * and a call whose local start is lost (the process died) is queued again by the settler's sweeper
 * (services/settler/sweeper.ts, stranded calls). A run that fails before it claims goes to the run queue, whose retries
 * take over; so does every call while the local slots are full, and every call once the runner stops.
 */
import type { ServiceContext } from '../../shared/context.js';
import { enqueueRun } from '../../shared/calls/transitions.js';

export interface RunHandOff {
  /** `ServiceContext.runHere`: true when the run started here; false when the caller must queue it. */
  run(callId: string): boolean;
  /**
   * The runner of this process, once started: its run, and how many runs it may hold here at once. What `attach`
   * answers is the runner's worker for the stop: closed, it takes no new run and waits for those it holds.
   */
  attach(run: (callId: string) => Promise<void>, concurrency: number): { close(): Promise<void> };
}

export function runHandOff(ctx: ServiceContext): RunHandOff {
  let runner: ((callId: string) => Promise<void>) | undefined;
  let slots = 0;
  const running = new Set<Promise<void>>();
  let drained: (() => void) | undefined;

  const start = (run: (callId: string) => Promise<void>, callId: string): void => {
    const p = run(callId)
      .catch(async (e: unknown) => {
        ctx.log.warn({ call: callId, err: { message: (e as Error)?.message } }, 'a run started here failed before it ended: the call goes to the run queue');
        await enqueueRun(ctx, callId).catch((err: unknown) =>
          ctx.log.error({ call: callId, err: { message: (err as Error)?.message } }, 'could not queue the call: the sweeper will'),
        );
      })
      .finally(() => {
        running.delete(p);
        if (running.size === 0) drained?.();
      });
    running.add(p);
  };

  return {
    run(callId) {
      if (!runner || running.size >= slots) return false;
      start(runner, callId);
      return true;
    },
    attach(run, concurrency) {
      runner = run;
      slots = concurrency;
      return {
        close: async () => {
          runner = undefined;
          if (running.size === 0) return;
          await new Promise<void>((resolve) => {
            drained = resolve;
          });
        },
      };
    },
  };
}
