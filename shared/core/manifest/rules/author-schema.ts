/**
 * An author's JSON Schema (interface.input / interface.output): size limit, RE2-only regular
 * expressions, known formats, and compilation with the gateway's ajv (createAjv).
 *
 * A schema is compiled once per process: the same manifest is validated by every gateway a process starts (the dev
 * registry) and its schemas are compiled again for calls (interface-validator.ts), so compiled validators are kept by
 * the schema's JSON text. Each is compiled in an ajv of its own (two schemas may carry the same $id); the check
 * against the draft 2020-12 metaschema runs on one shared ajv, which never compiles an author schema.
 */
import RE2 from 're2';
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import type { Problem } from '../../errors.js';
import { ajvProblems, createAjv, type ValidateFunction } from '../../schema/ajv.js';
import { childPath } from './util.js';
import { isJsonObject, type JsonSchema } from '../../json.js';

const MAX_SCHEMA_BYTES = 64 * 1024;

/** Keywords whose value is a map of subschemas, one subschema, or a list of subschemas (draft 2020-12, plus draft-7 leftovers ajv still reads). */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_ONE = [
  'additionalProperties',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'additionalItems',
];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];

/** How many compiled schemas a process keeps (least recently used dropped first). */
const MAX_COMPILED = 512;
const compiled = new Map<string, ValidateFunction>();
let metaschemaAjv: Ajv2020 | undefined;

/** The shared ajv: checks schemas against the metaschema and knows the formats; it compiles no author schema. */
function metaschemaChecker(): Ajv2020 {
  metaschemaAjv ??= createAjv();
  return metaschemaAjv;
}

/** The validator of a schema the metaschema accepts, `text` its JSON: compiled the first time, in an ajv of its own. */
function compiledOnce(text: string, schema: JsonSchema): ValidateFunction {
  const validate = compiled.get(text) ?? createAjv({ validateSchema: false }).compile(schema);
  compiled.delete(text); // (re-)inserted last: most recently used
  compiled.set(text, validate);
  while (compiled.size > MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  return validate;
}

/** A schema's validator; throws when it is not a valid JSON Schema (draft 2020-12) or does not compile. */
export function compileAuthorSchema(schema: JsonSchema): ValidateFunction {
  const text = JSON.stringify(schema);
  if (!compiled.has(text)) {
    const ajv = metaschemaChecker();
    if (!ajv.validateSchema(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(ajv.errors)}`);
  }
  return compiledOnce(text, schema);
}

/**
 * Every problem of one author schema, and the compiled validator when there is none. Size, RE2 and format problems
 * are reported at `path` (e.g. "$.interface.input"), naming where in the schema; a keyword the JSON Schema
 * metaschema refuses, or a `$ref` that does not resolve, at the keyword's own path
 * (`$.interface.input.properties.name.type`), in plain words.
 */
export function checkAuthorSchema(schema: JsonSchema, path: string): { problems: Problem[]; validate?: ValidateFunction } {
  const at = (messages: string[]) => messages.map((message) => ({ path, message }));
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch (e) {
    return { problems: at([`is not a JSON document: ${(e as Error).message}`]) };
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_SCHEMA_BYTES) {
    return { problems: at([`is ${Math.ceil(bytes / 1024)} KB as JSON; a schema may be at most 64 KB`]) };
  }
  const ajv = metaschemaChecker();
  const knownFormats = new Set(Object.keys(ajv.formats));
  const messages: string[] = [];
  for (const node of subschemas(schema, path)) {
    const s = node.schema;
    if (typeof s.pattern === 'string') checkRegex(s.pattern, `at ${childPath(node.path, 'pattern')}`, messages);
    if (isJsonObject(s.patternProperties)) {
      for (const key of Object.keys(s.patternProperties)) {
        checkRegex(key, `(a patternProperties key at ${childPath(node.path, 'patternProperties', key)})`, messages);
      }
    }
    if (typeof s.format === 'string' && !knownFormats.has(s.format)) {
      messages.push(`the format "${s.format}" at ${childPath(node.path, 'format')} is not one ajv-formats knows`);
    }
  }
  if (messages.length) return { problems: at(messages) };
  const keywords = metaschemaProblems(ajv, schema, path);
  if (keywords.length) return { problems: keywords };
  try {
    return { problems: [], validate: compiledOnce(text, schema) };
  } catch (e) {
    const missing = (e as { missingRef?: unknown }).missingRef;
    if (typeof missing === 'string') return { problems: unresolvedRef(schema, path, missing) };
    return { problems: at([`is not a usable JSON Schema (draft 2020-12): ${(e as Error).message}`]) };
  }
}

/** JSON Schema's own types, as the metaschema lists them for `type`. */
const SCHEMA_TYPES = 'array, boolean, integer, null, number, object or string';

/**
 * What the draft 2020-12 metaschema says is wrong, one problem per keyword path (ajv reports the alternatives of an
 * `anyOf` separately, and the same error once per vocabulary), each at that keyword's JSON path.
 */
function metaschemaProblems(ajv: Ajv2020, schema: JsonSchema, path: string): Problem[] {
  if (ajv.validateSchema(schema)) return [];
  const byPointer = new Map<string, ErrorObject[]>();
  for (const e of ajv.errors ?? []) {
    if (['anyOf', 'oneOf', 'allOf', 'if', '$ref', '$dynamicRef'].includes(e.keyword)) continue;
    const list = byPointer.get(e.instancePath) ?? [];
    list.push(e);
    byPointer.set(e.instancePath, list);
  }
  const problems: Problem[] = [];
  for (const [pointer, errors] of byPointer) {
    const keyword = pointer.split('/').at(-1) ?? '';
    const value = valueAt(schema, pointer);
    const shown = value === undefined ? '' : `, not ${describeValue(value)}`;
    const first = ajvProblems([errors[0]!], path)[0]!;
    const types = errors.flatMap((e) => (e.keyword === 'type' ? String((e.params as { type: unknown }).type).split(',') : []));
    let message: string;
    if (keyword === 'type' && errors.some((e) => e.keyword === 'enum'))
      message = `must be one of the JSON Schema types ${SCHEMA_TYPES}, or a list of them${shown}`;
    else if (types.includes('object') && types.includes('boolean')) message = `must be a schema (an object, or true or false)${shown}`;
    else message = `${first.message}${shown}`;
    problems.push({ path: first.path, message });
  }
  return problems.length ? problems : [{ path, message: `is not a valid JSON Schema (draft 2020-12): ${ajv.errorsText(ajv.errors)}` }];
}

/** A `$ref` that points nowhere: reported at each `$ref` naming it (or at the schema when none does, as written). */
function unresolvedRef(schema: JsonSchema, path: string, ref: string): Problem[] {
  const local = ref.startsWith('#');
  const message = local
    ? `"${ref}" points at nothing in this schema (no such definition under $defs)`
    : `"${ref}" is another document: a schema may refer only inside itself (#/$defs/…), never load one`;
  const found: Problem[] = [];
  for (const node of subschemas(schema, path)) {
    const own = node.schema.$ref;
    if (typeof own === 'string' && (own === ref || ref.endsWith(own))) found.push({ path: childPath(node.path, '$ref'), message });
  }
  return found.length ? found : [{ path, message: `a $ref ${message}` }];
}

/** The value at a JSON Pointer inside `root`, or undefined. */
function valueAt(root: unknown, pointer: string): unknown {
  let at: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(at)) at = at[Number(key)];
    else if (isJsonObject(at)) at = at[key];
    else return undefined;
  }
  return at;
}

function describeValue(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function checkRegex(pattern: string, where: string, messages: string[]): void {
  try {
    new RE2(pattern, 'u');
  } catch (e) {
    messages.push(
      `the regular expression "${pattern}" ${where} cannot be compiled by RE2 (${(e as Error).message}); ` +
        'RE2 hasField no back-references and no look-around',
    );
  }
}

/** Every subschema object of `root` (itself included), with its JSON path. Iterative: deep schemas cannot overflow the stack. */
function* subschemas(root: JsonSchema, rootPath: string): Generator<{ schema: JsonSchema; path: string }> {
  const stack: Array<{ schema: JsonSchema; path: string }> = [{ schema: root, path: rootPath }];
  const seen = new Set<object>();
  while (stack.length) {
    const node = stack.pop()!;
    if (seen.has(node.schema)) continue;
    seen.add(node.schema);
    yield node;
    const at = (...segments: Array<string | number>) => childPath(node.path, ...segments);
    const push = (value: unknown, path: string) => {
      if (isJsonObject(value)) stack.push({ schema: value, path });
    };
    for (const key of SCHEMA_MAPS) {
      const map = node.schema[key];
      if (isJsonObject(map)) for (const [name, sub] of Object.entries(map)) push(sub, at(key, name));
    }
    for (const key of SCHEMA_ONE) push(node.schema[key], at(key));
    for (const key of SCHEMA_LISTS) {
      const list = node.schema[key];
      if (Array.isArray(list)) for (const [i, sub] of list.entries()) push(sub, at(key, i));
    }
  }
}
