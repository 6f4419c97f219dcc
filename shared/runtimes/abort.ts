/**
 * Abort and cancellation, for every runtime: a run's signal fires at the hard timeout or on cancellation, and the
 * reason it fires with says which (a CancelledError means cancelled, anything else a timeout).
 */
import { describeError, failure } from './messages.js';
import type { RunResult } from './types.js';

/** The reason the gateway aborts a run's signal with when the call is cancelled (not timed out). */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  readonly code = 'cancelled';
  /** Who ended it: the caller's cancel, or a streamed call's caller that went away and did not come back. */
  readonly why: CancelWhy;
  constructor(message = 'the call was cancelled', why: CancelWhy = 'cancelled') {
    super(message);
    this.why = why;
  }
}

export type CancelWhy = 'cancelled' | 'disconnected';

/** A reason for `controller.abort(cancelReason())`: the run then ends `cancelled`, not `timeout`. */
export function cancelReason(message?: string, why: CancelWhy = 'cancelled'): CancelledError {
  return new CancelledError(message, why);
}

/** Whether an abort reason means cancellation. Any other reason (AbortSignal.timeout's TimeoutError, …) is a timeout. */
export function isCancel(reason: unknown): boolean {
  if (reason instanceof CancelledError) return true;
  if (typeof reason !== 'object' || reason === null) return false;
  const r = reason as { name?: unknown; code?: unknown };
  return r.name === 'CancelledError' || r.code === 'cancelled';
}

/** The failure a run ends with when its signal fires. */
export function abortedResult(reason: unknown, timeoutMs?: number): RunResult {
  if (isCancel(reason)) return { kind: 'failure', code: 'cancelled', message: 'the call was cancelled' };
  return {
    kind: 'failure',
    code: 'timeout',
    message:
      typeof timeoutMs === 'number' && Number.isFinite(timeoutMs)
        ? `the agent did not answer within its hard timeout (${timeoutMs} ms)`
        : 'the agent did not answer within its hard timeout',
  };
}

/** The code a stray error ends as: whose contract it broke (see `caught`). */
type StrayCode = 'agent_error' | 'runtime_unavailable';

/**
 * The one net for stray errors. A runtime turns every failure it expects into a RunResult; an error that still
 * escapes (thrown or rejected) ends the call here, with one label: `the runtime failed: …`. The code says where it
 * escaped from: a runtime's own run (raceSignal, below) → agent_error; a runtime whose `run` itself threw
 * (createRuntimes in ./index.ts, e.g. a runtime a test gave it) → runtime_unavailable, never billed.
 */
export async function caught(work: () => Promise<RunResult>, code: StrayCode): Promise<RunResult> {
  try {
    return await work();
  } catch (err) {
    return failure(code, `the runtime failed: ${describeError(err)}`);
  }
}

/**
 * Start `work` and resolve with its result, or with `onAbort()` the moment the signal fires, whichever comes first.
 * A stray error of `work` is an agent_error (`caught`); a late settlement is ignored.
 */
export function raceSignal(signal: AbortSignal, work: () => Promise<RunResult>, onAbort: () => RunResult): Promise<RunResult> {
  const running = caught(work, 'agent_error');
  return new Promise<RunResult>((resolve) => {
    let done = false;
    const abort = (): void => {
      if (done) return;
      done = true;
      resolve(onAbort());
    };
    if (signal.aborted) {
      abort();
      return;
    }
    signal.addEventListener('abort', abort, { once: true });
    void running.then((value) => {
      signal.removeEventListener('abort', abort);
      if (done) return;
      done = true;
      resolve(value);
    });
  });
}

/** A run's signal and the way to let it go once the run has ended. */
export interface RunDeadline {
  /** Fires at the hard timeout (a TimeoutError, like AbortSignal.timeout's) or when the cancel signal fires (its reason). */
  readonly signal: AbortSignal;
  /** Clears the timer and the cancel listener; the signal then never fires. Call it when the run ends. */
  dispose(): void;
  /** Stops the clock (the agent waits for its caller's answer); `resume` starts it again with what was left. */
  pause(): void;
  resume(): void;
  /** What is left of the hard timeout, in milliseconds. */
  remainingMs(): number;
  /** Ends the run now, with `reason` (the stream's budget cap, an unanswered question). */
  end(reason: unknown): void;
}

/**
 * One AbortController the run holds, a timer and a listener: not `AbortSignal.any([AbortSignal.timeout(ms), cancel])`.
 * On Node 20 a garbage collection may collect the timeout signal inside AbortSignal.any (it holds its sources weakly
 * and the timer holds the timeout signal weakly, nodejs/node#57736), and the hard timeout then never fires: under load
 * an agent that overran its timeout was seen to succeed. Here the timer holds the controller strongly until dispose().
 */
export function runDeadline(timeoutMs: number, cancelled?: AbortSignal): RunDeadline {
  const controller = new AbortController();
  const expire = (): void => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  let endsAt = Date.now() + timeoutMs;
  let paused: number | undefined;
  let timer: NodeJS.Timeout | undefined = setTimeout(expire, timeoutMs);
  const onCancel = (): void => controller.abort(cancelled?.reason);
  if (cancelled?.aborted) onCancel();
  else cancelled?.addEventListener('abort', onCancel, { once: true });
  const remainingMs = (): number => Math.max(0, paused ?? endsAt - Date.now());
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      timer = undefined;
      cancelled?.removeEventListener('abort', onCancel);
    },
    pause() {
      if (paused !== undefined || timer === undefined) return;
      paused = remainingMs();
      clearTimeout(timer);
    },
    resume() {
      if (paused === undefined || timer === undefined) return;
      endsAt = Date.now() + paused;
      timer = setTimeout(expire, paused);
      paused = undefined;
    },
    remainingMs,
    end(reason) {
      controller.abort(reason);
    },
  };
}

/** Wait `ms`, or less if the signal fires: it then rejects with the signal's reason (a runtime's polling pause). */
export function pauseOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
