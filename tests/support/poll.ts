/**
 * Waiting for something to happen, the one way every test does it:
 *
 *   const receipt = await poll(async () => (await g.get(`/v0/receipts/${id}`)).body.receipt, { what: 'the receipt', timeoutMs: 10_000 });
 *   await poll(() => expect(seen).toHaveLength(2), { what: 'both messages', assert: true, intervalMs: 20 });
 *
 * `check` is called at once, then every `intervalMs`, until it gives a value other than `undefined` or `false`: poll
 * resolves with that value (so `null`, `0` and `''` count as an answer). When `timeoutMs` has passed it throws
 * `timed out after <timeoutMs> ms waiting for <what>`, followed by `context()` when given (what the services printed).
 *
 * An error thrown by `check` ends the wait at once (a process that exited, a check that cannot work), except with
 * `assert: true`: then `check` is an assertion, done as soon as it returns without throwing (its return value is
 * ignored), and the last failure is what the deadline reports. With `orUndefined: true` the deadline resolves with
 * `undefined` instead of throwing: for a wait whose outcome the test's own expectations judge right after it.
 *
 * Nothing here imports vitest: the scripts that seed a gateway outside it (console-seed.ts) wait with it too.
 */

export interface PollOptions {
  /** What is awaited, for the message at the deadline: "the receipt of r_…". */
  what: string;
  /** The longest wait (default 30 s). */
  timeoutMs?: number;
  /** The pause between two checks (default 100 ms). */
  intervalMs?: number;
  /** More to say at the deadline (e.g. a cluster's `describe`). */
  context?: () => string;
  /** `check` is an assertion: it passes when it does not throw, and throwing means "not yet". */
  assert?: boolean;
  /** At the deadline, resolve with `undefined` rather than throw (the expectations after the wait say what is wrong). */
  orUndefined?: boolean;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function poll(check: () => unknown, options: PollOptions & { assert: true }): Promise<void>;
export function poll<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: PollOptions & { orUndefined: true },
): Promise<T | undefined>;
export function poll<T>(check: () => T | undefined | false | Promise<T | undefined | false>, options: PollOptions): Promise<T>;
export async function poll<T>(check: () => T | undefined | false | Promise<T | undefined | false>, options: PollOptions): Promise<T | undefined> {
  const { what, timeoutMs = 30_000, intervalMs = 100, context, assert = false, orUndefined = false } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    if (assert) {
      try {
        await check();
        return undefined;
      } catch (e) {
        failure = e;
      }
    } else {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    }
    if (Date.now() > deadline) {
      if (orUndefined) return undefined;
      const last = failure instanceof Error ? `: ${failure.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}${context ? `\n${context()}` : ''}`, failure ? { cause: failure } : undefined);
    }
    await sleep(intervalMs);
  }
}
