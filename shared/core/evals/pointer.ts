/**
 * JSON Pointers (RFC 6901), as suites use them in `expect.paths`: `""` is the whole value, every other pointer
 * starts with `/`; inside a segment `~0` is `~` and `~1` is `/`, and `~` followed by anything else is invalid.
 * Pure.
 */
import type { JsonObject } from '../json.js';

/** The longest pointer a suite may write. */
const MAX_POINTER_LENGTH = 1024;

export type PointerParse = { ok: true; segments: string[] } | { ok: false; message: string };

/** The segments of a pointer, decoded, or why it is not an RFC 6901 pointer. */
export function parsePointer(pointer: string): PointerParse {
  if (pointer.length > MAX_POINTER_LENGTH) return { ok: false, message: `is longer than ${MAX_POINTER_LENGTH} characters` };
  if (pointer === '') return { ok: true, segments: [] };
  if (!pointer.startsWith('/')) {
    return { ok: false, message: `is not a JSON Pointer: it must start with "/" (such as "/${pointer.slice(0, 40)}"), or be "" for the whole output` };
  }
  const bad = /~(?![01])/.exec(pointer);
  if (bad) return { ok: false, message: 'is not a JSON Pointer: "~" must be followed by 0 ("~0" is "~") or 1 ("~1" is "/")' };
  // RFC 6901 §4: first ~1 → "/", then ~0 → "~" (so "~01" is "~1", not "/").
  return {
    ok: true,
    segments: pointer
      .slice(1)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
  };
}

/** One segment written back as a pointer segment (`~` → `~0`, `/` → `~1`). */
function escapeSegment(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A pointer from segments: ["rows"] → "/rows", [] → "". */
export function formatPointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => `/${escapeSegment(s)}`).join('');
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

export type PointerLookup = { found: true; value: unknown } | { found: false };

/**
 * The value a pointer names in `doc`. Object members must be the value's own (`/__proto__` names a member called
 * so, never the prototype); array segments must be indexes without leading zeros and inside the array (`-`, the
 * element after the last, names nothing).
 */
export function resolvePointer(doc: unknown, segments: readonly string[]): PointerLookup {
  let at: unknown = doc;
  for (const segment of segments) {
    if (Array.isArray(at)) {
      if (!ARRAY_INDEX.test(segment)) return { found: false };
      const index = Number(segment);
      if (index >= at.length) return { found: false };
      at = at[index];
    } else if (at !== null && typeof at === 'object') {
      if (!Object.hasOwn(at, segment)) return { found: false };
      at = (at as JsonObject)[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: at };
}
