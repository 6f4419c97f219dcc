/**
 * The webhook contract (gateway.md §6) against real HTTP servers on 127.0.0.1.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { cancelReason } from '../../shared/runtimes/abort.js';
import { createRuntimes } from '../../shared/runtimes/index.js';
import type { AgentVersion, RunContext, RunResult } from '../../shared/runtimes/types.js';
import { createWebhookRuntime } from '../../shared/runtimes/webhook.js';
import { buildManifest } from '../support/manifest-builder.js';
import { TEST_TLS } from '../support/published-servers.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

interface TestServer {
  url: string;
  port: number;
  hits: number;
  requests: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }>;
  server: http.Server;
}

const servers: http.Server[] = [];
const timers: NodeJS.Timeout[] = [];

async function serve(handler: Handler): Promise<TestServer> {
  const t = { hits: 0, requests: [] } as unknown as TestServer;
  const server = http.createServer((req, res) => {
    t.hits += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      t.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(t, { server, port, url: `http://127.0.0.1:${port}/hook` });
  return t;
}

afterEach(async () => {
  for (const timer of timers.splice(0)) clearInterval(timer);
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

function agent(endpoint: string): AgentVersion {
  return {
    manifest: buildManifest({
      id: 'acme/n8n-flow',
      version: '1.2.0',
      runtime: { kind: 'webhook', endpoint, timeoutS: 60 },
    }),
    origin: 'published',
  };
}

function context(overrides: Partial<RunContext> = {}): RunContext {
  return { callId: 'r17', signal: AbortSignal.timeout(5_000), timeoutMs: 5_000, ...overrides };
}

function json(status: number, value: unknown): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
}

const runtime = createWebhookRuntime();

function messageOf(r: RunResult): string {
  return 'message' in r && typeof r.message === 'string' ? r.message : '';
}

describe('webhook runtime: the request', () => {
  it('POSTs the input as JSON with exactly the contract headers, and returns the JSON answer as output', async () => {
    const s = await serve(json(200, { rows: [1, 2] }));
    const input = { file: 'a.pdf', pages: [1, 2], note: 'ünïcode' };
    const r = await runtime.run(agent(s.url), input, context());
    expect(r).toEqual({ kind: 'output', output: { rows: [1, 2] } });
    expect(s.requests).toHaveLength(1);
    const [req] = s.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/hook');
    expect(JSON.parse(req!.body)).toEqual(input);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-holon-agent']).toBe('acme/n8n-flow@1.2.0');
    expect(req!.headers['x-holon-call']).toBe('r17');
    expect(req!.headers.authorization).toBeUndefined();
    const holonHeaders = Object.keys(req!.headers).filter((h) => h.startsWith('x-holon'));
    expect(holonHeaders.sort()).toEqual(['x-holon-agent', 'x-holon-call']);
  });

  it('adds the extra headers (Authorization) without letting them replace the contract headers', async () => {
    const s = await serve(json(200, { ok: true }));
    const rt = createWebhookRuntime({
      headers: (a) => ({ Authorization: `Bearer tok-${a.manifest.name}`, 'X-Holon-Call': 'forged', 'Content-Type': 'text/plain' }),
    });
    expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { ok: true } });
    const h = s.requests[0]!.headers;
    expect(h.authorization).toBe('Bearer tok-n8n-flow');
    expect(h['x-holon-call']).toBe('r17');
    expect(h['content-type']).toBe('application/json');
  });

  it('sends through the given dispatcher', async () => {
    const s = await serve(json(200, 'fine'));
    const dispatcher = new Agent();
    try {
      const rt = createWebhookRuntime({ dispatcher });
      expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: 'fine' });
    } finally {
      await dispatcher.close();
    }
  });
});

describe('webhook runtime: answers', () => {
  it.each([200, 422])('reads {"error": {"code", "message"}} with status %i as the agent error', async (status) => {
    const s = await serve(json(status, { error: { code: 'no_table_found', message: 'no table on page 1' } }));
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toEqual({ kind: 'error', code: 'no_table_found', message: 'no table on page 1' });
  });

  it('an error object without a string code on a 2xx is just output', async () => {
    const s = await serve(json(200, { error: 'not a contract error' }));
    expect(await runtime.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { error: 'not a contract error' } });
  });

  it('a 500 with plain text is agent_error naming the status', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Internal Server Error');
    });
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toContain('500');
  });

  it('a non-2xx JSON answer without an error object is agent_error', async () => {
    const s = await serve(json(503, { status: 'down' }));
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toContain('503');
  });

  it('a 200 HTML page is agent_error', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body>Workflow executed</body></html>');
    });
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(/not JSON/);
  });

  it('an empty 200 answer is agent_error', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect(await runtime.run(agent(s.url), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it('parses JSON whatever the content-type, NUL characters included', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('{"text":"a\\u0000b"}');
    });
    expect(await runtime.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { text: 'a\u0000b' } });
  });

  it('does not follow a redirect: agent_error, and the target is never hit', async () => {
    const target = await serve(json(200, { from: 'target' }));
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: target.url });
      res.end();
    });
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(/redirects are not followed/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.hits).toBe(1);
    expect(target.hits).toBe(0);
  });

  it('stops reading an 11 MB answer at the limit and closes the connection', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    let written = 0;
    const s = await serve((req, res) => {
      req.socket.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no content-length to refuse up front
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const total = 11 * 1024 * 1024;
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.write('[');
      pump();
    });
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toEqual({ kind: 'failure', code: 'agent_error', message: 'answer larger than 10 MB' });
    await expect(Promise.race([connectionClosed.then(() => 'closed'), new Promise((r2) => setTimeout(() => r2('open'), 2_000))])).resolves.toBe('closed');
  });

  it('refuses an answer whose content-length is over the limit without reading it', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2_000) });
      res.end(`"${'a'.repeat(1_998)}"`);
    });
    const rt = createWebhookRuntime({ maxResponseBytes: 1_000 });
    const r = await rt.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(/answer larger than 1000 bytes/);
  });

  it('accepts an answer of exactly the limit', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`"${'a'.repeat(998)}"`);
    });
    const rt = createWebhookRuntime({ maxResponseBytes: 1_000 });
    expect(await rt.run(agent(s.url), {}, context())).toMatchObject({ kind: 'output' });
  });
});

describe('webhook runtime: timeouts, cancellation, unreachable endpoints', () => {
  it('times out at the signal when the server never answers', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const started = Date.now();
    const r = await runtime.run(agent(s.url), {}, context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }));
    const elapsed = Date.now() - started;
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('times out when the server sends headers and then trickles forever', async () => {
    let closed = false;
    const s = await serve((req, res) => {
      req.socket.on('close', () => (closed = true));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      timers.push(setInterval(() => res.write(' '), 20));
    });
    const started = Date.now();
    const r = await runtime.run(agent(s.url), {}, context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }));
    const elapsed = Date.now() - started;
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(true);
  });

  it('is runtime_unavailable when the connection is refused', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = await runtime.run(agent(`http://127.0.0.1:${port}/hook`), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(messageOf(r)).toMatch(/ECONNREFUSED/);
  });

  it('is runtime_unavailable when the host does not resolve', async () => {
    const r = await runtime.run(agent('http://no-such-host.invalid/hook'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it('says which endpoint and how, without its credentials or query string: refused, not resolved, TLS', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(messageOf(await runtime.run(agent(`http://user:pw@127.0.0.1:${port}/hook?token=sekrit`), {}, context()))).toBe(
      `could not reach http://127.0.0.1:${port}/hook: connection refused (ECONNREFUSED)`,
    );
    expect(messageOf(await runtime.run(agent('http://no-such-host.invalid/hook?token=sekrit'), {}, context()))).toMatch(
      /^could not reach http:\/\/no-such-host\.invalid\/hook: the name did not resolve/,
    );
    const tls = https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, (_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const r = await runtime.run(agent(`https://127.0.0.1:${(tls.address() as AddressInfo).port}/hook?token=sekrit`), {}, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
      expect(messageOf(r)).toMatch(/^could not reach https:\/\/127\.0\.0\.1:\d+\/hook: TLS failed: the certificate is self-signed \(/);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });

  it('is agent_error when the server closes the connection without answering', async () => {
    const s = await serve((req) => req.socket.destroy());
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it('is runtime_unavailable without a usable endpoint', async () => {
    expect(await runtime.run(agent('ftp://example.org/x'), {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    const none: AgentVersion = { manifest: buildManifest({ runtime: { kind: 'webhook', timeoutS: 60 } }), origin: 'published' };
    expect(await runtime.run(none, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
  });

  it('ends cancelled when the signal is aborted with the cancel reason', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const s = await serve((req) => req.socket.on('close', () => closed()));
    const controller = new AbortController();
    setTimeout(() => controller.abort(cancelReason()), 100);
    const r = await runtime.run(agent(s.url), {}, context({ signal: controller.signal }));
    expect(r).toEqual({ kind: 'failure', code: 'cancelled', message: expect.any(String) });
    await connectionClosed; // the aborted request reaches the server as a closed connection
  });

  it('does not call the endpoint when the signal already fired', async () => {
    const s = await serve(json(200, {}));
    const controller = new AbortController();
    controller.abort(cancelReason());
    expect(await runtime.run(agent(s.url), {}, context({ signal: controller.signal }))).toMatchObject({ code: 'cancelled' });
    expect(s.hits).toBe(0);
  });
});

describe('createRuntimes', () => {
  it('dispatches webhook agents', async () => {
    const s = await serve(json(200, { via: 'index' }));
    const runtimes = createRuntimes();
    expect(await runtimes.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { via: 'index' } });
  });
});
