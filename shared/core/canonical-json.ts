import { createHash } from 'node:crypto';
import type { JsonObject } from './json.js';

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, numbers and strings as JSON.stringify writes
 * them (the RFC 8785 rules for the values JSON can carry). Two inputs that mean the same hash the same.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    if (s === undefined) throw new TypeError('not a JSON value');
    return s;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys
    .filter((k) => (value as JsonObject)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as JsonObject)[k])}`)
    .join(',')}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function inputHash(input: unknown): string {
  return sha256Hex(canonicalJson(input));
}
