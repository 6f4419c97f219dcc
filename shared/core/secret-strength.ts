/**
 * Whether a secret looks generated (docs/operating.md, "Secrets"): production refuses a secret a person typed
 * (`aaaa…`, `changeme…`, a repeated word) rather than one `openssl rand` made. Pure: the rule and its thresholds,
 * nothing about which setting it is. The thresholds let every secret `openssl rand -base64 32` or
 * `openssl rand -hex 16` (and longer) makes pass — hex has only 16 distinct characters — and refuse what has:
 *
 * - fewer than {@link MIN_SECRET_LENGTH} characters;
 * - fewer than {@link MIN_DISTINCT} distinct characters (32 random hex characters have fewer than 8 once in ~10⁷);
 * - a run of {@link MAX_RUN} or more of one character (in 64 random hex characters: about once in 5·10⁶);
 * - a shorter pattern repeated to its length (`abcdefgh` × 4, `0123456789abcdef` × 2);
 * - less than {@link MIN_ENTROPY_BITS} bits by its own character frequencies (Shannon entropy × length): few
 *   characters in uneven measure (32 random hex characters measure 91 bits or more in 300,000 draws).
 */

/** The shortest secret accepted (HOLON_FILE_SECRET in production, HOLON_ADMIN_KEY whenever it is set). */
export const MIN_SECRET_LENGTH = 32;
export const MIN_DISTINCT = 8;
export const MAX_RUN = 8;
const MIN_ENTROPY_BITS = 80;

/** What is weak about `secret`, in words that never repeat it; null when it looks generated. */
export function secretWeakness(secret: string): string | null {
  const chars = [...secret];
  if (chars.length < MIN_SECRET_LENGTH) return `it has ${chars.length} characters; at least ${MIN_SECRET_LENGTH} are needed`;
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (counts.size < MIN_DISTINCT) return `it has only ${counts.size} distinct characters`;
  const run = longestRun(chars);
  if (run >= MAX_RUN) return `it repeats one character ${run} times in a row`;
  const period = shortestPeriod(chars);
  if (period !== null) return `it repeats a pattern of ${period} characters`;
  const bits = entropyBits(counts, chars.length);
  if (bits < MIN_ENTROPY_BITS) return `it has about ${Math.floor(bits)} bits of entropy by its own characters; at least ${MIN_ENTROPY_BITS} are needed`;
  return null;
}

function longestRun(chars: readonly string[]): number {
  let longest = 0;
  let run = 0;
  chars.forEach((c, i) => {
    run = i > 0 && chars[i - 1] === c ? run + 1 : 1;
    longest = Math.max(longest, run);
  });
  return longest;
}

/** The length of the shortest pattern that, repeated, makes `chars` (at most half its length), or null. */
function shortestPeriod(chars: readonly string[]): number | null {
  for (let p = 1; p <= chars.length / 2; p++) {
    let repeats = true;
    for (let i = p; i < chars.length && repeats; i++) repeats = chars[i] === chars[i - p];
    if (repeats) return p;
  }
  return null;
}

/** Shannon entropy of the characters' frequencies, times the length. */
function entropyBits(counts: ReadonlyMap<string, number>, length: number): number {
  let perChar = 0;
  for (const n of counts.values()) {
    const p = n / length;
    perChar -= p * Math.log2(p);
  }
  return perChar * length;
}
