/**
 * Webhook agents that stream and ask (shared/runtimes/webhook.ts, the contract; webhook-stream.ts) against a real
 * HTTP server on 127.0.0.1, with a hand-written RunStream that records what the run told its caller; then one such
 * agent behind a gateway (Postgres, BullMQ), streamed to its caller as Server-Sent Events and billed per unit.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelReason } from '../../shared/runtimes/abort.js';
import type { AgentVersion, RunContext, RunResult, RunStream } from '../../shared/runtimes/types.js';
import { createWebhookRuntime } from '../../shared/runtimes/webhook.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { buildManifest } from '../support/manifest-builder.js';
import { answeringWith, readEvents } from '../support/sse.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string, hit: number) => void | Promise<void>;

interface Fake {
  url: string;
  requests: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
  /** Requests whose connection closed before the answer ended. */
  cut: number;
}

const servers: http.Server[] = [];

async function serve(handler: Handler): Promise<Fake> {
  const fake: Fake = { url: '', requests: [], cut: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      fake.requests.push({ headers: req.headers, body });
      res.on('close', () => {
        if (!res.writableEnded) fake.cut += 1;
      });
      void handler(req, res, body, fake.requests.length);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return fake;
}

afterEach(async () => {
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An ndjson answer: each line written `gapMs` apart (the answer ends after the last, unless `open`). */
function ndjson(lines: Array<unknown | string>, opts: { gapMs?: number; open?: boolean } = {}): Handler {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
    for (const line of lines) {
      if (res.destroyed) return;
      res.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
      if (opts.gapMs) await sleep(opts.gapMs);
    }
    if (!opts.open) res.end();
  };
}

function json(value: unknown): (res: http.ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
}

type Event = { emit: [unknown, number | bigint | undefined] } | { progress: { message?: string; fraction?: number } } | { ask: unknown };

/** A RunStream that records every call; `emit` refuses from chunk `refuseAt` on (aborting the run, as the runner's does). */
function recorder(
  controller: AbortController,
  opts: { refuseAt?: number; keepSignal?: boolean; answer?: (asked: number) => unknown; askFails?: 'abort' | 'reject'; onEmit?: () => void } = {},
): RunStream & { events: Event[] } {
  const events: Event[] = [];
  let chunks = 0;
  let asked = 0;
  return {
    events,
    async emit(chunk, units) {
      if (opts.refuseAt !== undefined && chunks >= opts.refuseAt) {
        const reason = cancelReason('the chunk went past the budget');
        if (!opts.keepSignal) controller.abort(reason);
        throw reason;
      }
      chunks += 1;
      events.push({ emit: [chunk, units] });
      opts.onEmit?.();
    },
    async progress(p) {
      events.push({ progress: p });
    },
    async ask(request) {
      events.push({ ask: request });
      asked += 1;
      if (opts.askFails === 'abort') {
        controller.abort(cancelReason());
        throw new Error('the call was cancelled');
      }
      if (opts.askFails === 'reject') throw new Error('nobody answered the question within 1 s');
      return opts.answer ? opts.answer(asked) : { name: 'Ada' };
    },
  };
}

function agent(endpoint: string): AgentVersion {
  return {
    manifest: buildManifest({ id: 'acme/hook', version: '1.0.0', runtime: { kind: 'webhook', endpoint, timeoutS: 60 } }),
    origin: 'shipped',
  };
}

function context(stream?: RunStream, controller = new AbortController()): RunContext {
  return { callId: 'r42', signal: controller.signal, timeoutMs: 5_000, ...(stream ? { stream } : {}) };
}

const runtime = createWebhookRuntime();

function messageOf(r: RunResult): string {
  return 'message' in r && typeof r.message === 'string' ? r.message : '';
}

describe('webhook runtime: a streamed answer (application/x-ndjson)', () => {
  it('passes each chunk to the stream as it arrives, in order, then returns the output line', async () => {
    let emitted = 0;
    let firstSeen: () => void = () => {};
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"chunk": {"text": "a"}}\n');
      // The rest only once the first chunk reached the stream: it was read before the answer ended.
      await seen;
      res.write('{"chunk": {"text": "b"}}\n{"chunk"');
      await sleep(20);
      res.end(': {"text": "c"}}\n{"output": {"parts": 3}}');
    });
    const controller = new AbortController();
    const stream = recorder(controller, {
      onEmit: () => {
        emitted += 1;
        if (emitted === 1) firstSeen();
      },
    });
    const r = await runtime.run(agent(s.url), { n: 3 }, context(stream, controller));
    expect(r).toEqual({ kind: 'output', output: { parts: 3 } });
    expect(stream.events).toEqual([{ emit: [{ text: 'a' }, undefined] }, { emit: [{ text: 'b' }, undefined] }, { emit: [{ text: 'c' }, undefined] }]);
  });

  it("units: cumulative on each chunk; the result carries the last chunk's, or the output line's", async () => {
    const lines = [1, 2, 3].map((u) => ({ chunk: { i: u }, units: u }));
    const s = await serve(ndjson([...lines, { output: { ok: true } }]));
    const controller = new AbortController();
    const stream = recorder(controller);
    expect(await runtime.run(agent(s.url), {}, context(stream, controller))).toEqual({ kind: 'output', output: { ok: true }, units: 3n });
    expect(stream.events.map((e) => ('emit' in e ? e.emit[1] : undefined))).toEqual([1n, 2n, 3n]);

    const t = await serve(ndjson([...lines, { output: { ok: true }, units: 5 }]));
    expect(await runtime.run(agent(t.url), {}, context(recorder(new AbortController())))).toEqual({ kind: 'output', output: { ok: true }, units: 5n });
  });

  it('progress lines go to the stream, in order with the chunks', async () => {
    const s = await serve(ndjson([{ progress: { message: 'reading', fraction: 0.5 } }, { chunk: 1 }, { progress: {} }, { output: 1 }]));
    const controller = new AbortController();
    const stream = recorder(controller);
    expect(await runtime.run(agent(s.url), {}, context(stream, controller))).toEqual({ kind: 'output', output: 1 });
    expect(stream.events).toEqual([{ progress: { message: 'reading', fraction: 0.5 } }, { emit: [1, undefined] }, { progress: {} }]);
  });

  it('without a stream (an evaluation) chunks and progress go nowhere and the output is returned', async () => {
    const s = await serve(ndjson([{ progress: { message: 'x' } }, { chunk: 1, units: 1 }, { output: { done: true } }]));
    expect(await runtime.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { done: true }, units: 1n });
  });

  it("an error line is the agent's error code, with its message and the units delivered", async () => {
    const s = await serve(ndjson([{ chunk: 'x', units: 2 }, { error: { code: 'no_table_found', message: 'none here' } }]));
    const r = await runtime.run(agent(s.url), {}, context(recorder(new AbortController())));
    expect(r).toEqual({ kind: 'error', code: 'no_table_found', message: 'none here', units: 2n });
  });

  it.each([
    ['a line that is not JSON', ['{"chunk": 1}', 'not json', '{"output": 1}'], /line 2 of the streamed answer is not JSON/],
    ['a JSON line of no known kind', ['{"chunk": 1}', '{"result": 1}'], /line 2 .* is not one of/],
    ['a line with an unknown key', ['{"chunk": 1, "extra": true}', '{"output": 1}'], /line 1 .* has "extra" beside "chunk"/],
    ['units that are not a whole number', ['{"chunk": 1, "units": 1.5}', '{"output": 1}'], /line 1 .* units/],
    ['an error line without a code', ['{"error": {"message": "x"}}'], /line 1 .* error line/],
    ['a stream without its final line', ['{"chunk": 1}', '{"progress": {"fraction": 0.9}}'], /ended without its final/],
    ['a line after the final line', ['{"output": 1}', '', '{"chunk": 2}'], /goes on after its final line \(line 3\)/],
  ])('%s → agent_error', async (_what, lines, message) => {
    const s = await serve(ndjson(lines));
    const r = await runtime.run(agent(s.url), {}, context(recorder(new AbortController())));
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(r)).toMatch(message);
  });

  it('a streamed answer past the size limit → agent_error, the connection closed', async () => {
    const s = await serve(
      ndjson(
        Array.from({ length: 100 }, (_, i) => ({ chunk: 'x'.repeat(50), units: i })),
        { gapMs: 2, open: true },
      ),
    );
    const controller = new AbortController();
    const stream = recorder(controller);
    const r = await createWebhookRuntime({ maxResponseBytes: 1000 }).run(agent(s.url), {}, context(stream, controller));
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: 'answer larger than 1000 bytes' });
    expect(stream.events.length).toBeLessThan(20);
    await expect.poll(() => s.cut).toBe(1);
  });

  it('the stream refusing a chunk stops the reading and closes the connection: the agent sees it', async () => {
    const s = await serve(
      ndjson(
        Array.from({ length: 200 }, (_, i) => ({ chunk: i, units: i + 1 })),
        { gapMs: 10, open: true },
      ),
    );
    const controller = new AbortController();
    const stream = recorder(controller, { refuseAt: 3 });
    const r = await runtime.run(agent(s.url), {}, context(stream, controller));
    expect(r).toMatchObject({ kind: 'failure', code: 'cancelled' });
    expect(stream.events).toHaveLength(3);
    await expect.poll(() => s.cut).toBe(1);
  });

  it('the runtime closes the connection itself when a chunk is refused, the signal not fired (yet)', async () => {
    const s = await serve(
      ndjson(
        Array.from({ length: 200 }, (_, i) => ({ chunk: i })),
        { gapMs: 10, open: true },
      ),
    );
    const controller = new AbortController();
    const stream = recorder(controller, { refuseAt: 2, keepSignal: true });
    const r = await runtime.run(agent(s.url), {}, context(stream, controller));
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(controller.signal.aborted).toBe(false);
    await expect.poll(() => s.cut).toBe(1);
  });
});

describe('webhook runtime: an agent that asks (input_required, continuation)', () => {
  const question = (n: number) => ({ input_required: { message: `name ${n}?`, schema: { type: 'object' } }, continuation: `tok-${n}` });

  it('asks the caller, POSTs the answer back with x-holon-continuation and the same headers, and returns its answer', async () => {
    const s = await serve((_req, res, body, hit) => {
      if (hit === 1) return json(question(1))(res);
      if (hit === 2) return ndjson([{ chunk: { text: `hello ${JSON.parse(body).name}` }, units: 1 }, { output: { greeting: 'done' } }])(_req, res, body, hit);
      res.writeHead(500).end();
    });
    const controller = new AbortController();
    const stream = recorder(controller);
    const r = await runtime.run(agent(s.url), { x: 1 }, context(stream, controller));
    expect(r).toEqual({ kind: 'output', output: { greeting: 'done' }, units: 1n });
    expect(stream.events).toEqual([{ ask: { message: 'name 1?', schema: { type: 'object' } } }, { emit: [{ text: 'hello Ada' }, 1n] }]);
    expect(s.requests).toHaveLength(2);
    const [first, second] = s.requests;
    expect(JSON.parse(first!.body)).toEqual({ x: 1 });
    expect(first!.headers['x-holon-continuation']).toBeUndefined();
    expect(JSON.parse(second!.body)).toEqual({ name: 'Ada' });
    expect(second!.headers['x-holon-continuation']).toBe('tok-1');
    expect(second!.headers['x-holon-call']).toBe('r42');
    expect(second!.headers['x-holon-agent']).toBe('acme/hook@1.0.0');
    expect(second!.headers['content-type']).toBe('application/json');
  });

  it('may ask again: each answer goes back with its own continuation', async () => {
    const s = await serve((_req, res, _body, hit) => (hit < 3 ? json(question(hit)) : json({ asked: hit - 1 }))(res));
    const stream = recorder(new AbortController(), { answer: (n) => ({ name: `n${n}` }) });
    expect(await runtime.run(agent(s.url), {}, context(stream))).toEqual({ kind: 'output', output: { asked: 2 } });
    expect(s.requests.map((r) => [r.headers['x-holon-continuation'], r.body])).toEqual([
      [undefined, '{}'],
      ['tok-1', '{"name":"n1"}'],
      ['tok-2', '{"name":"n2"}'],
    ]);
  });

  it('more than 10 questions in a run → agent_error', async () => {
    const s = await serve((_req, res, _body, hit) => json(question(hit))(res));
    const stream = recorder(new AbortController());
    const r = await runtime.run(agent(s.url), {}, context(stream));
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/more than 10 questions/) });
    expect(stream.events).toHaveLength(10);
    expect(s.requests).toHaveLength(11);
  });

  it('the question left unanswered → agent_error; the call cancelled meanwhile → cancelled; no second POST', async () => {
    const s = await serve((_req, res) => json(question(1))(res));
    const unanswered = await runtime.run(agent(s.url), {}, context(recorder(new AbortController(), { askFails: 'reject' })));
    expect(unanswered).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/not answered: nobody answered/) });
    const controller = new AbortController();
    const cancelled = await runtime.run(agent(s.url), {}, context(recorder(controller, { askFails: 'abort' }), controller));
    expect(cancelled).toMatchObject({ kind: 'failure', code: 'cancelled' });
    expect(s.requests).toHaveLength(2);
  });

  it('no stream (an evaluation): nobody can answer a question here → agent_error', async () => {
    const s = await serve((_req, res) => json(question(1))(res));
    const r = await runtime.run(agent(s.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/nobody can answer a question here/) });
    expect(s.requests).toHaveLength(1);
  });

  it('a question badly put (no message, a continuation too long or not ASCII) → agent_error', async () => {
    for (const answer of [
      { input_required: {}, continuation: 'tok' },
      { input_required: { message: 'x' }, continuation: 'x'.repeat(1025) },
      { input_required: { message: 'x' }, continuation: 'naïve' },
      { input_required: { message: 'x', schema: 'string' }, continuation: 'tok' },
    ]) {
      const s = await serve((_req, res) => json(answer)(res));
      const stream = recorder(new AbortController());
      expect(await runtime.run(agent(s.url), {}, context(stream))).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect(stream.events).toEqual([]);
    }
  });
});

/** A registry directory (a temporary one) with one agent's holon.yaml. */
async function registryWith(name: string, lines: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-webhook-stream-'));
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, 'holon.yaml'), [...lines, ''].join('\n'));
  return dir;
}

describe('webhook agents behind the gateway (Postgres, BullMQ)', () => {
  it('streams its chunks to a caller that asked for text/event-stream; the receipt bills the units delivered', async () => {
    const s = await serve(
      ndjson(
        [{ progress: { message: 'starting', fraction: 0 } }, ...[1, 2, 3].map((i) => ({ chunk: { text: `part ${i}` }, units: i })), { output: { parts: 3 } }],
        { gapMs: 20 },
      ),
    );
    const dir = await registryWith('streamer', [
      'id: hooks/streamer',
      'version: 1.0.0',
      'summary: a webhook that streams its output, billed by the part',
      'capabilities: [test.hook]',
      'license: MIT',
      'interface:',
      '  input: { type: object }',
      '  output: { type: object, required: [parts] }',
      '  stream:',
      '    chunk: { type: object, required: [text], properties: { text: { type: string } } }',
      'pricing: { model: per_unit, currency: EUR, amount: "0.01", unit: part, max: "1.00" }',
      `runtime: { kind: webhook, endpoint: "${s.url}", limits: { timeout_s: 10 } }`,
    ]);
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['hooks/*'] } });
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: 'alice/test', agent: 'hooks/streamer', input: { n: 3 } } });
      expect(r.status).toBe(200);
      expect(r.ended).toBe(true);
      expect(r.events.map((e) => e.event)).toEqual(['queued', 'running', 'progress', 'output.chunk', 'output.chunk', 'output.chunk', 'completed']);
      expect(r.events[2]!.data).toEqual({ message: 'starting', fraction: 0 });
      expect(r.events.filter((e) => e.event === 'output.chunk').map((e) => e.data)).toEqual(
        [0, 1, 2].map((i) => ({ seq: i, data: { text: `part ${i + 1}` }, units_so_far: i + 1 })),
      );
      const completed = r.events.at(-1)!.data;
      expect(completed).toMatchObject({ status: 'succeeded', output: { parts: 3 } });
      expect(completed.receipt).toMatchObject({ billed: true, cost: { own: '0.03' }, delivered: { chunks: 3, units: '3' }, ended_by: 'completed' });
      expect((await g.get<any>('/v0/mandates/alice/test')).body.budget.spent).toBe('0.03');
      expect(s.requests).toHaveLength(1);
      expect(s.requests[0]!.headers['x-holon-agent']).toBe('hooks/streamer@1.0.0');
    });
  });

  it('asks its caller: the question on the stream, the answer through POST /v0/calls/{id}/input, sent back with the continuation', async () => {
    const s = await serve((_req, res, body, hit) =>
      json(
        hit === 1
          ? { input_required: { message: 'Your name?', schema: { type: 'object', required: ['name'] } }, continuation: 'c-1' }
          : { greeting: `hello ${JSON.parse(body).name}` },
      )(res),
    );
    const dir = await registryWith('asker', [
      'id: hooks/asker',
      'version: 1.0.0',
      'summary: a webhook that asks its caller',
      'capabilities: [test.hook]',
      'license: MIT',
      'interface: { input: { type: object }, output: { type: object, required: [greeting] } }',
      'pricing: { model: per_run, currency: EUR, amount: "0.02" }',
      `runtime: { kind: webhook, endpoint: "${s.url}", limits: { timeout_s: 10 } }`,
    ]);
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['hooks/*'] } });
      const answering = answeringWith((path, body) => g.post(path, body), { name: 'Ada' });
      const r = await readEvents(`${g.url}/v0/calls`, {
        method: 'POST',
        body: { mandate: 'alice/test', agent: 'hooks/asker', input: {} },
        until: answering.until,
      });
      expect((await answering.answered()) as { status: number }).toMatchObject({ status: 202 });
      expect(r.events.map((e) => e.event)).toEqual(['queued', 'running', 'input_required', 'input_provided', 'completed']);
      expect(r.events[2]!.data).toMatchObject({ question: 3, request: { message: 'Your name?', schema: { required: ['name'] } } });
      expect(r.events.at(-1)!.data).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Ada' }, receipt: { billed: true, cost: { own: '0.02' } } });
      expect(s.requests.map((q) => [q.headers['x-holon-continuation'], q.body])).toEqual([
        [undefined, '{}'],
        ['c-1', '{"name":"Ada"}'],
      ]);
    });
  });
});
