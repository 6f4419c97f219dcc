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

/** What a local run does: the engine's run of an admitted call (run-call.ts `runAdmitted`). */
export type LocalRun = (parts: RunnerParts, callId: string, admitted: { call: ClaimedCall; input: unknown }) => Promise<void>;

export interface LocalRuns {
  /** A free slot of this process's runner, or null (no runner here, all slots taken, or stopping). */
  take(): RunSlot | null;
  /** The runner of this process starts: its parts and how many calls it runs here at once. Closed at its stop. */
  attach(parts: RunnerParts, concurrency: number): { close(): Promise<void> };
}

export function createLocalRuns(run: LocalRun, onError: (callId: string, e: unknown) => void): LocalRuns {
  let runner: { parts: RunnerParts; slots: number } | undefined;
  let taken = 0;
  const drains = new Set<() => void>();
  const free = (): void => {
    taken--;
    if (taken === 0) for (const drained of drains) drained();
  };
  return {
    take() {
      if (!runner || taken >= runner.slots) return null;
      const { parts } = runner;
      taken++;
      let used = false;
      return {
        start(callId, call, input) {
          if (used) return;
          used = true;
          run(parts, callId, { call, input })
            .catch((e: unknown) => onError(callId, e))
            .finally(free);
        },
        release() {
          if (used) return;
          used = true;
          free();
        },
      };
    },
    attach(parts, concurrency) {
      runner = { parts, slots: concurrency };
      return {
        close: async () => {
          runner = undefined;
          if (taken === 0) return;
          await new Promise<void>((resolve) => {
            const drained = (): void => {
              drains.delete(drained);
              resolve();
            };
            drains.add(drained);
          });
        },
      };
    },
  };
}
