import { createHash } from 'node:crypto';
import type { JsonObject } from './json.js';
import { hasLoneSurrogate } from './json-limits.js';

/**
 * Canonical JSON, exactly RFC 8785 (the JSON Canonicalization Scheme): no whitespace, object keys sorted by their
 * UTF-16 code units (JavaScript's default string order), strings escaped as ECMAScript's JSON.stringify escapes them
 * (`\b \t \n \f \r \" \\`, other control characters as `\u00xx` in lowercase hex, everything else as is), numbers in
 * ECMAScript's Number-to-String form (`1e+21`, `1e-7`, `-0` as `0`). What RFC 8785 cannot say is refused with a
 * TypeError: NaN and the infinities, a string or key holding a lone UTF-16 surrogate (I-JSON allows none; the gateway
 * refuses them in every input already), and what is not JSON (undefined, functions, symbols, bigints). A field whose
 * value is undefined is left out, as JSON.stringify leaves it out. Two inputs that mean the same hash the same, and a
 * signature over this text verifies in any RFC 8785 implementation.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} is not a JSON number`);
      return JSON.stringify(value);
    case 'string':
      return canonicalString(value);
    case 'object':
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      return canonicalObject(value as JsonObject);
    default:
      throw new TypeError(`a ${typeof value} is not a JSON value`);
  }
}

function canonicalString(s: string): string {
  if (hasLoneSurrogate(s)) throw new TypeError('a string holds a lone UTF-16 surrogate (not valid Unicode)');
  return JSON.stringify(s);
}

function canonicalObject(o: JsonObject): string {
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${canonicalString(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function inputHash(input: unknown): string {
  return sha256Hex(canonicalJson(input));
}
