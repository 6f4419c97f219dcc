/**
 * Drafting a listing (gateway.md §7): POST /v0/agents/draft calls a webhook endpoint once through the guarded client
 * and answers a draft manifest that validates, stores nothing, and names why an endpoint cannot be drafted. A hosted
 * gateway with allowPrivateEndpoints (the endpoints are node:http servers on 127.0.0.1), and one without it, which
 * refuses them; real Postgres and Redis.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parse } from 'yaml';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, signUp, type Account } from '../support/hosted.js';

const SECRET = 'file-secret-for-the-drafts-test-0123456789abcdef';
const ANSWER = {
  summary: 'Short text',
  words: 2,
  scores: [
    { label: 'pos', p: 0.9 },
    { label: 'neg', p: 0.1, note: 'low' },
  ],
};

let server: http.Server;
let base: string;
/** What the endpoint received: path, body, authorization header. */
const received: Array<{ path: string; body: string; authorization: string | undefined; agent: string | undefined }> = [];
const hanging: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', body, authorization: req.headers.authorization, agent: req.headers['x-holon-agent'] as string | undefined });
      const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      switch (req.url) {
        case '/ok':
          return json(200, ANSWER);
        case '/fail':
          return json(500, { error: { code: 'boom', message: 'broken' } });
        case '/redirect':
          return res.writeHead(302, { location: '/ok' }).end();
        case '/html':
          return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>');
        case '/big': {
          // No content-length: chunked, so the limit is found while reading.
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = `"${'x'.repeat(1024 * 1024 - 3)}",`;
          res.write('[');
          for (let i = 0; i < 11; i++) res.write(chunk);
          return res.end('"end"]');
        }
        case '/hang':
          hanging.push(res);
          return;
        default:
          return json(404, {});
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const publishedCount = async (g: TestGateway) => Number((await g.db.knex('published_versions').count<Array<{ n: string }>>('* as n'))[0]!.n);
const draft = (g: TestGateway, a: Account, body: unknown) => send(g.url, 'POST', '/v0/agents/draft', { key: a.human, body });

test('a draft describes the answer, validates, parses back from its YAML, and stores nothing', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true, fileSecret: SECRET } }), async (g) => {
    const bob = await signUp(g.url, 'bob');
    const before = await publishedCount(g);
    const input = { text: 'Short text here', lang: 'en', options: [{ k: 'a' }, { k: 'b', v: 1 }] };

    const priced = await draft(g, bob, { name: 'summarizer', endpoint: `${base}/ok`, input, summary: 'Summarizes text', price: '0.02' });
    expect(priced.status).toBe(200);
    const m = priced.body.manifest;
    expect(m).toMatchObject({
      id: 'bob/summarizer',
      summary: 'Summarizes text',
      license: 'proprietary',
      runtime: { kind: 'webhook', endpoint: `${base}/ok` },
      pricing: { model: 'per_run', currency: 'EUR', amount: '0.02' },
    });
    expect(m.interface.examples).toEqual([{ input, output: ANSWER }]);
    expect(m.interface.input).toEqual({
      type: 'object',
      properties: {
        lang: { type: 'string' },
        options: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' }, v: { type: 'integer' } }, required: ['k'] } },
        text: { type: 'string' },
      },
      required: ['lang', 'options', 'text'],
    });
    expect(m.interface.output).toEqual({
      type: 'object',
      properties: {
        scores: {
          type: 'array',
          items: { type: 'object', properties: { label: { type: 'string' }, note: { type: 'string' }, p: { type: 'number' } }, required: ['label', 'p'] },
        },
        summary: { type: 'string' },
        words: { type: 'integer' },
      },
      required: ['scores', 'summary', 'words'],
    });
    expect(validateManifest(m)).toMatchObject({ ok: true });
    expect(parse(priced.body.yaml)).toEqual(m);
    // The endpoint got the example input once, as a webhook call (no credential set).
    expect(received.at(-1)).toMatchObject({ path: '/ok', body: JSON.stringify(input), authorization: undefined, agent: 'bob/summarizer@0.1.0' });

    // No price: free. A credential set for bob/<name> is sent.
    const cred = await send(g.url, 'PUT', '/v0/agents/bob/free-one/credential', { key: bob.human, body: { token: 'tok-for-drafts' } });
    expect(cred.status).toBe(200);
    const free = await draft(g, bob, { name: 'free-one', endpoint: `${base}/ok`, input: 'just a string' });
    expect(free.status).toBe(200);
    expect(free.body.manifest.pricing).toEqual({ model: 'free' });
    expect(free.body.manifest.interface.input).toEqual({ type: 'string' });
    expect(validateManifest(free.body.manifest)).toMatchObject({ ok: true });
    expect(parse(free.body.yaml)).toEqual(free.body.manifest);
    expect(received.at(-1)).toMatchObject({ path: '/ok', authorization: 'Bearer tok-for-drafts' });

    expect(await publishedCount(g)).toBe(before);
    // Not published: the agent is unknown.
    expect((await send(g.url, 'GET', '/v0/agents/bob/summarizer', { key: bob.human })).status).toBe(404);
  });
});

test('bad bodies are 400 with every problem; keys are checked first', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
    const bob = await signUp(g.url, 'bob');
    const bad = await draft(g, bob, { name: 'Bad_Name', endpoint: 'ftp://x', summary: '', price: '-1', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.error.problems.map((p: { path: string }) => p.path).sort()).toEqual(['$.endpoint', '$.extra', '$.input', '$.name', '$.price', '$.summary']);
    const none = await send(g.url, 'POST', '/v0/agents/draft', { body: { name: 'x' } });
    expect(none.status).toBe(401);
    const agentKey = await send(g.url, 'POST', '/v0/agents/draft', { key: bob.sandboxAgent, body: { name: 'xy' } });
    expect(agentKey.status).toBe(403);
  });
});

test('an endpoint that fails, redirects, answers HTML, too much or nothing gets a 422 naming why', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
    const bob = await signUp(g.url, 'bob');
    const before = await publishedCount(g);
    const attempt = (path: string) => draft(g, bob, { name: 'hook', endpoint: `${base}${path}`, input: { a: 1 } });

    const failed = await attempt('/fail');
    expect(failed.status).toBe(422);
    expect(failed.body.error).toMatchObject({ code: 'endpoint_failed', message: expect.stringContaining('500') });

    const redirect = await attempt('/redirect');
    expect(redirect.status).toBe(422);
    expect(redirect.body.error).toMatchObject({ code: 'endpoint_refused', message: expect.stringMatching(/redirect refused.*302/) });

    const html = await attempt('/html');
    expect(html.status).toBe(422);
    expect(html.body.error).toMatchObject({ code: 'endpoint_not_json', message: expect.stringContaining('text/html') });

    const big = await attempt('/big');
    expect(big.status).toBe(422);
    expect(big.body.error).toMatchObject({ code: 'endpoint_too_large', message: expect.stringContaining('10 MB') });

    // Nothing listens on port 9 of 127.0.0.1 (discard): the connection is refused.
    const closed = await draft(g, bob, { name: 'hook', endpoint: 'http://127.0.0.1:9/x', input: {} });
    expect(closed.status).toBe(422);
    expect(closed.body.error).toMatchObject({ code: 'endpoint_unreachable', message: expect.stringContaining('ECONNREFUSED') });

    const hang = await attempt('/hang');
    expect(hang.status).toBe(422);
    expect(hang.body.error).toMatchObject({ code: 'endpoint_unreachable', message: expect.stringContaining('did not answer within 10 s') });

    expect(await publishedCount(g)).toBe(before);
  });
}, 30_000);

test('without allowPrivateEndpoints the loopback endpoint is refused, over http and over https', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: false } }), async (g) => {
    const bob = await signUp(g.url, 'bob');
    const count = received.length;
    const http = await draft(g, bob, { name: 'hook', endpoint: `${base}/ok`, input: {} });
    expect(http.status).toBe(422);
    expect(http.body.error).toMatchObject({ code: 'endpoint_refused', message: expect.stringContaining('https://') });
    const port = (server.address() as AddressInfo).port;
    const https = await draft(g, bob, { name: 'hook', endpoint: `https://127.0.0.1:${port}/ok`, input: {} });
    expect(https.status).toBe(422);
    expect(https.body.error).toMatchObject({ code: 'endpoint_refused', message: expect.stringContaining('127.0.0.1 is a loopback address') });
    expect(received.length).toBe(count);
  });
});

test('dev mode has no draft route', async () => {
  await useAudited(await startTestGateway(), async (g) => {
    const r = await send(g.url, 'POST', '/v0/agents/draft', { body: { name: 'hook', endpoint: `${base}/ok`, input: {} } });
    expect(r.status).toBe(404);
  });
});
