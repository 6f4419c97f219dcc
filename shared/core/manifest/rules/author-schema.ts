/**
 * An author's JSON Schema (interface.input / interface.output): size limit, RE2-only regular
 * expressions, known formats, and compilation with the gateway's ajv (createAjv).
 */
import RE2 from 're2';
import { createAjv, type ValidateFunction } from '../../schema/ajv.js';
import { childPath, isRecord } from './util.js';

export const MAX_SCHEMA_BYTES = 64 * 1024;

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

export function compileAuthorSchema(schema: Record<string, unknown>): ValidateFunction {
  // One ajv per schema: two schemas may carry the same $id.
  return createAjv().compile(schema);
}

/**
 * Every problem of one author schema, reported at `path` (e.g. "$.interface.input"), and the compiled
 * validator when there is none.
 */
export function checkAuthorSchema(schema: Record<string, unknown>, path: string): { messages: string[]; validate?: ValidateFunction } {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch (e) {
    return { messages: [`is not a JSON document: ${(e as Error).message}`] };
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_SCHEMA_BYTES) {
    return { messages: [`is ${Math.ceil(bytes / 1024)} KB as JSON; a schema may be at most 64 KB`] };
  }
  const ajv = createAjv();
  const knownFormats = new Set(Object.keys(ajv.formats));
  const messages: string[] = [];
  for (const node of subschemas(schema, path)) {
    const s = node.schema;
    if (typeof s.pattern === 'string') checkRegex(s.pattern, `at ${childPath(node.path, 'pattern')}`, messages);
    if (isRecord(s.patternProperties)) {
      for (const key of Object.keys(s.patternProperties)) {
        checkRegex(key, `(a patternProperties key at ${childPath(node.path, 'patternProperties', key)})`, messages);
      }
    }
    if (typeof s.format === 'string' && !knownFormats.has(s.format)) {
      messages.push(`the format "${s.format}" at ${childPath(node.path, 'format')} is not one ajv-formats knows`);
    }
  }
  if (messages.length) return { messages };
  try {
    return { messages, validate: ajv.compile(schema) };
  } catch (e) {
    return { messages: [`is not a usable JSON Schema (draft 2020-12): ${(e as Error).message}`] };
  }
}

function checkRegex(pattern: string, where: string, messages: string[]): void {
  try {
    new RE2(pattern, 'u');
  } catch (e) {
    messages.push(
      `the regular expression "${pattern}" ${where} cannot be compiled by RE2 (${(e as Error).message}); ` + 'RE2 has no back-references and no look-around',
    );
  }
}

/** Every subschema object of `root` (itself included), with its JSON path. Iterative: deep schemas cannot overflow the stack. */
function* subschemas(root: Record<string, unknown>, rootPath: string): Generator<{ schema: Record<string, unknown>; path: string }> {
  const stack: Array<{ schema: Record<string, unknown>; path: string }> = [{ schema: root, path: rootPath }];
  const seen = new Set<object>();
  while (stack.length) {
    const node = stack.pop()!;
    if (seen.has(node.schema)) continue;
    seen.add(node.schema);
    yield node;
    const at = (...segments: Array<string | number>) => childPath(node.path, ...segments);
    const push = (value: unknown, path: string) => {
      if (isRecord(value)) stack.push({ schema: value, path });
    };
    for (const key of SCHEMA_MAPS) {
      const map = node.schema[key];
      if (isRecord(map)) for (const [name, sub] of Object.entries(map)) push(sub, at(key, name));
    }
    for (const key of SCHEMA_ONE) push(node.schema[key], at(key));
    for (const key of SCHEMA_LISTS) {
      const list = node.schema[key];
      if (Array.isArray(list)) for (const [i, sub] of list.entries()) push(sub, at(key, i));
    }
  }
}
