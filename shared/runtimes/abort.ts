/**
 * Abort and cancellation, for every runtime: a run's signal fires at the hard timeout or on cancellation, and the
 * reason it fires with says which (a CancelledError means cancelled, anything else a timeout).
 */
import { describeError } from './messages.js';
import type { RunResult } from './types.js';

/** The reason the gateway aborts a run's signal with when the call is cancelled (not timed out). */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  readonly code = 'cancelled';
  constructor(message = 'the call was cancelled') {
    super(message);
  }
}

/** A reason for `controller.abort(cancelReason())`: the run then ends `cancelled`, not `timeout`. */
export function cancelReason(message?: string): CancelledError {
  return new CancelledError(message);
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

/**
 * Resolve with `work`, or with `onAbort()` the moment the signal fires, whichever comes first.
 * `work` must never reject (callers turn every error into a RunResult); a late settlement is ignored.
 */
export function raceSignal<T>(signal: AbortSignal, work: Promise<T>, onAbort: () => T): Promise<T> {
  return new Promise<T>((resolve) => {
    let done = false;
    const abort = (): void => {
      if (done) return;
      done = true;
      resolve(onAbort());
    };
    if (signal.aborted) {
      abort();
      work.catch(() => undefined);
      return;
    }
    signal.addEventListener('abort', abort, { once: true });
    const finish = (value: T): void => {
      signal.removeEventListener('abort', abort);
      if (done) return;
      done = true;
      resolve(value);
    };
    work.then(finish, (err: unknown) => {
      // Defensive: work is built not to reject. Report it as an agent_error rather than leaving the call hanging.
      signal.removeEventListener('abort', abort);
      if (done) return;
      done = true;
      resolve({ kind: 'failure', code: 'agent_error', message: `the runtime failed: ${describeError(err)}` } as T);
    });
  });
}

/** A run's signal and the way to let it go once the run has ended. */
export interface RunDeadline {
  /** Fires at the hard timeout (a TimeoutError, like AbortSignal.timeout's) or when the cancel signal fires (its reason). */
  readonly signal: AbortSignal;
  /** Clears the timer and the cancel listener; the signal then never fires. Call it when the run ends. */
  dispose(): void;
}

/**
 * One AbortController the run holds, a timer and a listener: not `AbortSignal.any([AbortSignal.timeout(ms), cancel])`.
 * On Node 20 a garbage collection may collect the timeout signal inside AbortSignal.any (it holds its sources weakly
 * and the timer holds the timeout signal weakly, nodejs/node#57736), and the hard timeout then never fires: under load
 * an agent that overran its timeout was seen to succeed. Here the timer holds the controller strongly until dispose().
 */
export function runDeadline(timeoutMs: number, cancelled?: AbortSignal): RunDeadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
  const onCancel = (): void => controller.abort(cancelled?.reason);
  if (cancelled?.aborted) onCancel();
  else cancelled?.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      cancelled?.removeEventListener('abort', onCancel);
    },
  };
}
