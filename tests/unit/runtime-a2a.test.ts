/**
 * The a2a runtime (shared/runtimes/a2a/) against real A2A agents on 127.0.0.1 (the A2A SDK's own server,
 * tests/support/a2a-agents.ts): completed over JSON-RPC and HTTP+JSON, streamed or polled; failed; a question
 * answered through the run's stream; artifacts streamed with holon/units until the stream refuses one; a task that
 * never ends cut at the deadline (cancelTask reaches the agent); garbage answers; cards that cannot be used.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { createA2aRuntime } from '../../shared/runtimes/a2a/runtime.js';
import type { RunContext, RunStream } from '../../shared/runtimes/types.js';
import { cancelReason } from '../../shared/runtimes/abort.js';
import { perTestCleanups } from '../support/cleanups.js';
import {
  a2aAgent,
  asks,
  completes,
  fails,
  neverEnds,
  startA2aAgent,
  streaming,
  streamsPages,
  type A2aAgentOptions,
  type Behaviour,
} from '../support/a2a-agents.js';

const { defer } = perTestCleanups();

async function agentServer(behaviour: Behaviour, options: A2aAgentOptions = {}) {
  const a = await startA2aAgent(behaviour, options);
  defer(() => a.close());
  return a;
}

function context(overrides: Partial<RunContext> = {}): RunContext {
  return { callId: 'r21', signal: AbortSignal.timeout(10_000), timeoutMs: 10_000, ...overrides };
}

/** A stream that records chunks and answers questions with `answer`; its emit refuses past `maxChunks`. */
function recorder(answer: unknown, maxChunks = Infinity) {
  const chunks: Array<{ chunk: unknown; units: unknown }> = [];
  const asked: unknown[] = [];
  const progressed: unknown[] = [];
  const stream: RunStream = {
    emit: async (chunk, units) => {
      if (chunks.length >= maxChunks) throw new Error('budget reached');
      chunks.push({ chunk, units });
    },
    progress: async (p) => void progressed.push(p),
    ask: async (request) => {
      asked.push(request);
      return answer;
    },
  };
  return { stream, chunks, asked, progressed };
}

/** A plain HTTP server answering everything with `handler`. */
async function rawServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const until = async (check: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe('a2a runtime', () => {
  it('a completed task over JSON-RPC (polled): the artifact is the output, units and quote from the metadata', async () => {
    const a = await agentServer(completes);
    const r = await createA2aRuntime().run(a2aAgent(a.url), { text: 'hi' }, context({ maxCost: { amount: '1.00', currency: 'EUR' }, delegationToken: 'tok' }));
    expect(r).toEqual({ kind: 'output', output: { echo: { text: 'hi' } }, units: 3n, quote: 250_000n });
    const sent = a.received[0]!;
    expect(sent.parts[0]!.content).toEqual({ $case: 'data', value: { text: 'hi' } });
    expect(sent.metadata).toMatchObject({
      'holon.call_id': 'r21',
      'holon.max_cost': { amount: '1.00', currency: 'EUR' },
      'holon.delegation': 'tok',
      'holon.skill': 'summarise',
    });
  });

  it('a completed task over HTTP+JSON, streamed', async () => {
    const a = await agentServer(completes, { binding: 'HTTP+JSON', streaming: true });
    const { stream, chunks } = recorder(null);
    const r = await createA2aRuntime().run(streaming(a2aAgent(a.url)), { text: 'hi' }, context({ stream }));
    expect(r).toMatchObject({ kind: 'output', output: { echo: { text: 'hi' } }, units: 3n });
    expect(chunks).toEqual([{ chunk: { echo: { text: 'hi' } }, units: undefined }]);
    // An agent that declares no streamed output: its artifacts are its output, never chunks.
    const plain = recorder(null);
    expect(await createA2aRuntime().run(a2aAgent(a.url), { text: 'hi' }, context({ stream: plain.stream }))).toMatchObject({ kind: 'output' });
    expect(plain.chunks).toEqual([]);
  });

  it('a failed task is an unbilled agent_error carrying what the agent said', async () => {
    for (const streaming of [false, true]) {
      const a = await agentServer(fails, { streaming });
      const r = await createA2aRuntime().run(a2aAgent(a.url), {}, context());
      expect(r).toEqual({ kind: 'failure', code: 'agent_error', message: "the agent's task failed: the document is empty" });
    }
  });

  it('input-required is the run question (with the holon/schema offered); the answer continues the same task', async () => {
    for (const streaming of [false, true]) {
      const a = await agentServer(asks, { streaming });
      const { stream, asked } = recorder({ name: 'Ada' });
      const r = await createA2aRuntime().run(a2aAgent(a.url), {}, context({ stream }));
      expect(r).toEqual({ kind: 'output', output: { hello: 'Ada' } });
      expect(asked).toEqual([{ message: 'which name?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }]);
      expect(a.received).toHaveLength(2);
      expect(a.received[1]!.taskId).not.toBe('');
    }
  });

  it('a question without a caller (an evaluation) fails the run and cancels the task', async () => {
    const a = await agentServer(asks);
    const r = await createA2aRuntime().run(a2aAgent(a.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringContaining('nobody can answer') });
    expect(await until(() => a.cancels.length === 1)).toBe(true);
  });

  it('streamed artifacts are chunks with cumulative units; a refused chunk ends the run and cancels the task', async () => {
    const a = await agentServer(streamsPages(20), { streaming: true });
    const { stream, chunks } = recorder(null, 3);
    const controller = new AbortController();
    const r = await createA2aRuntime().run(streaming(a2aAgent(a.url)), {}, context({ stream, signal: controller.signal }));
    expect(chunks).toEqual([1, 2, 3].map((i) => ({ chunk: { page: i }, units: BigInt(i) })));
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(await until(() => a.cancels.length === 1)).toBe(true);
  });

  it('a task that never ends is cut at the deadline (timeout) and cancelled; a cancellation says cancelled', async () => {
    const a = await agentServer(neverEnds);
    const r = await createA2aRuntime().run(a2aAgent(a.url), {}, context({ signal: AbortSignal.timeout(400), timeoutMs: 400 }));
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(await until(() => a.cancels.length === 1)).toBe(true);

    const s = await agentServer(neverEnds, { streaming: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(cancelReason()), 300);
    const c = await createA2aRuntime().run(a2aAgent(s.url), {}, context({ signal: controller.signal }));
    expect(c).toMatchObject({ kind: 'failure', code: 'cancelled' });
    expect(await until(() => s.cancels.length === 1)).toBe(true);
  });

  it('garbage answers are declared failures, never throws: HTML, 500, a hang', async () => {
    const card = (origin: string) =>
      JSON.stringify({
        name: 'x',
        supportedInterfaces: [{ url: `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        skills: [{ id: 'summarise', name: 's' }],
      });
    const serve = (rpc: (res: http.ServerResponse) => void) =>
      rawServer((req, res) => {
        if (req.method === 'GET') {
          res.setHeader('content-type', 'application/json');
          res.end(card(`http://${req.headers.host}`));
        } else rpc(res);
      });
    const html = await serve((res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<html>hello</html>');
    });
    expect(await createA2aRuntime().run(a2aAgent(`${html}/card.json`), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    const five = await serve((res) => {
      res.statusCode = 500;
      res.end('oops');
    });
    expect(await createA2aRuntime().run(a2aAgent(`${five}/card.json`), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    const hang = await serve(() => undefined);
    expect(await createA2aRuntime().run(a2aAgent(`${hang}/card.json`), {}, context({ signal: AbortSignal.timeout(300), timeoutMs: 300 }))).toMatchObject({
      kind: 'failure',
      code: 'timeout',
    });
    const notCard = await rawServer((_req, res) => res.end('<html>no card</html>'));
    expect(await createA2aRuntime().run(a2aAgent(`${notCard}/card.json`), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it("a card whose interface is at another origin, or without the version's skill, is runtime_unavailable", async () => {
    const other = await agentServer(completes, {
      card: (c) => ({ ...c, supportedInterfaces: [{ ...c.supportedInterfaces[0]!, url: 'http://127.0.0.2:9/a2a/jsonrpc' }] }),
    });
    const r = await createA2aRuntime().run(a2aAgent(other.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'runtime_unavailable', message: expect.stringContaining("endpoint's origin") });
    expect(other.received).toHaveLength(0);
    const noSkill = await agentServer(completes, { card: (c) => ({ ...c, skills: [] }) });
    expect(await createA2aRuntime().run(a2aAgent(noSkill.url), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    const down = await createA2aRuntime().run(a2aAgent('http://127.0.0.1:9/.well-known/agent-card.json'), {}, context());
    expect(down).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it('a published version runs on the card kept at publish, not the card served now', async () => {
    const a = await agentServer(completes);
    const kept = await (await fetch(a.url)).json();
    const moved = await agentServer(completes, {
      card: (c) => ({ ...c, supportedInterfaces: [{ ...c.supportedInterfaces[0]!, url: 'http://127.0.0.2:9/a2a/jsonrpc' }] }),
    });
    // The kept card names a's interface at a's origin; the endpoint is a's too, so the kept card is what counts.
    const r = await createA2aRuntime().run(a2aAgent(a.url, { a2aCard: kept }), { n: 1 }, context());
    expect(r).toMatchObject({ kind: 'output', output: { echo: { n: 1 } } });
    expect(moved.received).toHaveLength(0);
  });

  it("the headers option's credential goes with every request (the card's too); the protocol's own headers are not replaced", async () => {
    const a = await agentServer(completes);
    const rt = createA2aRuntime({ headers: () => ({ Authorization: 'Bearer sekret', 'Content-Type': 'text/plain' }) });
    expect(await rt.run(a2aAgent(a.url, { origin: 'shipped' }), { n: 1 }, context())).toMatchObject({ kind: 'output' });
    expect(a.hits.length).toBeGreaterThanOrEqual(3);
    expect(a.hits.every((h) => h.authorization === 'Bearer sekret')).toBe(true);
    const failing = createA2aRuntime({
      headers: () => {
        throw new Error('the credential cannot be read');
      },
    });
    expect(await failing.run(a2aAgent(a.url), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });

  it('a published agent through the guarded network: http:// refused unless allowed; an answer past the size limit is agent_error', async () => {
    const a = await agentServer(completes);
    const guarded = { fetch: (url: string | URL, init?: RequestInit) => fetch(url, init), allowHttp: false };
    const refused = await createA2aRuntime({ published: guarded }).run(a2aAgent(a.url), {}, context());
    expect(refused).toMatchObject({ kind: 'failure', code: 'runtime_unavailable', message: expect.stringContaining('https') });
    expect(a.hits).toHaveLength(0);
    const allowed = await createA2aRuntime({ published: { ...guarded, allowHttp: true } }).run(a2aAgent(a.url), { n: 1 }, context());
    expect(allowed).toMatchObject({ kind: 'output' });

    const big = await agentServer((e) => {
      e.submitted();
      e.artifact({ text: 'x'.repeat(50_000) });
      e.status(TaskState.TASK_STATE_COMPLETED);
      e.done();
    });
    const r = await createA2aRuntime({ maxResponseBytes: 20_000 }).run(a2aAgent(big.url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error', message: expect.stringContaining('larger than 20000 bytes') });
  });

  it('a completed task without a data part, or with units that are not a whole number, is agent_error', async () => {
    const noData = await agentServer((e) => {
      e.submitted();
      e.status(TaskState.TASK_STATE_COMPLETED, { text: 'done, but nothing to show' });
      e.done();
    });
    expect(await createA2aRuntime().run(a2aAgent(noData.url), {}, context())).toMatchObject({
      kind: 'failure',
      code: 'agent_error',
      message: expect.stringContaining('data part'),
    });
    const badUnits = await agentServer((e) => {
      e.submitted();
      e.artifact({ ok: true });
      e.status(TaskState.TASK_STATE_COMPLETED, { metadata: { 'holon/units': '1.5' } });
      e.done();
    });
    expect(await createA2aRuntime().run(a2aAgent(badUnits.url), {}, context())).toMatchObject({
      kind: 'failure',
      code: 'agent_error',
      message: expect.stringContaining('holon/units'),
    });
  });

  it('rejected and auth-required: never billed (agent_error, runtime_unavailable)', async () => {
    const rejects = await agentServer((e) => {
      e.submitted();
      e.status(TaskState.TASK_STATE_REJECTED, { text: 'not my kind of task' });
      e.done();
    });
    expect(await createA2aRuntime().run(a2aAgent(rejects.url), {}, context())).toEqual({
      kind: 'failure',
      code: 'agent_error',
      message: 'the agent rejected the task: not my kind of task',
    });
    const auth = await agentServer((e) => {
      e.submitted();
      e.status(TaskState.TASK_STATE_AUTH_REQUIRED, { text: 'sign in first' });
      e.done();
    });
    expect(await createA2aRuntime().run(a2aAgent(auth.url), {}, context())).toMatchObject({
      kind: 'failure',
      code: 'runtime_unavailable',
      message: expect.stringContaining('auth-required'),
    });
  });

  it("a streamed working status's text is the call's progress", async () => {
    const a = await agentServer(
      (e) => {
        e.submitted();
        e.status(TaskState.TASK_STATE_WORKING, { text: 'reading the document' });
        e.artifact({ ok: true });
        e.status(TaskState.TASK_STATE_COMPLETED);
        e.done();
      },
      { streaming: true },
    );
    const { stream, progressed } = recorder(null);
    expect(await createA2aRuntime().run(a2aAgent(a.url), {}, context({ stream }))).toEqual({ kind: 'output', output: { ok: true } });
    expect(progressed).toEqual([{ message: 'reading the document' }]);
  });
});
