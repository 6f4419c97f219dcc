/**
 * Every JSON answer the tests receive from a gateway is checked against the gateway's own OpenAPI document: the
 * operation is found by method and path template, and the body is validated (ajv, JSON Schema 2020-12, as OpenAPI 3.1
 * says) against the schema of the status it came with. A field the document does not describe (where the shape is
 * ours: `additionalProperties: false`), a wrong type or a missing field fails the test that received it, so the
 * document cannot drift from what the gateway answers. `send` (http.ts) and the test gateway's `request` call it.
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
        const doc = (await res.json()) as Doc;
        const ajv = createAjv({ allErrors: true });
        ajv.addSchema(doc as object, 'doc');
        const templates = Object.keys(doc.paths).map((template) => ({
          template,
          pattern: templatePattern(template),
          literal: template.replace(/\{[^}]+\}/g, '').length,
        }));
        return { templates, doc, compiled: new Map(), ajv };
      } catch {
        return null;
      }
    })();
    checkers.set(base, c);
  }
  return c;
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
    .map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`)
    .join('; ');
}

/**
 * Check one answer; throws when a JSON body does not match the schema its operation documents for its status.
 * `base` is the gateway's origin (the document is read from it once).
 */
export async function checkAnswer(base: string, method: string, path: string, status: number, body: unknown, isJson: boolean): Promise<void> {
  if (!RESPONSE_CHECK || !isJson || !path.startsWith('/v0/')) return;
  const checker = await checkerFor(base);
  if (!checker) return;
  const template = templateOf(checker, path);
  if (!template) return;
  const m = method.toLowerCase();
  const key = `${m} ${template} ${status}`;
  let validate = checker.compiled.get(key);
  if (validate === undefined) {
    const schema = checker.doc.paths[template]?.[m]?.responses?.[String(status)]?.content?.['application/json']?.schema;
    validate = schema
      ? checker.ajv.compile({ $ref: `doc#/${pointer(['paths', template, m, 'responses', String(status), 'content', 'application/json', 'schema'])}` })
      : null;
    checker.compiled.set(key, validate);
  }
  if (validate && !validate(body)) {
    throw new Error(
      `the answer to ${method} ${path} (${status}) does not match the OpenAPI document (${template}): ${describeErrors(validate.errors)} — body ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
}
