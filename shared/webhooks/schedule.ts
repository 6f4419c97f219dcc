/**
 * When the next attempt of a webhook delivery goes out (docs/webhooks.md). Pure: no clock, no I/O.
 *
 * The schedule is a list of delays, one per attempt, counted from the end of the attempt before (the first from
 * settlement): by default the Standard Webhooks one, immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h,
 * 24 h (HOLON_WEBHOOK_SCHEDULE). After each failed attempt:
 * - 2xx: delivered, stop; 410 Gone: the receiver wants no more, stop;
 * - anything else (another status, a refused connection, a timeout): the next delay of the schedule, or the
 *   receiver's `Retry-After` (seconds or an HTTP date) when that is longer, capped at 24 h; no delay left: give up.
 */

/** The longest wait a `Retry-After` may ask for. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * A `Retry-After` header (RFC 9110 §10.2.3) as a wait in ms from `nowMs`, or undefined when absent or unreadable.
 * An HTTP date in the past is a wait of 0; the wait is capped at 24 h.
 */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  let ms: number;
  if (/^[0-9]+$/.test(value)) ms = Number(value) * 1000;
  else {
    // IMF-fixdate and the obsolete forms all name a weekday; a bare number-ish string is not a date here.
    if (!/^[A-Za-z]{3,9},? /.test(value)) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

export type AttemptResult = { statusCode: number; retryAfterMs?: number } | { error: string };

export type Verdict = { kind: 'delivered' } | { kind: 'gone' } | { kind: 'retry'; delayMs: number } | { kind: 'gave_up' };

/**
 * What follows attempt `step` (0-based position in the schedule) that ended with `result`: `schedule[step + 1]`
 * is the next delay (or the `Retry-After` when longer, at most 24 h); past the end of the schedule, give up.
 */
export function verdict(schedule: readonly number[], step: number, result: AttemptResult): Verdict {
  if ('statusCode' in result) {
    if (result.statusCode >= 200 && result.statusCode < 300) return { kind: 'delivered' };
    if (result.statusCode === 410) return { kind: 'gone' };
  }
  const next = schedule[step + 1];
  if (next === undefined) return { kind: 'gave_up' };
  const asked = 'statusCode' in result ? result.retryAfterMs : undefined;
  return { kind: 'retry', delayMs: Math.max(next, Math.min(asked ?? 0, MAX_RETRY_AFTER_MS)) };
}
