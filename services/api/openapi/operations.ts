/**
 * The route table: every REST route is one `Operation` next to its handler, and the same entry both registers the
 * route (`mount`) and describes it in GET /v0/openapi.json (document.ts). A route's request body schema is the one
 * it validates with (body-reader.ts `bodyReader`), so the document cannot drift from what is enforced.
 *
 * To add a route: define its Operation in the route file (method, path, auth, summary, body/query, responses), mount
 * the handler with `mount(router, op, handler)`, and add the file's operations to ROUTE_OPERATIONS (index.ts).
 * tests/integration/openapi.test.ts walks the app's router and fails on any /v0 route missing from the document.
 */
import type { RequestHandler, Router } from 'express';
import type { ErrorCode } from '../../../shared/core/errors.js';
import type { JsonSchema as AnySchema } from '../../../shared/core/json.js';

/** A JSON Schema (draft 2020-12, which OpenAPI 3.1 uses as is). */
/** The document's schemas are read-only values. */
export type JsonSchema = Readonly<AnySchema>;

/**
 * Who may call: `none` (no key), `human` (hlk_h_), `agent` (hlk_a_), `admin` (HOLON_ADMIN_KEY). In dev mode the
 * local operator may do everything; the document describes the hosted gateway.
 */
export type Auth = 'none' | 'human' | 'agent' | 'admin';

type Method = 'get' | 'post' | 'put' | 'delete';

export interface ResponseSpec {
  description: string;
  /** The JSON body; omitted for a redirect or a file. */
  schema?: JsonSchema;
  /** A media type other than application/json (a file, a page). */
  contentType?: string;
  example?: unknown;
  headers?: Readonly<Record<string, string>>;
  /** An error response: the codes it answers with (each one's status must be this response's). */
  codes?: readonly ErrorCode[];
}

interface ParameterSpec {
  description: string;
  schema?: JsonSchema;
  /** Also the value the route-enumeration test puts in the path. */
  example: string;
}

export interface QuerySpec {
  description: string;
  schema?: JsonSchema;
  required?: boolean;
}

export interface Operation {
  /** operationId, unique. */
  id: string;
  method: Method;
  /** The OpenAPI path template: `/v0/calls/{id}`. */
  path: string;
  /**
   * The Express path, when the template cannot say it (ids holding '/', `@version` suffixes); by default the template
   * with `{x}` written `:x`.
   */
  route?: string | RegExp;
  summary: string;
  description?: string;
  /** The resource (the route file): the document's tag. */
  tag: string;
  auth: readonly Auth[];
  /** Served only by a hosted gateway (`--hosted`); a dev gateway answers 404. */
  hostedOnly?: boolean;
  /** Path parameters, by name: every `{x}` of `path` needs one. */
  params?: Readonly<Record<string, ParameterSpec>>;
  query?: Readonly<Record<string, QuerySpec>>;
  headers?: Readonly<Record<string, QuerySpec>>;
  /** The JSON request body: the very schema the route validates with (or, when it validates in shared/, describes). */
  body?: { schema: JsonSchema; required?: boolean; example?: unknown; contentType?: string; description?: string };
  /** Answers by status: every status the route answers on purpose; errors use the shared Error shape. */
  responses: Readonly<Record<string, ResponseSpec>>;
}

/** Identity, typed: `defineOperations({submit: {...}})` keeps each entry checked and the keys known. */
export function defineOperations<K extends string>(ops: Record<K, Operation>): Readonly<Record<K, Operation>> {
  return ops;
}

/** `/v0/calls/{id}` → `/v0/calls/:id` (path-to-regexp v8, Express 5). */
export function expressPath(template: string): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** Register `handlers` for `op` on `router`: the route is exactly what the document says. */
export function mount(router: Router, op: Operation, ...handlers: RequestHandler[]): void {
  router[op.method](op.route ?? expressPath(op.path), ...handlers);
}
