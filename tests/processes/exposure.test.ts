/**
 * What a dev gateway exposes (gateway.md §7): it listens on loopback unless told otherwise, says so plainly when it
 * cannot listen, and answers browsers only from its own origins (origins.ts): /mcp and /v0 writes check Origin, and
 * in dev mode every request must name a loopback Host (DNS rebinding).
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { REPO_ROOT } from '../support/processes.js';

const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

async function request(g: TestGateway, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(g.url + path, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

describe('binding', () => {
  test('dev mode listens on 127.0.0.1 by default; hosted mode and HOST / --host choose otherwise', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      expect(g.gw.server!.address()).toMatchObject({ address: '127.0.0.1' });
    });
    await useAudited(await startTestGateway({ config: { hosted: true } }), async (g) => {
      expect(g.gw.server!.address()).toMatchObject({ address: '0.0.0.0' });
    });
    await useAudited(await startTestGateway({ config: { host: '0.0.0.0' } }), async (g) => {
      expect(g.gw.server!.address()).toMatchObject({ address: '0.0.0.0' });
    });
  });

  test('a taken port: a clear message and a non-zero exit, nothing left running', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, HOLON_AGENT_HOST: '0', LOG_LEVEL: 'warn' };
      delete env.DATABASE_URL;
      delete env.REDIS_URL;
      const dir = await mkdtemp(path.join(tmpdir(), 'holon-port-'));
      const child = spawn(process.execPath, ['bin/holon.mjs', 'serve', '--port', String(port), '--db', path.join(dir, 'db')], { cwd: REPO_ROOT, env });
      let err = '';
      child.stderr.on('data', (c) => (err += c));
      child.stdout.resume();
      const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      clearTimeout(timer);
      expect(code).toBe(1);
      expect(err).toContain(`127.0.0.1:${port} is already in use`);
    } finally {
      blocker.close();
    }
  });
});

describe('origins and hosts', () => {
  test('dev: /mcp and /v0 writes refuse foreign origins; pages on loopback and clients without Origin pass', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const call = { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } };
      for (const origin of ['https://evil.example.com', 'null', 'http://localhost.evil.example.com']) {
        const mcp = await request(g, 'POST', '/mcp', { origin }, MCP_INIT);
        expect(mcp.status, origin).toBe(403);
        expect(JSON.parse(mcp.text)).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'origin_not_allowed' } } });
        const write = await request(g, 'POST', '/v0/calls', { origin }, call);
        expect(write.status, origin).toBe(403);
        expect(JSON.parse(write.text).error.code).toBe('origin_not_allowed');
      }
      expect(await g.db.knex('calls')).toEqual([]);
      // Reads carry no effect: an Origin does not matter there (the Host check below still applies).
      expect((await request(g, 'GET', '/v0/mandates/alice/test', { origin: 'https://evil.example.com' })).status).toBe(200);
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080']) {
        expect((await request(g, 'POST', '/mcp', { origin, 'x-holon-mandate': 'alice/test' }, MCP_INIT)).status, origin).toBe(200);
      }
      expect((await request(g, 'POST', '/v0/calls', {}, call)).status).toBe(200);
    });
  });

  test('dev: a request naming a foreign Host (DNS rebinding) reaches nothing, reads included', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const port = new URL(g.url).port;
      const asHost = (host: string, path: string) =>
        new Promise<number>((resolve, reject) => {
          const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
          let data = '';
          socket.on('data', (c) => (data += c));
          socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1])));
          socket.on('error', reject);
        });
      expect(await asHost('evil.example.com', '/v0/mandates/alice/test')).toBe(403);
      expect(await asHost(`evil.example.com:${port}`, '/mcp')).toBe(403);
      expect(await asHost(`localhost:${port}`, '/v0/mandates/alice/test')).toBe(200);
      expect(await asHost(`127.0.0.1:${port}`, '/healthz')).toBe(200);
    });
  });

  test('hosted: the site and the public URL are the allowed origins; the Host is the proxy’s business', async () => {
    await useAudited(
      await startTestGateway({ config: { hosted: true, siteUrl: 'https://holon.example', publicUrl: 'https://api.holon.example' } }),
      async (g) => {
        expect((await request(g, 'POST', '/v0/signup', { origin: 'http://localhost:5173' }, { handle: 'zed', email: 'z@example.test' })).status).toBe(403);
        expect((await request(g, 'POST', '/v0/signup', { origin: 'https://holon.example' }, { handle: 'zed', email: 'z@example.test' })).status).toBe(201);
        expect((await request(g, 'POST', '/mcp', { origin: 'https://evil.example.com' }, MCP_INIT)).status).toBe(403);
      },
    );
  });
});
