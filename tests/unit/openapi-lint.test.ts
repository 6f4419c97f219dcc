/**
 * The OpenAPI document as third-party tools read it (services/api/openapi/document.ts), for a dev and a hosted
 * gateway: Spectral's `oas` ruleset finds no error and no warning (the rules let through are listed below, each with
 * its reason), and every `example` / `examples` in it is valid against its own schema (ajv, JSON Schema 2020-12, the
 * document's `$ref`s resolved) — media types, parameters and the `examples` of schemas alike.
 */
import { Document, Spectral } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../services/api/openapi/document.js';
import { ROUTE_OPERATIONS } from '../../services/api/openapi/index.js';
import { createAjv } from '../../shared/core/schema/ajv.js';

/**
 * Rules turned off, each for its reason:
 * - `info-contact`: the document is built by whichever gateway serves it; a self-hosted gateway has no contact of
 *   ours to name, and none is configured.
 */
const ALLOWED = { 'info-contact': 'off' } as const;

const DOCUMENTS = [
  { name: 'dev', doc: () => buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: false, serverUrl: 'http://127.0.0.1:8080' }) },
  { name: 'hosted', doc: () => buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: true, serverUrl: 'https://gateway.holon.test' }) },
] as const;

/** Spectral's errors and warnings (severity 0 and 1), as `rule at path: message`. */
async function lint(doc: unknown): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as never, 'recommended']], rules: ALLOWED } as never);
  const results = await spectral.run(new Document(JSON.stringify(doc), Parsers.Json));
  return results.filter((r) => r.severity <= 1).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
}

const pointer = (parts: readonly (string | number)[]) => parts.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Where a value must match a schema: the example's own path and the pointer of the schema it must match. */
interface Example {
  at: string;
  value: unknown;
  schema: string;
}

/**
 * Every example of the document: a media type's or a parameter's `example` (and the values of its `examples` map)
 * against its `schema`, and each item of a schema's `examples` array against that schema.
 */
function examplesOf(doc: unknown): Example[] {
  const out: Example[] = [];
  const walk = (node: unknown, path: (string | number)[], inSchema: boolean): void => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, [...path, i], inSchema));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (inSchema) {
      if (Array.isArray(o.examples)) o.examples.forEach((value, i) => out.push({ at: pointer([...path, 'examples', i]), value, schema: pointer(path) }));
      // Values, not schemas (`const`, `default`, `enum`, `examples`), unless they are property names.
      const values = path.at(-1) === 'properties' ? [] : ['examples', 'const', 'default', 'enum', 'example'];
      for (const [k, v] of Object.entries(o)) if (!values.includes(k)) walk(v, [...path, k], true);
      return;
    }
    if ('schema' in o && o.schema && typeof o.schema === 'object') {
      const schema = pointer([...path, 'schema']);
      if ('example' in o) out.push({ at: pointer([...path, 'example']), value: o.example, schema });
      if (o.examples && typeof o.examples === 'object')
        for (const [k, e] of Object.entries(o.examples as Record<string, { value?: unknown }>))
          out.push({ at: pointer([...path, 'examples', k]), value: e.value, schema });
    }
    for (const [k, v] of Object.entries(o)) walk(v, [...path, k], k === 'schema' || (path.at(-1) === 'schemas' && path.at(-2) === 'components'));
  };
  walk(doc, [], false);
  return out;
}

/** The examples that do not match their schema, with ajv's words. */
function badExamples(doc: unknown): string[] {
  const ajv = createAjv({ allErrors: true });
  ajv.addSchema(doc as object, 'doc');
  return examplesOf(doc).flatMap((e) => {
    const validate = ajv.compile({ $ref: `doc#/${e.schema}` });
    return validate(e.value) ? [] : [`${e.at}: ${(validate.errors ?? []).map((x) => `${x.instancePath || '(root)'} ${x.message}`).join('; ')}`];
  });
}

describe('the OpenAPI document, linted', () => {
  for (const { name, doc } of DOCUMENTS) {
    it(`${name}: Spectral's oas ruleset finds no error or warning`, async () => {
      expect(await lint(doc())).toEqual([]);
    });

    it(`${name}: every example matches its own schema`, () => {
      const d = doc();
      expect(examplesOf(d).length).toBeGreaterThan(20);
      expect(badExamples(d)).toEqual([]);
    });
  }

  it('the dev document declares no key (the dev gateway reads none) and names its server', () => {
    const dev = DOCUMENTS[0].doc() as unknown as {
      servers: unknown;
      components: Record<string, unknown>;
      paths: Record<string, Record<string, { security: unknown }>>;
    };
    expect(dev.servers).toEqual([{ url: 'http://127.0.0.1:8080', description: 'This gateway' }]);
    expect(dev.components.securitySchemes).toBeUndefined();
    const securities = Object.values(dev.paths).flatMap((item) => Object.values(item).map((op) => op.security));
    expect(securities.length).toBeGreaterThan(20);
    expect(securities.filter((s) => !(Array.isArray(s) && s.length === 0))).toEqual([]);
  });

  it('the checks are not rubber stamps: a wrong example and a missing server are found', async () => {
    const broken = DOCUMENTS[1].doc() as unknown as { servers?: unknown; paths: Record<string, Record<string, any>> };
    broken.paths['/v0/calls']!.post.requestBody.content['application/json'].example = { agent: 7 };
    delete broken.servers;
    expect(badExamples(broken)).toEqual([expect.stringContaining('paths/~1v0~1calls/post/requestBody/content/application~1json/example: ')]);
    expect((await lint(broken)).some((r) => r.startsWith('oas3-api-servers'))).toBe(true);
  });
});
