/**
 * Reading request bodies: every problem listed with its path, unknown fields refused. What no body may hold (NUL,
 * lone surrogates, too deep) was refused before any route ran (body-guard.ts).
 *
 * A route's body is a JSON Schema in its route table (openapi/operations.ts), compiled once here (`bodyReader`) and
 * published as is in GET /v0/openapi.json. The problems keep the gateway's wording: "is required", "is not a known
 * field", "must be a non-empty string", "must be at most N characters", "must be true or false", an amount's problem
 * in the words of shared/core/money.ts, and any keyword's own message from the schema's `x-messages`.
 */
import type { ErrorObject, SchemaValidateFunction } from 'ajv';
import { HolonError, type Problem } from '../../shared/core/errors.js';
import { tryParseAmount } from '../../shared/core/money.js';
import { ajvProblems, createAjv, type ValidateFunction } from '../../shared/core/schema/ajv.js';
import type { JsonSchema } from './openapi/operations.js';
import { isJsonObject, type JsonObject } from '../../shared/core/json.js';
import { parsePointer, resolvePointer } from '../../shared/core/evals/pointer.js';

export type Body = JsonObject;

export function requireObject(body: unknown): Body {
  if (!isJsonObject(body)) throw new HolonError('invalid_request', 'the request body must be a JSON object');
  return body;
}

/**
 * A body and its problems: the schema's (bodyReader), then what only the route can check; `done()` refuses with all.
 * `B` is the body as its schema admits it: what `body` is once `done()` has returned.
 */
export class BodyReader<B extends object = Body> {
  readonly problems: Problem[] = [];
  constructor(readonly body: B) {}

  /** Throw a 400 listing every problem, if any. */
  done(): void {
    if (this.problems.length) {
      throw new HolonError('invalid_request', `the request has ${this.problems.length} problem${this.problems.length === 1 ? '' : 's'}`, this.problems);
    }
  }
}

/** An absolute http(s) URL without user-info, normalised; undefined when it is not one. */
export function httpUrlOf(v: string): string | undefined {
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    if (u.username || u.password) return undefined;
    return u.toString();
  } catch {
    return undefined;
  }
}

/** `x-amount`: the amount rule and words of shared/core/money.ts; its problem is the keyword's one error. */
const amountKeyword: SchemaValidateFunction = (schema: { allowZero?: boolean }, data: unknown): boolean => {
  const r = tryParseAmount(data, { allowZero: schema.allowZero ?? true });
  if (r.ok) return true;
  amountKeyword.errors = [{ keyword: 'x-amount', message: r.message, params: {} }];
  return false;
};

let bodyAjv: ReturnType<typeof createAjv> | undefined;
function ajv(): ReturnType<typeof createAjv> {
  if (bodyAjv) return bodyAjv;
  bodyAjv = createAjv({ allErrors: true });
  bodyAjv.addKeyword({
    keyword: 'x-amount',
    errors: true,
    validate: amountKeyword,
  });
  bodyAjv.addKeyword({ keyword: 'x-url', type: 'string', validate: (_schema: unknown, data: string) => httpUrlOf(data) !== undefined });
  for (const keyword of ['x-messages', 'x-holon-validated-by']) bodyAjv.addKeyword({ keyword });
  return bodyAjv;
}

/** The value a JSON Pointer names in `root`, if any. */
function pointed(root: unknown, pointer: string): unknown {
  const parsed = parsePointer(pointer);
  if (!parsed.ok) return undefined;
  const found = resolvePointer(root, parsed.segments);
  return found.found ? found.value : undefined;
}

/** The subschema a `#/properties/a/maxLength`-style schema path points into (its parent: where the keyword sits). */
function schemaAt(root: JsonSchema, schemaPath: string): JsonSchema | undefined {
  const pointer = schemaPath.replace(/^#/, '');
  const at = pointed(root, pointer.slice(0, Math.max(0, pointer.lastIndexOf('/'))));
  return isJsonObject(at) ? at : undefined;
}

/** One problem in the gateway's words for one ajv error. */
function wording(root: JsonSchema, body: unknown, e: ErrorObject): string {
  const where = schemaAt(root, e.schemaPath) ?? {};
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const property = isJsonObject(where.properties) ? where.properties[missing] : undefined;
    return (isJsonObject(property) ? (property['x-messages'] as Record<string, string> | undefined) : undefined)?.required ?? 'is required';
  }
  const custom = (where['x-messages'] as Record<string, string> | undefined)?.[e.keyword];
  if (custom) return custom;
  if (where['x-amount'] !== undefined) {
    const r = tryParseAmount(pointed(body, e.instancePath), where['x-amount'] as { allowZero?: boolean });
    return r.ok ? (e.message ?? 'is not a valid amount') : r.message;
  }
  switch (e.keyword) {
    case 'type':
      return where.type === 'string' ? 'must be a non-empty string' : where.type === 'boolean' ? 'must be true or false' : ajvProblems([e])[0]!.message;
    case 'minLength':
      return 'must be a non-empty string';
    case 'maxLength':
      return `must be at most ${(e.params as { limit: number }).limit} characters`;
    case 'x-url':
      return 'must be an absolute http(s) URL without credentials';
    case 'x-amount':
      return e.message ?? 'is not a valid amount';
    default:
      return ajvProblems([e])[0]!.message;
  }
}

/**
 * A body reader for one schema, compiled once: `bodyReader(SCHEMA)(req.body)` has every problem the schema finds,
 * one per path, in the gateway's words; the route adds what only it can check, then calls `done()`.
 */
export function bodyReader<B extends object = Body>(schema: JsonSchema): (body: unknown) => BodyReader<B> {
  let validate: ValidateFunction | undefined;
  return (raw) => {
    const body = requireObject(raw);
    validate ??= ajv().compile(schema);
    // The schema's promise: once no problem is listed (`done()`), the body is a `B`.
    const reader = new BodyReader(body as B);
    if (!validate(body)) {
      const seen = new Set<string>();
      for (const e of validate.errors ?? []) {
        // A failed `oneOf`/`anyOf` reports its branches too, and `if` reports itself after `then`: the keyword speaks once.
        if (e.keyword === 'if' || /\/(?:oneOf|anyOf)\//.test(e.schemaPath)) continue;
        const path = ajvProblems([e])[0]!.path;
        if (seen.has(path)) continue;
        seen.add(path);
        reader.problems.push({ path, message: wording(schema, body, e) });
      }
    }
    return reader;
  };
}
