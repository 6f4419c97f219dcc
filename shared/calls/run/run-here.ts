/**
 * Runs in the admitting process (docs/lifecycle.md, "Where a call runs"): a call admitted in a process that runs a
 * runner with a free slot starts right there, with no run-queue hop and no input round trip through the store. The
 * admission's own statement writes the row `running` (started now, its deadline its timeout from now) and so stands
 * for the claim: nobody else can claim it, and a process that dies while it runs leaves a `running` row past its
 * deadline, which the settler's sweeper closes `failed / gateway_restarted`, unbilled — as for any runner that dies.
 *
 * A slot is taken before the admission (the row's status depends on it) and given back when the call was not
 * admitted `running`; once every slot is taken, calls go to the run queue as before. The runner's stop closes this
 * like its queue worker: no new slot, and it waits for the runs it holds (the hand-back reaches them at the grace).
 */
import type { ClaimedCall } from '../transitions.js';
import type { RunnerParts, RunSlot } from '../engine-types.js';

/**
 * What a local run does: the engine's run of an admitted call (run-call.ts `runAdmitted`). `ranOut` is called once the
 * agent's run is over: the slot is free for the next call while this one is closed and settled (as a runner's slot
 * counts agents in flight; the settlement has its own bound, the batcher's group commit).
 */
export type LocalRun = (parts: RunnerParts, callId: string, admitted: { call: ClaimedCall; input: unknown; ranOut: () => void }) => Promise<void>;

export interface LocalRuns {
  /** A free slot of this process's runner, or null (no runner here, all slots taken, or stopping). */
  take(): RunSlot | null;
  /** The runner of this process starts: its parts and how many calls it runs here at once. Closed at its stop. */
  attach(parts: RunnerParts, concurrency: number): { close(): Promise<void> };
}

/** One runner of this process: its parts, its slots, the runs it holds (to their settlement), who waits for them to end. */
interface Attached {
  parts: RunnerParts;
  slots: number;
  /** Slots taken: calls being admitted, and runs whose agent is not done. */
  taken: number;
  /** Runs started here and not yet over (closed and settled): the runner's stop waits for them. */
  running: number;
  drained: Set<() => void>;
}

export function createLocalRuns(run: LocalRun, onError: (callId: string, e: unknown) => void): LocalRuns {
  const runners = new Set<Attached>();
  return {
    take() {
      let runner: Attached | undefined;
      for (const r of runners) if (r.taken < r.slots) runner = r;
      if (!runner) return null;
      const holder = runner;
      holder.taken++;
      let used = false;
      let freed = false;
      const free = (): void => {
        if (freed) return;
        freed = true;
        holder.taken--;
      };
      return {
        start(callId, call, input) {
          if (used) return;
          used = true;
          holder.running++;
          run(holder.parts, callId, { call, input, ranOut: free })
            .catch((e: unknown) => onError(callId, e))
            .finally(() => {
              free();
              holder.running--;
              if (holder.running === 0) for (const drained of [...holder.drained]) drained();
            });
        },
        release() {
          if (used) return;
          used = true;
          free();
        },
      };
    },
    attach(parts, concurrency) {
      const runner: Attached = { parts, slots: concurrency, taken: 0, running: 0, drained: new Set() };
      runners.add(runner);
      return {
        close: async () => {
          runners.delete(runner);
          if (runner.running === 0) return;
          await new Promise<void>((resolve) => {
            const drained = (): void => {
              runner.drained.delete(drained);
              resolve();
            };
            runner.drained.add(drained);
          });
        },
      };
    },
  };
}
