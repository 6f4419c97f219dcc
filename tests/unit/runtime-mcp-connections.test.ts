/**
 * The MCP runtime (shared/runtimes/mcp/, gateway.md §6 "MCP agents") over time, against real MCP servers on 127.0.0.1
 * (tests/support/mcp-test-servers.ts), raw HTTP servers for the broken ones and a server in a child process for the
 * one that gets killed: the hard timeout and cancellation (the agent sees both), unreachable, killed, restarted and
 * garbage-answering servers, and the session pool (one session per endpoint and headers, idle sessions ended,
 * close()). What goes in and comes out of a call: runtime-mcp-results.test.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntimes } from '../../shared/runtimes/index.js';
import { cancelReason } from '../../shared/runtimes/abort.js';
import { perTestCleanups } from '../support/cleanups.js';
import { agent, context, echo, mcpHarness, messageOf, scripted, structured, type Tool } from '../support/mcp-test-servers.js';
import { poll } from '../support/poll.js';
import { freePort } from '../support/processes.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp');

const { defer } = perTestCleanups();
const { startMcpServer, startRawServer, runtime } = mcpHarness(defer);

/** Waits of these tests: up to 5 s, every 10 ms. */
const SOON = { timeoutMs: 5_000, intervalMs: 10 };

describe('mcp runtime: timeouts and cancellation', () => {
  const hang: Tool = (_args, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true }));

  it('ends a hanging call at the hard timeout, and the agent sees the cancellation', async () => {
    const s = await startMcpServer({ hang });
    const rt = runtime();
    const r = await rt.run(agent(s.url, 'hang'), {}, context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }));
    expect(r).toEqual({ kind: 'failure', code: 'timeout', message: 'the agent did not answer within its hard timeout (300 ms)' });
    await poll(() => s.aborted.length === 1, { what: 'the server to see the cancellation', ...SOON });
    expect(s.calls).toHaveLength(1);
    expect(s.cancellations).toHaveLength(1);
    // The pooled session is still good for the next call.
    const next = await startMcpServer({ run: echo });
    expect(await rt.run(agent(next.url), { after: true }, context())).toMatchObject({ kind: 'output' });
  });

  it('ends a call cancelled with cancelReason() as cancelled, and the agent sees it', async () => {
    const s = await startMcpServer({ hang, run: echo });
    const rt = runtime();
    const controller = new AbortController();
    const running = rt.run(agent(s.url, 'hang'), {}, context({ signal: controller.signal }));
    await poll(() => s.calls.length === 1, { what: 'the tool call to reach the server', ...SOON });
    controller.abort(cancelReason());
    expect(await running).toEqual({ kind: 'failure', code: 'cancelled', message: 'the call was cancelled' });
    await poll(() => s.aborted.length === 1, { what: 'the server to see the cancellation', ...SOON });
    expect(String(s.aborted[0])).toMatch(/cancel/i);
    expect(await rt.run(agent(s.url), { again: 1 }, context())).toEqual({ kind: 'output', output: { echo: { again: 1 } } });
    expect(s.initializes).toBe(1);
  });

  it('sends no cancellation for a call that ended before its signal fired', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    for (const reuseConnections of [true, false]) {
      const r = await runtime({ reuseConnections }).run(agent(s.url), {}, context({ signal: AbortSignal.timeout(100), timeoutMs: 100 }));
      expect(r).toMatchObject({ kind: 'output' });
    }
    expect(await rt.run(agent(s.url), {}, context({ signal: AbortSignal.timeout(100), timeoutMs: 100 }))).toMatchObject({ kind: 'output' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // every signal has fired by now
    expect(await rt.run(agent(s.url), {}, context())).toMatchObject({ kind: 'output' }); // the pooled session is still there
    expect(s.cancellations).toEqual([]);
  });

  it('does not call the agent when the signal has already fired', async () => {
    const s = await startMcpServer({ run: echo });
    const controller = new AbortController();
    controller.abort(cancelReason());
    expect(await runtime().run(agent(s.url), {}, context({ signal: controller.signal }))).toMatchObject({ code: 'cancelled' });
    expect(s.initializes).toBe(0);
  });
});

describe('mcp runtime: unreachable, killed and broken servers', () => {
  it('is runtime_unavailable when nothing listens on the port', async () => {
    const port = await freePort();
    const r = await runtime().run(agent(`http://127.0.0.1:${port}/mcp`), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(messageOf(r)).toMatch(/ECONNREFUSED/);
  });

  it('fails a call at once, as agent_error, when the server process is killed while the tool runs', async () => {
    const child: ChildProcess = fork(path.join(fixtures, 'hanging-server.mjs'), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    defer(async () => void child.kill('SIGKILL'));
    const messages: Array<{ type: string; port?: number; tool?: string }> = [];
    child.on('message', (m) => messages.push(m as { type: string }));
    await poll(() => messages.some((m) => m.type === 'listening'), { what: 'the child server to listen', ...SOON, timeoutMs: 15_000 });
    const port = messages.find((m) => m.type === 'listening')!.port!;
    const url = `http://127.0.0.1:${port}/mcp`;
    const rt = runtime();
    expect(await rt.run(agent(url, 'echo'), { warm: 1 }, context())).toMatchObject({ kind: 'output' });

    const signal = AbortSignal.timeout(30_000);
    const running = rt.run(agent(url, 'hang'), {}, context({ signal, timeoutMs: 30_000 }));
    await poll(() => messages.some((m) => m.type === 'called' && m.tool === 'hang'), { what: 'the tool call to reach the child', ...SOON });
    child.kill('SIGKILL');
    const r = await running;
    expect(signal.aborted).toBe(false); // it returned before the hard timeout fired
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(/connection/);

    // The broken session left the pool: the next call tries to connect again, and nothing listens any more.
    expect(await rt.run(agent(url, 'echo'), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it('reconnects after the server restarts on the same port', async () => {
    const first = await startMcpServer({ run: echo });
    const rt = runtime();
    expect(await rt.run(agent(first.url), { n: 1 }, context())).toEqual({ kind: 'output', output: { echo: { n: 1 } } });
    await first.close();
    // A restart takes a moment, long enough for the client to see its idle keep-alive sockets closed. (A call sent on
    // a socket in the very instant the server closes it fails once with agent_error: a tool call that may have
    // reached the old server is never sent twice.)
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await startMcpServer({ run: echo }, { port: first.port });
    expect(await rt.run(agent(second.url), { n: 2 }, context())).toEqual({ kind: 'output', output: { echo: { n: 2 } } });
    expect(second.unknownSessions).toBe(1); // the pooled session was refused (404), without running the tool
    expect(second.initializes).toBe(1);
    expect(second.calls).toHaveLength(1);
    expect(await rt.run(agent(second.url), { n: 3 }, context())).toMatchObject({ kind: 'output' });
    expect(second.initializes).toBe(1);
  });

  for (const json of [false, true]) {
    it(`is agent_error for an answer over maxResponseBytes, and the session stays usable (${json ? 'JSON' : 'SSE'})`, async () => {
      const s = await startMcpServer({ big: () => structured({ blob: 'x'.repeat(5_000) }), run: echo }, { json });
      const rt = runtime({ maxResponseBytes: 2_000 });
      const r = await rt.run(agent(s.url, 'big'), {}, context());
      expect(r).toEqual({ kind: 'failure', code: 'agent_error', message: 'answer larger than 2000 bytes' });
      expect(await rt.run(agent(s.url), { small: true }, context())).toEqual({ kind: 'output', output: { echo: { small: true } } });
    });
  }

  const garbage: Array<[string, (req: http.IncomingMessage, res: http.ServerResponse) => void]> = [
    ['plain text 200', (_q, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')],
    ['non-JSON labelled JSON', (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": nope')],
    ['an event stream of junk', (_q, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {junk\n\n')],
    ['500', (_q, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>')],
    ['404', (_q, res) => res.writeHead(404).end()],
    ['a redirect elsewhere', (_q, res) => res.writeHead(302, { location: 'http://example.org/' }).end()],
    ['a dropped connection', (q) => q.socket.destroy()],
  ];
  for (const [name, handler] of garbage) {
    it(`never throws on a server answering ${name}`, async () => {
      const url = await startRawServer(handler);
      const r = await runtime().run(agent(url), {}, context());
      expect(r.kind).toBe('failure');
      expect(['agent_error', 'runtime_unavailable']).toContain((r as { code: string }).code);
    });
  }

  it('gives up a handshake that never completes, and tries a new one on the next call', async () => {
    let initializes = 0;
    const url = await startRawServer((req, res, body) => {
      const message = JSON.parse(body) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
      // A 2025 server: the era probe is a method it does not know.
      if (message.method === 'server/discover') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no' } }));
      } else if (message.method === 'initialize') {
        initializes += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stuck', version: '1' } },
          }),
        );
      }
      // `notifications/initialized` is never answered.
      req.socket.setTimeout(0);
    });
    const rt = runtime({ connectTimeoutMs: 200 });
    for (let i = 1; i <= 2; i++) {
      const r = await rt.run(agent(url), {}, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/handshake/) });
      expect(initializes).toBe(i);
    }
  });

  it('is agent_error at once when the tool call answer is garbage, a 202, or a stream closed without the answer', async () => {
    const answers: Array<(res: http.ServerResponse, id: unknown) => void> = [
      (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('not json'),
      (res) => res.writeHead(202).end(),
      (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': nothing to say\n\n'),
      (res) => res.writeHead(503).end('busy'),
    ];
    for (const [i, answer] of answers.entries()) {
      const url = await startRawServer(scripted(answer));
      const signal = AbortSignal.timeout(30_000);
      const r = await runtime().run(agent(url), {}, context({ signal, timeoutMs: 30_000 }));
      expect(signal.aborted, `answer ${i}`).toBe(false);
      expect(r, `answer ${i}`).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
  });
});

describe('mcp runtime: connections', () => {
  it('opens one session for 20 concurrent then 20 sequential calls', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => rt.run(agent(s.url), { i }, context())));
    concurrent.forEach((r, i) => expect(r).toEqual({ kind: 'output', output: { echo: { i } } }));
    for (let i = 0; i < 20; i++) expect(await rt.run(agent(s.url), { i }, context())).toEqual({ kind: 'output', output: { echo: { i } } });
    expect(s.initializes).toBe(1);
    expect(s.calls).toHaveLength(40);
    expect(s.gets.standalone).toBe(0); // no standalone GET stream is opened
    await rt.close();
    expect(s.deletes).toBe(1); // close() ends the session
    expect(await rt.run(agent(s.url), {}, context())).toMatchObject({ code: 'runtime_unavailable', message: 'the MCP runtime is closed' });
  });

  it('keeps one session per endpoint and extra headers', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ headers: (a) => ({ authorization: `Bearer ${a.manifest.version}` }) });
    const v1 = agent(s.url);
    const v2 = { ...v1, manifest: { ...v1.manifest, version: '2.0.0' } };
    for (let i = 0; i < 3; i++) {
      await rt.run(v1, {}, context());
      await rt.run(v2, {}, context());
    }
    expect(s.initializes).toBe(2);
    expect(s.calls.map((c) => c.authorization)).toEqual(['Bearer 1.4.0', 'Bearer 2.0.0', 'Bearer 1.4.0', 'Bearer 2.0.0', 'Bearer 1.4.0', 'Bearer 2.0.0']);
  });

  it('opens and ends one session per call with reuseConnections: false', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ reuseConnections: false });
    for (let i = 0; i < 5; i++) expect(await rt.run(agent(s.url), { i }, context())).toMatchObject({ kind: 'output' });
    await Promise.all(Array.from({ length: 5 }, (_, i) => rt.run(agent(s.url), { i }, context())));
    expect(s.initializes).toBe(10);
    await rt.close();
    expect(s.deletes).toBe(10);
  });

  it('ends a session left idle, and opens a new one for the next call', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ idleTimeoutMs: 50 });
    await rt.run(agent(s.url), {}, context());
    await poll(() => s.deletes === 1, { what: 'the idle session to be ended', ...SOON });
    expect(await rt.run(agent(s.url), { n: 2 }, context())).toMatchObject({ kind: 'output' });
    expect(s.initializes).toBe(2);
  });

  it('close() fails the calls still running and ends their session', async () => {
    const s = await startMcpServer({ hang: (_a, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }))) });
    const rt = runtime();
    const running = rt.run(agent(s.url, 'hang'), {}, context());
    await poll(() => s.calls.length === 1, { what: 'the tool call to reach the server', ...SOON });
    await rt.close();
    expect(await running).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(s.deletes).toBe(1);
  });

  it('createRuntimes dispatches MCP agents and forwards close()', async () => {
    const s = await startMcpServer({ run: echo });
    const runtimes = createRuntimes({ mcp: { maxResponseBytes: 100_000 } });
    expect(await runtimes.run(agent(s.url), { via: 'index' }, context())).toEqual({ kind: 'output', output: { echo: { via: 'index' } } });
    await runtimes.close();
    expect(s.deletes).toBe(1);
  });
});
