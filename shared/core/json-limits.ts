/**
 * What a JSON value must be before the gateway accepts it (gateway.md §7, "Bad input"): every string and field
 * name storable in Postgres — no NUL character, no lone UTF-16 surrogate (neither fits in `text` or `jsonb`) — and
 * at most MAX_JSON_DEPTH levels of objects and arrays. Checked once on every request body, and on every call's
 * input (delegated calls come from agents, not from HTTP). Pure; walks iteratively, so a hostile depth is cheap.
 */

/** Levels of nested objects and arrays a request body may have (a call's `input` is one level below the body). */
export const MAX_JSON_DEPTH = 64;

export interface JsonProblem {
  path: string;
  message: string;
}

// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `s` holds a UTF-16 surrogate that is not half of a pair (not valid Unicode). */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/** Why this string cannot be stored, or undefined. */
export function stringProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character';
  if (hasLoneSurrogate(s)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

const childPath = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${key.slice(0, 200)}`);

/** The first problem of a JSON value (depth, NUL, lone surrogate), with its path; undefined when there is none. */
export function jsonProblem(value: unknown, path = '$', maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path, depth: 0 }];
  while (stack.length) {
    const { value: v, path: p, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return { path: p, message: problem };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) return { path: p, message: `nests deeper than ${maxDepth} levels of objects and arrays` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: childPath(p, i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const problem = stringProblem(key);
      if (problem) return { path: `${p} (a field name)`, message: problem };
      stack.push({ value: child, path: childPath(p, key), depth: depth + 1 });
    }
  }
  return undefined;
}
