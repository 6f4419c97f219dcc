/**
 * A JSON Schema (draft 2020-12) describing example JSON values: what a draft listing declares as its interface
 * (gateway.md §7 "Drafting a listing"). Pure, no dependency.
 *
 * Rules:
 * - `null`, booleans, strings: their type; numbers: `integer` when whole, else `number` (both seen: `number`).
 * - Objects: `properties` for every key seen, `required` for the keys present in every object seen (sorted).
 * - Arrays: `items` describes every element merged into one schema (an empty array: no `items`).
 * - Values of different types at one place: `type` lists them all (sorted); `properties`/`required` and `items`
 *   then apply to the object and array cases only, as JSON Schema says.
 * - Deeper than `maxDepth` levels, a value is described by `{}` (anything).
 * The schema always accepts the values it was inferred from.
 */
import type { JsonObject, JsonSchema } from './json.js';

export interface InferOptions {
  /** Nesting levels described; below them `{}`. Default 32. */
  maxDepth?: number;
}

/** What was seen at one place of the examples. */
interface Shape {
  types: Set<string>;
  /** Object keys seen, each key's shape, and in how many of the objects it was present. */
  props?: Map<string, { shape: Shape; count: number }>;
  objects: number;
  /** The merged shape of every array element seen (undefined: no element yet). */
  items?: Shape;
  /** Past maxDepth: anything. */
  any?: boolean;
}

const DEFAULT_MAX_DEPTH = 32;

function emptyShape(): Shape {
  return { types: new Set(), objects: 0 };
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value; // string, boolean, object
}

function add(shape: Shape, value: unknown, depth: number): void {
  if (shape.any) return;
  if (depth <= 0) {
    shape.any = true;
    return;
  }
  const type = typeOf(value);
  shape.types.add(type);
  if (type === 'array') {
    for (const element of value as unknown[]) {
      shape.items ??= emptyShape();
      add(shape.items, element, depth - 1);
    }
  } else if (type === 'object') {
    shape.objects += 1;
    shape.props ??= new Map();
    for (const [key, v] of Object.entries(value as JsonObject)) {
      let prop = shape.props.get(key);
      if (!prop) {
        prop = { shape: emptyShape(), count: 0 };
        shape.props.set(key, prop);
      }
      prop.count += 1;
      add(prop.shape, v, depth - 1);
    }
  }
}

function render(shape: Shape): JsonSchema {
  if (shape.any || shape.types.size === 0) return {};
  const types = new Set(shape.types);
  if (types.has('number')) types.delete('integer');
  const list = [...types].sort();
  const schema: JsonSchema = { type: list.length === 1 ? list[0] : list };
  if (shape.props) {
    const props = [...shape.props.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // Object.fromEntries defines own properties, so a key such as "__proto__" is kept as data.
    schema.properties = Object.fromEntries(props.map(([k, p]) => [k, render(p.shape)]));
    const required = props.filter(([, p]) => p.count === shape.objects).map(([k]) => k);
    if (required.length) schema.required = required;
  }
  if (shape.items) schema.items = render(shape.items);
  return schema;
}

/** The schema of one or several example values (several: merged as elements of one array are). */
export function inferSchema(examples: readonly unknown[], options: InferOptions = {}): JsonSchema {
  const shape = emptyShape();
  const depth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  for (const value of examples) add(shape, value, depth);
  return render(shape);
}

/**
 * `inferSchema`, made shallower until its JSON is at most `maxBytes` (UTF-8); at worst `{}`. For limits such as the
 * manifest's 64 KB per schema.
 */
export function inferSchemaWithin(examples: readonly unknown[], maxBytes: number, options: InferOptions = {}): JsonSchema {
  for (let depth = options.maxDepth ?? DEFAULT_MAX_DEPTH; depth > 0; depth = Math.floor(depth / 2)) {
    const schema = inferSchema(examples, { maxDepth: depth });
    if (Buffer.byteLength(JSON.stringify(schema)) <= maxBytes) return schema;
  }
  return {};
}
