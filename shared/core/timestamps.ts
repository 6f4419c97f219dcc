/**
 * RFC 3339 timestamps given by a caller (a period's bounds: GET /v0/receipts?since=&until=, GET /v0/statement).
 * Pure. A time zone is required (`Z` or ±hh:mm); impossible dates and times (Feb 30, 24:00, a leap second 60) are
 * refused rather than rolled over, as for a mandate's `expires_at` (shared/core/mandate/validate.ts). Fractions are
 * kept to the microsecond (Postgres timestamptz's precision; digits beyond are dropped), and the instant must lie in
 * the years 1970 to 9999.
 */

export interface Instant {
  /** Microseconds since 1970-01-01T00:00:00Z. */
  micros: bigint;
  /** The same instant in UTC: `2026-03-01T00:00:00.000Z`, with six fraction digits when it has microseconds. */
  iso: string;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,64}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
/** 10000-01-01T00:00:00Z in milliseconds: the first instant refused. */
const END_MS = 253_402_300_800_000;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The instant, or why the text is not one, in plain words (no more than 40 characters of it quoted). */
export function parseTimestamp(text: string): { ok: true; instant: Instant } | { ok: false; message: string } {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  const bad = `"${shown}" is not an RFC 3339 timestamp such as 2026-03-01T00:00:00Z`;
  const m = RFC3339.exec(text);
  if (!m) return { ok: false, message: bad };
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = m[7] ?? '';
  const sign = m[8] === '-' ? -1 : 1;
  const oh = m[9] === undefined ? 0 : Number(m[9]);
  const om = m[10] === undefined ? 0 : Number(m[10]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) {
    return { ok: false, message: `${bad} (no such date or time)` };
  }
  const at = new Date(0);
  at.setUTCFullYear(y, mo - 1, d);
  at.setUTCHours(h, mi, s, 0);
  const ms = at.getTime() - sign * (oh * 60 + om) * 60_000;
  if (ms < 0 || ms >= END_MS) return { ok: false, message: `"${shown}" is outside the years 1970 to 9999` };
  const sub = BigInt(fraction.padEnd(6, '0').slice(0, 6));
  const micros = BigInt(ms) * 1000n + sub;
  return { ok: true, instant: instantOf(micros) };
}

/** An instant from microseconds since the epoch (≥ 0). */
export function instantOf(micros: bigint): Instant {
  const ms = micros / 1000n;
  const rest = micros % 1000n;
  const iso = new Date(Number(ms)).toISOString();
  return { micros, iso: rest === 0n ? iso : `${iso.slice(0, -1)}${rest.toString().padStart(3, '0')}Z` };
}
