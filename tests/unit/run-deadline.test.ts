/**
 * A run's signal (shared/runtimes/abort.ts runDeadline): the hard timeout fires even when a garbage
 * collection runs while the agent works — AbortSignal.any over AbortSignal.timeout loses it on Node 20.
 */
import { describe, expect, test } from 'vitest';
import { cancelReason, isCancel, runDeadline } from '../../shared/runtimes/abort.js';
import { forceGc } from '../support/force-gc.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the abort reason, or `'never'` once `ms` have passed. */
function firedWithin(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('never'), ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve(signal.reason)), { once: true });
  });
}

describe('runDeadline', () => {
  test('the timeout fires with a TimeoutError after garbage collections, with and without a cancel signal, for every run', async () => {
    const runs = Array.from({ length: 40 }, (_, i) => runDeadline(60, i % 2 ? new AbortController().signal : undefined));
    const fired = Promise.all(runs.map((r) => firedWithin(r.signal, 1_000)));
    await sleep(10);
    forceGc();
    const reasons = await fired;
    for (const reason of reasons) {
      expect(reason).toBeInstanceOf(DOMException);
      expect((reason as DOMException).name).toBe('TimeoutError');
      expect(isCancel(reason)).toBe(false);
    }
    for (const r of runs) r.dispose();
  });

  test('a cancellation fires it at once with the cancel reason, also one that came before the run', async () => {
    const cancel = new AbortController();
    const run = runDeadline(60_000, cancel.signal);
    const fired = firedWithin(run.signal, 1_000);
    cancel.abort(cancelReason('the caller cancelled the call'));
    expect(isCancel(await fired)).toBe(true);
    run.dispose();

    const early = new AbortController();
    early.abort(cancelReason());
    const late = runDeadline(60_000, early.signal);
    expect(late.signal.aborted).toBe(true);
    expect(isCancel(late.signal.reason)).toBe(true);
    late.dispose();
  });

  test('once disposed it never fires: neither the timer nor a later cancellation', async () => {
    const cancel = new AbortController();
    const run = runDeadline(30, cancel.signal);
    run.dispose();
    cancel.abort(cancelReason());
    expect(await firedWithin(run.signal, 120)).toBe('never');
    expect(run.signal.aborted).toBe(false);
  });
});
