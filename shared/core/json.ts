/**
 * The names of JSON whose shape nobody knows yet: a document before it is validated, a JSON Schema an author
 * wrote, an agent's input or output, a third party's answer. Everything whose shape the gateway decides has a
 * type of its own; these are the places where a value really is arbitrary JSON.
 */

/** A JSON object of unknown shape (read its fields as `unknown` and check each one). */
export type JsonObject = Record<string, unknown>;

/** A JSON Schema (2020-12), as an author or the gateway wrote it. */
export type JsonSchema = JsonObject;

/** The value is a JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field is present (own property, not undefined). */
export function hasField(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key) && obj[key] !== undefined;
}
