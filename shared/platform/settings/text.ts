/** The small text rules every setting shares: blank is unset, lists are comma-separated, delays carry a unit. */

/** Trimmed, or undefined when unset or only spaces. */
export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function splitList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `0,5s,5m,…` → milliseconds; undefined when any item is not a duration (`<n>ms|s|m|h`, or a bare 0). */
export function parseDurations(text: string): number[] | undefined {
  const out: number[] = [];
  for (const item of splitList(text)) {
    const m = /^([0-9]+)(ms|s|m|h)?$/.exec(item);
    if (!m || (m[2] === undefined && m[1] !== '0')) return undefined;
    out.push(Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']!);
  }
  return out.length > 0 ? out : undefined;
}
