/**
 * Every JSON answer the tests receive from a gateway is checked against the gateway's own OpenAPI document: the
 * operation is found by method and path template, and the body is validated (ajv, JSON Schema 2020-12, as OpenAPI 3.1
 * says) against the schema of the status it came with. A field the document does not describe (where the shape is
 * ours: `additionalProperties: false`), a wrong type or a missing field fails the test that received it, so the
 * document cannot drift from what the gateway answers. `send` (http.ts) and the test gateway's `request` call it.
 *
 * Closed by default: an object schema that lists `properties` and says nothing of others (no `additionalProperties`,
 * `unevaluatedProperties` or `patternProperties`) is checked as `unevaluatedProperties: false` (`closedSchema`), so
 * a field the gateway answers and the document does not declare fails here even where the schema forgot to close
 * itself. Free-form JSON (an agent's input or output, an author's JSON Schema, `JsonObject`) is a schema without
 * `properties` (`{type: 'object'}`), or one that says `additionalProperties: true`: left open. A schema that is a
 * branch of an `allOf`/`anyOf`/`oneOf`/`not`/`if` whose parent lists properties itself is not closed on its own
 * (the parent's closing sees what the branch evaluated).
 *
 * Not checked: answers that are not JSON, paths that are not `/v0/…` routes of the document (`/mcp`, `/healthz`,
 * `/console`), and statuses the operation does not document (middleware answers such as 429 and 413 are shared by
 * every route and documented once, as errors); each such answer still has the shared Error shape when it is JSON.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from '../../shared/core/schema/ajv.js';

interface Doc {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

interface Checker {
  templates: Array<{ template: string; pattern: RegExp; literal: number }>;
  doc: Doc;
  compiled: Map<string, ValidateFunction | null>;
  ajv: ReturnType<typeof createAjv>;
}

const checkers = new Map<string, Promise<Checker | null>>();

/** Keywords whose values are data, not schemas. */
const VALUE_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);
/** Keywords whose values are maps of name → schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** In-place applicators: their subschemas see the same instance as their parent. */
const IN_PLACE = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `schema` with every object schema that lists properties and says nothing of others closed
 * (`unevaluatedProperties: false`); `inPlaceOfObject`: it is an in-place branch of a schema that lists properties.
 */
export function closedSchema(schema: unknown, inPlaceOfObject = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closedSchema(s, inPlaceOfObject));
  if (!isObject(schema)) return schema;
  const listsProperties = isObject(schema.properties);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (VALUE_KEYWORDS.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && isObject(v)) out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, closedSchema(s)]));
    else if (IN_PLACE.has(k)) out[k] = closedSchema(v, listsProperties || inPlaceOfObject);
    else out[k] = closedSchema(v);
  }
  const saysOfOthers = 'additionalProperties' in schema || 'unevaluatedProperties' in schema || 'patternProperties' in schema;
  if (listsProperties && !saysOfOthers && !inPlaceOfObject) out.unevaluatedProperties = false;
  return out;
}

/** The document with its schemas (components and every operation's) closed as `closedSchema` says. */
function closedDocument(doc: Doc): Doc {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isObject(node)) return node;
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'schema' ? closedSchema(v) : walk(v)]));
  };
  const schemas = doc.components?.schemas ?? {};
  return {
    ...doc,
    paths: walk(doc.paths) as Doc['paths'],
    components: { ...doc.components, schemas: Object.fromEntries(Object.entries(schemas).map(([n, s]) => [n, closedSchema(s)])) },
  };
}

/** On unless HOLON_RESPONSE_CHECK=0 (to see a test's own failure first while the document is being fixed). */
const RESPONSE_CHECK = process.env.HOLON_RESPONSE_CHECK !== '0';

function templatePattern(template: string): RegExp {
  const literal = template.split(/\{[^}]+\}/g).map((s) => s.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&'));
  return new RegExp(`^${literal.join('([^?#]+?)')}$`);
}

async function checkerFor(base: string): Promise<Checker | null> {
  let c = checkers.get(base);
  if (!c) {
    c = (async () => {
      try {
        const res = await fetch(`${base}/v0/openapi.json`);
        if (!res.ok) return null;
        return answerChecker((await res.json()) as Doc);
      } catch {
        return null;
      }
    })();
    checkers.set(base, c);
  }
  return c;
}

/** A checker of answers against `doc` (its schemas closed). */
function answerChecker(served: Doc): Checker {
  const doc = closedDocument(served);
  const ajv = createAjv({ allErrors: true });
  ajv.addSchema(doc as object, 'doc');
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: templatePattern(template),
    literal: template.replace(/\{[^}]+\}/g, '').length,
  }));
  return { templates, doc, compiled: new Map(), ajv };
}

const pointer = (parts: readonly string[]) => parts.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The most specific template the path matches (most literal characters), or undefined. */
function templateOf(checker: Checker, path: string): string | undefined {
  const bare = path.split(/[?#]/)[0]!;
  let best: { template: string; literal: number } | undefined;
  for (const t of checker.templates) if (t.pattern.test(bare) && (!best || t.literal > best.literal)) best = t;
  return best?.template;
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => {
      const field = e.params && 'additionalProperty' in e.params ? e.params.additionalProperty : e.params?.unevaluatedProperty;
      return `${e.instancePath || '(root)'} ${e.message}${field === undefined ? '' : `: ${String(field)}`}`;
    })
    .join('; ');
}

/**
 * Check one answer; throws when a JSON body does not match the schema its operation documents for its status.
 * `base` is the gateway's origin (the document is read from it once).
 */
export async function checkAnswer(base: string, method: string, path: string, status: number, body: unknown, isJson: boolean): Promise<void> {
  if (!RESPONSE_CHECK || !isJson || !path.startsWith('/v0/')) return;
  const checker = await checkerFor(base);
  if (checker) checkWith(checker, method, path, status, body);
}

/** A checker of answers against this document (the unit test of the checker itself: tests/unit/response-check.test.ts). */
export function checkerOf(doc: unknown): (method: string, path: string, status: number, body: unknown) => void {
  const checker = answerChecker(doc as Doc);
  return (method, path, status, body) => checkWith(checker, method, path, status, body);
}

function checkWith(checker: Checker, method: string, path: string, status: number, body: unknown): void {
  const template = templateOf(checker, path);
  if (!template) return;
  const m = method.toLowerCase();
  const key = `${m} ${template} ${status}`;
  let validate = checker.compiled.get(key);
  if (validate === undefined) {
    const content = checker.doc.paths[template]?.[m]?.responses?.[String(status)]?.content;
    // JSON, or RFC 9457 problem details (a 402 that asks for a payment).
    const type = content?.['application/json'] ? 'application/json' : 'application/problem+json';
    validate = content?.[type]?.schema
      ? checker.ajv.compile({ $ref: `doc#/${pointer(['paths', template, m, 'responses', String(status), 'content', type, 'schema'])}` })
      : null;
    checker.compiled.set(key, validate);
  }
  if (validate && !validate(body)) {
    throw new Error(
      `the answer to ${method} ${path} (${status}) does not match the OpenAPI document (${template}): ${describeErrors(validate.errors)} — body ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
}
