/**
 * Small helpers shared by the manifest rules. Every rule receives the document as written (already known
 * to be a JSON object) and reports problems; rules never assume a field has the right type, because the
 * schema stage reports wrong types and the rules must still run (and not crash) on the rest.
 */
import semver from 'semver';
import { hasField, isJsonObject, type JsonObject } from '../../json.js';
import { jsonPath } from '../../errors.js';
import { tryParseAmount, type Micros } from '../../money.js';
export { isAgentId } from '../../identifiers.js';

export type Report = (path: string, message: string) => void;

/** The object at `doc[key]`, or undefined when absent or not an object. */
export function section(doc: JsonObject, key: string): JsonObject | undefined {
  const v = Object.hasOwn(doc, key) ? doc[key] : undefined;
  return isJsonObject(v) ? v : undefined;
}

/** An exact SemVer 2.0 version as written: no leading "v" or "=", no spaces, no loose forms. */
export function isExactVersion(value: string): boolean {
  return /^[0-9]/.test(value) && value === value.trim() && semver.valid(value) !== null;
}

/** An amount field: its key in the object, its JSON path in the document, whether 0 is an amount there (default yes). */
interface AmountField {
  key: string;
  path: string;
  allowZero?: boolean;
}

/** Parse an amount field when present; report the money module's message when it is not an amount. */
export function amountField(obj: JsonObject, field: AmountField, report: Report): Micros | undefined {
  const { key, path } = field;
  if (!hasField(obj, key)) return undefined;
  const parsed = tryParseAmount(obj[key], { allowZero: field.allowZero ?? true });
  if (!parsed.ok) {
    report(path, parsed.message);
    return undefined;
  }
  return parsed.value;
}

/** `base` followed by JSON path segments: childPath("$.a", "b", 0) = "$.a.b[0]". */
export function childPath(base: string, ...segments: Array<string | number>): string {
  return base + jsonPath(...segments).slice(1);
}
