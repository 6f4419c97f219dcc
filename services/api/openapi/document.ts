/**
 * GET /v0/openapi.json: an OpenAPI 3.1 document built from the route table (operations.ts). Request bodies are the
 * schemas the routes validate with; every named schema of schemas.ts (and the manifest schema) is a component, and
 * wherever a route uses that very object the document says `$ref`.
 */
import type { Auth, Operation, ResponseSpec } from './operations.js';
import { httpStatusOf } from '../http-status.js';
import { COMPONENTS } from './components.js';
import { ERROR } from './schemas.js';
import type { JsonSchema } from '../../../shared/core/json.js';

export interface DocumentOptions {
  /** HOLON_PUBLIC_URL, when set: the one server. */
  serverUrl?: string;
  /** A dev gateway leaves out what only a hosted one serves. */
  hosted: boolean;
}

/** The pieces of the OpenAPI 3.1 document this file writes (type aliases: each is a plain JSON object too). */
type MediaTypeObject = { schema?: unknown; example?: unknown };
type ResponseObject = {
  description: string;
  headers?: Record<string, { description: string; schema: { type: 'string' } }>;
  content?: Record<string, MediaTypeObject>;
};
type ParameterObject = { name: string; in: 'path' | 'query' | 'header'; required: boolean; description: string; schema: unknown; example?: string };
type OperationObject = {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: ParameterObject[];
  requestBody?: { required: boolean; description?: string; content: Record<string, MediaTypeObject> };
  responses: Record<string, ResponseObject>;
  security: Array<Record<string, string[]>>;
  'x-holon-hosted-only'?: true;
};
type PathItemObject = Partial<Record<Operation['method'], OperationObject>>;
type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers?: Array<{ url: string }>;
  tags: Array<{ name: string }>;
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>;
  };
};

const SCHEMES: Record<Exclude<Auth, 'none'>, { name: string; description: string }> = {
  human: {
    name: 'humanKey',
    description: 'A human key, `hlk_h_…`: the issuer (mandates, keys, approvals, receipts, balance). Sent as `Authorization: Bearer`.',
  },
  agent: { name: 'agentKey', description: 'An agent key, `hlk_a_…`: a grantee acting under one mandate (search, call, its receipts and approvals).' },
  admin: { name: 'adminKey', description: 'The operator key (HOLON_ADMIN_KEY): demo credit and moderation only.' },
};

/** A deep copy in which every named schema (but `self`) is a `$ref`. */
function withRefs(value: unknown, names: ReadonlyMap<object, string>, self?: object): unknown {
  if (Array.isArray(value)) return value.map((v) => withRefs(v, names, self));
  if (value === null || typeof value !== 'object') return value;
  const name = value === self ? undefined : names.get(value);
  if (name) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRefs(v, names, self)]));
}

function security(auth: readonly Auth[]): Array<Record<string, string[]>> {
  const keys = auth.filter((a): a is Exclude<Auth, 'none'> => a !== 'none').map((a) => ({ [SCHEMES[a].name]: [] }));
  // `{}`: no key needed (and a key, when sent, is used).
  return auth.includes('none') ? (keys.length ? [{}, ...keys] : []) : keys;
}

function response(spec: ResponseSpec, ref: (s: unknown) => unknown): ResponseObject {
  const content =
    spec.schema || spec.contentType
      ? {
          [spec.contentType ?? 'application/json']: {
            ...(spec.schema ? { schema: ref(spec.schema) } : {}),
            ...(spec.example !== undefined ? { example: spec.example } : {}),
          },
        }
      : undefined;
  return {
    description: spec.description,
    ...(spec.headers ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) } : {}),
    ...(content ? { content } : {}),
  };
}

function operationObject(op: Operation, ref: (s: unknown) => unknown): OperationObject {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  for (const n of names) if (!op.params?.[n]) throw new Error(`${op.id}: the path parameter {${n}} is not described`);
  const parameters: ParameterObject[] = [
    ...names.map((n) => ({
      name: n,
      in: 'path' as const,
      required: true,
      description: op.params![n]!.description,
      schema: ref(op.params![n]!.schema ?? { type: 'string' }),
      example: op.params![n]!.example,
    })),
    ...Object.entries(op.query ?? {}).map(([n, q]) => ({
      name: n,
      in: 'query' as const,
      required: q.required ?? false,
      description: q.description,
      schema: ref(q.schema ?? { type: 'string' }),
    })),
    ...Object.entries(op.headers ?? {}).map(([n, h]) => ({
      name: n,
      in: 'header' as const,
      required: h.required ?? false,
      description: h.description,
      schema: ref(h.schema ?? { type: 'string' }),
    })),
  ];
  const who = op.auth.map((a) => (a === 'none' ? 'no key' : `${a} key`)).join(', ');
  const description = [
    op.description,
    `Who: ${who}${op.auth.includes('none') ? '' : ' (dev mode: the local operator)'}.`,
    op.hostedOnly ? 'Hosted gateway only (`--hosted`).' : undefined,
  ]
    .filter(Boolean)
    .join('\n\n');
  for (const [status, spec] of Object.entries(op.responses)) {
    for (const code of spec.codes ?? []) {
      if (httpStatusOf(code) !== Number(status)) throw new Error(`${op.id}: \`${code}\` is answered with ${httpStatusOf(code)}, not ${status}`);
    }
  }
  const responses: Record<string, ResponseObject> = Object.fromEntries(Object.entries(op.responses).map(([status, spec]) => [status, response(spec, ref)]));
  responses.default = response(
    {
      description:
        'Any other refusal or failure, in the error shape (429 `rate_limited` with Retry-After, 503 `database_unavailable` with Retry-After, 500 `gateway_error`)',
      schema: ERROR,
    },
    ref,
  );
  return {
    operationId: op.id,
    summary: op.summary,
    description,
    tags: [op.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required ?? true,
            ...(op.body.description ? { description: op.body.description } : {}),
            content: {
              [op.body.contentType ?? 'application/json']: {
                schema: ref(op.body.schema),
                ...(op.body.example !== undefined ? { example: op.body.example } : {}),
              },
            },
          },
        }
      : {}),
    responses,
    security: security(op.auth),
    ...(op.hostedOnly ? { 'x-holon-hosted-only': true } : {}),
  };
}

export function buildOpenApiDocument(operations: readonly Operation[], options: DocumentOptions): OpenApiDocument {
  const names = new Map<object, string>(Object.entries(COMPONENTS).map(([n, s]) => [s, n]));
  const ref = (s: unknown) => withRefs(s, names);
  const paths: Record<string, PathItemObject> = {};
  const ids = new Set<string>();
  for (const op of operations) {
    if (op.hostedOnly && !options.hosted) continue;
    if (ids.has(op.id)) throw new Error(`two operations are called ${op.id}`);
    ids.add(op.id);
    const item = paths[op.path] ?? {};
    paths[op.path] = item;
    if (item[op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is described twice`);
    item[op.method] = operationObject(op, ref);
  }
  const tags = [...new Set(operations.map((o) => o.tag))].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Holon gateway',
      version: 'v0',
      description:
        'Every call between agents goes through the gateway: mandates say what a caller may do, manifests what an agent offers, and every call gets a receipt. Errors are `{error: {code, message, problems?}}`; bad input is a 4xx listing every problem with its path.',
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    tags,
    paths,
    components: {
      // A component is an object, never replaced by a $ref to itself: withRefs answers an object for it.
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([n, s]) => [n, withRefs(s, names, s) as JsonSchema])),
      securitySchemes: Object.fromEntries(Object.values(SCHEMES).map((s) => [s.name, { type: 'http', scheme: 'bearer', description: s.description }])),
    },
  };
}
