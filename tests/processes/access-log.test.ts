/**
 * Access logs (services/api/access-log.ts): an API process's stdout holds one JSON line per request with its request
 * id (the caller's valid X-Request-Id, else a generated one, echoed either way), the method, the path without its
 * query string, the route template, the status, the duration and the call id of a call created or read. Never a
 * body, a header with a key, or a query string.
 */
import { describe, expect, test } from 'vitest';
import { startTestCluster } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import type { ServiceProcess } from '../support/processes.js';

interface AccessLine {
  msg: string;
  request_id: string;
  method: string;
  path: string;
  route?: string;
  status: number;
  duration_ms: number;
  call_id?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function accessLines(api: ServiceProcess): AccessLine[] {
  const stdout = api.output().split('[stdout]\n')[1] ?? '';
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as AccessLine)
    .filter((l) => l.msg === 'request');
}

describe('access logs', () => {
  test('one JSON line per request: request id, method, path without query, route, status, duration, call id; no body, key or query', async () => {
    const { cluster, stop } = await startTestCluster();
    const secrets = {
      input: 'an-input-that-must-never-be-logged',
      key: 'hlk_a_a-key-that-must-never-be-logged',
      query: 'a-signature-in-the-query',
      signIn: 'an-mcp-sign-in-request-id-never-logged',
    };
    try {
      const api = await cluster.start('api', { env: { LOG_LEVEL: 'info' } });
      const send = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
        fetch(api.url + path, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.key}`, ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const mandate = await send(
        'POST',
        '/v0/mandates',
        {},
        {
          id: 'alice/logged',
          issuer: 'alice',
          grantee: 'alice/assistant',
          allow: { agents: ['examples/*'], capabilities: ['text.*'] },
          budget: { total: '5.00', currency: 'EUR' },
        },
      );
      expect(mandate.status).toBe(201);
      // Nothing runs it (no runner): accepted, queued.
      const submitted = await send(
        'POST',
        '/v0/calls',
        { prefer: 'respond-async', 'x-request-id': 'client-req.42:a_b' },
        { mandate: 'alice/logged', agent: 'examples/echo-upper', input: { text: secrets.input } },
      );
      expect(submitted.status).toBe(202);
      expect(submitted.headers.get('x-request-id')).toBe('client-req.42:a_b');
      const callId = ((await submitted.json()) as { call: { id: string } }).call.id;
      const read = await send('GET', `/v0/calls/${callId}?wait=0&sig=${secrets.query}`, { 'x-request-id': 'not a valid id' });
      expect(read.status).toBe(200);
      const generated = read.headers.get('x-request-id')!;
      expect(generated).toMatch(UUID);
      expect((await send('GET', '/v0/no-such-route', { 'x-request-id': 'x'.repeat(65) })).headers.get('x-request-id')).toMatch(UUID);
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      // An MCP client's sign-in request id is the browser tab's secret (a dev gateway has no such route: 404 all the same).
      expect((await send('GET', `/v0/oauth/requests/${secrets.signIn}`)).status).toBe(404);

      let lines: AccessLine[] = [];
      await poll(
        () => {
          lines = accessLines(api);
          expect(lines).toHaveLength(5);
        },
        { what: 'the five access lines', assert: true, timeoutMs: 1_000, intervalMs: 50 },
      );
      const [m, post, get, missing, signIn] = lines;
      expect(signIn).toMatchObject({ method: 'GET', path: '/v0/oauth/requests/…', status: 404 });
      expect(m).toMatchObject({ method: 'POST', path: '/v0/mandates', route: '/v0/mandates', status: 201 });
      expect(m!.call_id).toBeUndefined();
      expect(post).toMatchObject({ request_id: 'client-req.42:a_b', method: 'POST', path: '/v0/calls', route: '/v0/calls', status: 202, call_id: callId });
      expect(get).toMatchObject({ request_id: generated, method: 'GET', path: `/v0/calls/${callId}`, route: '/v0/calls/:id', status: 200, call_id: callId });
      expect(missing).toMatchObject({ method: 'GET', path: '/v0/no-such-route', status: 404 });
      expect(missing!.route).toBeUndefined();
      for (const l of lines) {
        expect(typeof l.duration_ms).toBe('number');
        expect(l.duration_ms).toBeGreaterThanOrEqual(0);
        expect(l.request_id.length).toBeLessThanOrEqual(64);
      }
      // /healthz logs at debug: not at LOG_LEVEL=info. Nothing the caller sent in a body, a key or a query.
      const out = api.output();
      expect(out).not.toContain('/healthz');
      for (const [what, secret] of Object.entries(secrets)) expect(out.includes(secret), what).toBe(false);
      expect(out).not.toContain('alice/assistant');
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${cluster.describe()}`, { cause: e });
    } finally {
      await stop();
    }
  });
});
