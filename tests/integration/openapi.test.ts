/**
 * GET /v0/openapi.json (services/api/openapi/): a valid OpenAPI 3.1 document (checked by a maintained validator), in
 * step with the app — every /v0 route Express serves is in it and everything in it is served — with request bodies
 * that are the very schemas the routes validate with, and answers that match the schemas it gives.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../services/api/openapi/document.js';
import { ROUTE_OPERATIONS } from '../../services/api/openapi/index.js';
import { expressPath, type Operation } from '../../services/api/openapi/operations.js';
import { callOperations } from '../../services/api/routes/calls/routes.js';
import { manifestSchema } from '../../shared/core/manifest/index.js';
import { createAjv } from '../../shared/core/schema/ajv.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { send, signUp } from '../support/hosted.js';
import type { Schema } from '../support/http.js';

type Doc = {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

interface RouteLayer {
  path: string | RegExp;
  methods: string[];
  match(path: string): boolean;
}

/** Every route layer of an Express 5 app, nested routers included (app.router.stack; router v2 layers). */
function routeLayers(app: Express): RouteLayer[] {
  const out: RouteLayer[] = [];
  const walk = (
    stack: Array<{ route?: { path: string | RegExp; methods: Record<string, boolean> }; handle?: { stack?: unknown[] }; match(p: string): boolean }>,
  ) => {
    for (const layer of stack) {
      if (layer.route)
        out.push({ path: layer.route.path, methods: Object.keys(layer.route.methods).filter((m) => m !== '_all'), match: (p) => layer.match(p) });
      else if (Array.isArray(layer.handle?.stack)) walk(layer.handle.stack as never);
    }
  };
  walk((app as unknown as { router: { stack: never } }).router.stack);
  return out;
}

const isV0 = (l: RouteLayer) => (typeof l.path === 'string' ? l.path.startsWith('/v0/') : l.path.source.startsWith('^\\/v0\\/'));

/** The template with each parameter's example in it: the URL the enumeration asks the router about. */
const sampleUrl = (op: Operation) => op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => op.params![n]!.example);

describe('GET /v0/openapi.json', () => {
  test('the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator), in a dev and a hosted build', async () => {
    for (const hosted of [true, false]) {
      const validator = new Validator();
      const result = await validator.validate(buildOpenApiDocument(ROUTE_OPERATIONS, { hosted, serverUrl: 'https://gateway.example.com' }) as never);
      expect(result.errors ?? [], `hosted=${hosted}`).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    }
    // The validator is not a rubber stamp: a broken document fails.
    const broken = buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: true }) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    broken.paths['/v0/calls']!.post!.responses = { 200: { content: {} } }; // a response without its description
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  test('request bodies are the schemas the routes validate with; the error shape, the key schemes and examples are there', () => {
    const doc = buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: true }) as unknown as Doc & Record<string, any>;
    const call = doc.paths['/v0/calls']!.post!;
    // The same object the route compiles (bodyReader(CALL_BODY)): its wording keywords travel with it.
    expect(call.requestBody!.content['application/json']!.schema).toEqual(callOperations.submit.body!.schema);
    expect(call.requestBody!.content['application/json']).toMatchObject({ example: { agent: 'holon-labs/csv-profile' } });
    expect(doc.paths['/v0/agents']!.post!.requestBody!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Manifest' });
    expect(doc.components.schemas.Manifest).toEqual(manifestSchema);
    expect(doc.components.schemas.Error).toMatchObject({ required: ['error'], properties: { error: { required: ['code', 'message'] } } });
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminKey', 'agentKey', 'humanKey']);
    expect(doc.paths['/v0/keys']!.post).toMatchObject({ security: [{ humanKey: [] }], 'x-holon-hosted-only': true });
    expect(doc.paths['/v0/catalog']!.get).toMatchObject({ security: [] });
    expect(doc.paths['/v0/calls']!.post).toMatchObject({
      responses: { 400: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    });
    // A dev gateway does not list what it does not serve.
    const dev = buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: false }) as unknown as Doc;
    expect(dev.paths['/v0/keys']).toBeUndefined();
    expect(dev.paths['/v0/calls']).toBeDefined();
  });

  test('every /v0 route the hosted app serves is in the document, and every documented route is served', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const served = await send(g.url, 'GET', '/v0/openapi.json');
      expect(served.status).toBe(200);
      expect(served.body).toEqual(buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: true, serverUrl: g.url }));
      const app = g.gw.app!;
      const layers = routeLayers(app).filter(isV0);
      expect(layers.length).toBeGreaterThan(30);
      const claimed = new Set<RouteLayer>();
      const problems: string[] = [];
      for (const op of ROUTE_OPERATIONS.filter((o) => o.path.startsWith('/v0/'))) {
        const url = sampleUrl(op);
        const matching = layers.filter((l) => l.methods.includes(op.method) && l.match(url));
        if (matching.length === 0) problems.push(`documented but not served: ${op.method.toUpperCase()} ${op.path}`);
        for (const l of matching) {
          claimed.add(l);
          if (typeof l.path === 'string' && l.path !== expressPath(op.path)) problems.push(`${op.method.toUpperCase()} ${op.path} is served as ${l.path}`);
        }
      }
      for (const l of layers) {
        if (!claimed.has(l)) problems.push(`served but not documented: ${l.methods.map((m) => m.toUpperCase()).join(',')} ${String(l.path)}`);
      }
      expect(problems).toEqual([]);
    });
  });

  test('a mandate is read at /v0/mandates/{ns}/{name} (two parameters OpenAPI tools can route), and as one encoded segment', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      const doc = (await g.get('/v0/openapi.json')).body as Doc & {
        paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
      };
      expect(doc.paths['/v0/mandates/{ns}/{name}']!.get!.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['path:ns', 'path:name']);
      expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v0/mandates/'))).toEqual(['/v0/mandates/{ns}/{name}']);
      // The dev gateway's one server is where it listens; it reads no key, so it declares none.
      expect((doc as unknown as { servers: unknown }).servers).toEqual([{ url: g.url, description: 'This gateway' }]);
      expect(doc.components.securitySchemes).toBeUndefined();
      const made = await g.mandate({ id: 'alice/two-parts' });
      const plain = await g.get<Schema<'MandateView'>>('/v0/mandates/alice/two-parts');
      expect(plain.status).toBe(200);
      expect(plain.body).toEqual(made);
      const encoded = await g.get<Schema<'MandateView'>>('/v0/mandates/alice%2Ftwo-parts');
      expect(encoded.status).toBe(200);
      expect(encoded.body).toEqual(made);
      for (const missing of ['/v0/mandates/alice/nothing', '/v0/mandates/alice', '/v0/mandates/alice/two-parts/more']) {
        expect((await g.get(missing)).status, missing).toBe(404);
      }
    });
  });

  test('what the gateway answers matches the schemas the document gives', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const doc = (await send(g.url, 'GET', '/v0/openapi.json')).body as Doc;
      const ajv = createAjv();
      ajv.addSchema(doc as object, 'doc');
      const check = (path: string, method: string, status: number, body: unknown) => {
        const pointer = ['paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema']
          .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'))
          .join('/');
        const validate = ajv.compile({ $ref: `doc#/${pointer}` });
        expect(validate(body) ? [] : validate.errors, `${method} ${path} ${status}`).toEqual([]);
      };
      const signup = await send(g.url, 'POST', '/v0/signup', { body: { handle: 'ada', email: 'ada@example.test' } });
      check('/v0/signup', 'post', 201, signup.body);
      const alice = await signUp(g.url, 'alice');
      const bad = await send(g.url, 'POST', '/v0/keys', { key: alice.human, body: { mandate: 7, ask_in_client: 'yes', extra: 1 } });
      expect(bad.status).toBe(400);
      check('/v0/keys', 'post', 400, bad.body);
      expect(bad.body.error.problems).toEqual(
        expect.arrayContaining([
          { path: '$.mandate', message: 'must be a non-empty string' },
          { path: '$.ask_in_client', message: 'must be true or false' },
          { path: '$.extra', message: 'is not a known field' },
        ]),
      );
      const key = await send(g.url, 'POST', '/v0/keys', { key: alice.human, body: { mandate: 'alice/sandbox' } });
      check('/v0/keys', 'post', 201, key.body);
      for (const [path, template] of [
        ['/v0/me', '/v0/me'],
        ['/v0/catalog', '/v0/catalog'],
        ['/v0/mandates', '/v0/mandates'],
        ['/v0/mandates/alice/sandbox', '/v0/mandates/{ns}/{name}'],
        ['/v0/accounts', '/v0/accounts'],
        ['/v0/receipts', '/v0/receipts'],
        ['/v0/receipts?since=2026-01-01T00:00:00Z&status=succeeded', '/v0/receipts'],
        ['/v0/statement', '/v0/statement'],
        ['/v0/statement?since=2026-01-01T00:00:00Z&until=2999-01-01T00:00:00Z', '/v0/statement'],
        ['/v0/approvals', '/v0/approvals'],
      ] as const) {
        const r = await send(g.url, 'GET', path, { key: alice.human });
        expect(r.status, path).toBe(200);
        check(template, 'get', 200, r.body);
      }
      const missing = await send(g.url, 'GET', '/v0/receipts/nope', { key: alice.human });
      check('/v0/receipts/{id}', 'get', 404, missing.body);
      for (const path of ['/v0/receipts', '/v0/receipts.csv', '/v0/statement'] as const) {
        const bad = await send(g.url, 'GET', `${path}?since=yesterday`, { key: alice.human });
        expect(bad.status, path).toBe(400);
        check(path, 'get', 400, bad.body);
      }
      const call = await send(g.url, 'POST', '/v0/calls', { key: alice.sandboxAgent, body: { agent: 'holon-labs/nothing', input: {} } });
      expect(call.status).toBe(404);
      check('/v0/calls', 'post', 404, call.body);
    });
  });
});
