/**
 * Calls that stream and ask (docs/lifecycle.md, "A call's events"): the events as Server-Sent Events on Postgres and
 * BullMQ (and once on the embedded defaults), resumed with Last-Event-ID on another API process, the per-chunk budget
 * cap, and every way a stream ends with what it is billed — read from the signed receipt and the mandate's counters.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { audit } from '../../shared/ledger/audit.js';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { startEmbeddedGateway } from '../support/embedded.js';
import { send } from '../support/http.js';
import { signUp, workMandate } from '../support/hosted.js';
import { testWebhookSettings } from '../support/webhook-settings.js';
import { perTestCleanups } from '../support/cleanups.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { readEvents, type SseEvent } from '../support/sse.js';

const MANDATE = 'alice/test';
const { defer } = perTestCleanups();

async function receiptOf(g: TestGateway, id: string): Promise<any> {
  return poll(
    async () => {
      const r = await g.get<any>(`/v0/receipts/${id}`);
      return r.status === 200 ? r.body : undefined;
    },
    { what: `the receipt of ${id}`, timeoutMs: 20_000, intervalMs: 50 },
  );
}

const chunks = (events: SseEvent[]) => events.filter((e) => e.event === 'output.chunk');
const budget = async (g: TestGateway) => (await g.get<any>(`/v0/mandates/${MANDATE}`)).body.budget;

describe('a call streamed to its caller (Postgres, BullMQ)', () => {
  test('POST with Accept: text/event-stream: queued, running, every chunk in order with its units, then completed with the receipt', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 5 } } });
      expect(r.status).toBe(200);
      expect(r.ended).toBe(true);
      const id = r.events[0]!.data.call.id as string;
      expect(r.headers.get('location')).toBe(`/v0/calls/${id}`);
      expect(r.events.map((e) => e.event)).toEqual(['queued', 'running', ...Array(5).fill('output.chunk'), 'completed']);
      expect(r.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(chunks(r.events).map((e) => e.data)).toEqual([0, 1, 2, 3, 4].map((i) => ({ seq: i, data: { text: `part ${i}` }, units_so_far: i + 1 })));
      const completed = r.events.at(-1)!.data;
      expect(completed).toMatchObject({ status: 'succeeded', output: { parts: 5 } });
      expect(completed.receipt).toMatchObject({ id, billed: true, cost: { own: '0.05' }, delivered: { chunks: 5, units: '5' }, ended_by: 'completed' });
      // The stream was the synchronous consumer: the output was handed over; GET reads that it was collected.
      expect((await g.get<any>(`/v0/calls/${id}`)).body).toMatchObject({ output: null, output_gone: 'collected' });
      // The same events again, from the start or after any id, any number of times; the receipt as stored, signed.
      const again = await readEvents(`${g.url}/v0/calls/${id}/events`, { headers: { 'last-event-id': '4' } });
      expect(again.events.map((e) => e.id)).toEqual([5, 6, 7, 8]);
      expect(again.events.at(-1)!.data.receipt).toEqual(await receiptOf(g, id));
      expect((await budget(g)).spent).toBe('0.05');
    });
  });

  test('the first chunk past the reservation ends the run (ended_by: budget): never delivered; per_unit bills the units delivered', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const r = await readEvents(`${g.url}/v0/calls`, {
        method: 'POST',
        body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 10 }, max_cost: '0.03' },
      });
      expect(chunks(r.events).map((e) => e.data.seq)).toEqual([0, 1, 2]);
      const completed = r.events.at(-1)!;
      expect(completed.event).toBe('completed');
      expect(completed.data.receipt).toMatchObject({
        status: 'failed',
        error: 'budget_reached',
        billed: true,
        worst_case: '0.03',
        cost: { own: '0.03', total: '0.03' },
        delivered: { chunks: 3, units: '3' },
        ended_by: 'budget',
      });
      expect(await budget(g)).toMatchObject({ spent: '0.03', reserved: '0.00' });
    });
  });

  test('an invalid chunk fails the run unbilled (ended_by: error), the chunks before it delivered', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 5, bad_at: 2 } } });
      expect(chunks(r.events)).toHaveLength(2);
      expect(r.events.at(-1)!.data.receipt).toMatchObject({
        status: 'failed',
        error: 'invalid_output',
        billed: false,
        delivered: { chunks: 2, units: '2' },
        ended_by: 'error',
      });
      expect(await budget(g)).toMatchObject({ spent: '0.00', reserved: '0.00' });
    });
  });

  test('cut mid-way and resumed on another API process with Last-Event-ID: every chunk once, none lost; billed as completed', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'] });
      try {
        await g.mandate({});
        const first = await readEvents(`${g.url}/v0/calls`, {
          method: 'POST',
          body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 8, gap_ms: 150 } },
          until: (_e, all) => chunks(all).length === 3,
        });
        expect(first.ended).toBe(false);
        const id = first.events[0]!.data.call.id as string;
        const last = first.events.at(-1)!.id;
        const rest = await readEvents(`${other.url}/v0/calls/${id}/events`, { headers: { 'last-event-id': String(last) } });
        expect(rest.ended).toBe(true);
        const seen = [...chunks(first.events), ...chunks(rest.events)].map((e) => e.data.seq);
        expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        const ids = [...first.events, ...rest.events].map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(rest.events.at(-1)!.data.receipt).toMatchObject({
          status: 'succeeded',
          ended_by: 'completed',
          delivered: { chunks: 8, units: '8' },
          cost: { own: '0.08' },
        });
      } finally {
        await other.stop();
      }
    });
  });

  test('cut and not resumed within HOLON_STREAM_RESUME_S: the call ends disconnected, per_unit billed for exactly the units delivered', async () => {
    await useAudited(await startTestGateway({ config: { streamResumeS: 1 } }), async (g) => {
      await g.mandate({});
      const cut = await readEvents(`${g.url}/v0/calls`, {
        method: 'POST',
        body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 100, gap_ms: 100 } },
        until: (_e, all) => chunks(all).length === 2,
      });
      const id = cut.events[0]!.data.call.id as string;
      const receipt = await receiptOf(g, id);
      expect(receipt).toMatchObject({ status: 'failed', error: 'cancelled', ended_by: 'disconnected', billed: true });
      const units = Number(receipt.delivered.units);
      expect(units).toBeGreaterThanOrEqual(2);
      expect(units).toBeLessThan(100);
      expect(receipt.cost.own).toBe((units / 100).toFixed(2));
      expect(await budget(g)).toMatchObject({ spent: receipt.cost.own, reserved: '0.00' });
      // Every chunk delivered is still there to read, exactly as many as billed.
      const all = await readEvents(`${g.url}/v0/calls/${id}/events`);
      expect(chunks(all.events)).toHaveLength(receipt.delivered.chunks);
    });
  });

  test('a cancelled stream: per_unit bills what it delivered (ended_by: cancelled)', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const queued = await g.post<any>(
        '/v0/calls',
        { mandate: MANDATE, agent: 'fixtures/streamer', input: { n: 100, gap_ms: 100 } },
        { prefer: 'respond-async' },
      );
      const id = queued.body.call.id as string;
      await readEvents(`${g.url}/v0/calls/${id}/events`, { until: (_e, all) => chunks(all).length === 2 });
      await g.post(`/v0/calls/${id}/cancel`, undefined);
      const receipt = await receiptOf(g, id);
      expect(receipt).toMatchObject({ error: 'cancelled', ended_by: 'cancelled', billed: true });
      expect(receipt.cost.own).toBe((Number(receipt.delivered.units) / 100).toFixed(2));
    });
  });
});

describe('an agent that asks its caller', () => {
  test('input_required: the call waits (its clock stopped), a wrong answer is refused, the right one goes on; once only', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const queued = await g.post<any>('/v0/calls', { mandate: MANDATE, agent: 'fixtures/asker', input: {} }, { prefer: 'respond-async' });
      const id = queued.body.call.id as string;
      const waiting = await poll(
        async () => {
          const r = await g.get<any>(`/v0/calls/${id}`);
          return r.body.call.status === 'input_required' ? r.body : undefined;
        },
        { what: 'the question', timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(waiting.input_required).toMatchObject({ question: 4, request: { message: 'What is name 1?', schema: { required: ['name'] } } });
      // Longer than the agent's 5 s hard timeout: the clock does not run while it waits for its caller.
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const wrong = await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 42 } });
      expect(wrong.status).toBe(422);
      expect(wrong.body.error.code).toBe('rejected_input');
      const other = await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Ada' }, question: 9 });
      expect(other.status).toBe(409);
      expect(other.body.error.code).toBe('question_mismatch');
      const right = await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Ada' }, question: 4 });
      expect(right.status).toBe(202);
      expect(right.body.question).toBe(4);
      const done = await g.get<any>(`/v0/calls/${id}?wait=10`);
      expect(done.body).toMatchObject({ call: { status: 'succeeded' }, output: { greeting: 'hello Ada' } });
      expect(done.body.receipt).toMatchObject({ billed: true, cost: { own: '0.02' }, delivered: { chunks: 0, units: '0' }, ended_by: 'completed' });
      const again = await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Bob' } });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('no_question');
      const events = await readEvents(`${g.url}/v0/calls/${id}/events`);
      expect(events.events.map((e) => e.event)).toEqual(['queued', 'running', 'progress', 'input_required', 'input_provided', 'completed']);
      expect(events.events[2]!.data).toEqual({ message: 'about to ask', fraction: 0.1 });
      expect(events.events[4]!.data).toEqual({ question: 4 });
    });
  });

  test('nobody answers within HOLON_INPUT_TTL_S: the call ends no_answer, unbilled, its hold released', async () => {
    await useAudited(await startTestGateway({ config: { inputTtlS: 1 } }), async (g) => {
      await g.mandate({});
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: MANDATE, agent: 'fixtures/asker', input: {} } });
      expect(r.events.map((e) => e.event)).toEqual(['queued', 'running', 'progress', 'input_required', 'completed']);
      expect(r.events.at(-1)!.data.receipt).toMatchObject({ status: 'failed', error: 'no_answer', billed: false, ended_by: 'no_answer' });
      expect(await budget(g)).toMatchObject({ spent: '0.00', reserved: '0.00' });
    });
  });
});

describe('questions and the callback_url', () => {
  test('call.input_required is delivered the moment the agent asks (Standard Webhooks), then call.completed', async () => {
    const secret = generateWebhookSecret();
    const { url: hook, received } = await startReceiver(defer);
    await useAudited(await startTestGateway({ config: { webhooks: testWebhookSettings({ devSecret: secret }) } }), async (g) => {
      await g.mandate({});
      const queued = await g.post<any>('/v0/calls', { mandate: MANDATE, agent: 'fixtures/asker', input: {}, callback_url: hook }, { prefer: 'respond-async' });
      const id = queued.body.call.id as string;
      const verified = () => received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>);
      const asked = await poll(async () => verified().find((b) => b.type === 'call.input_required'), { what: 'call.input_required', timeoutMs: 10_000 });
      expect(asked).toMatchObject({
        call: { id, status: 'input_required' },
        question: 4,
        request: { message: 'What is name 1?' },
        answer: { method: 'POST', path: `/v0/calls/${id}/input` },
      });
      expect(received[0]!.headers['webhook-id']).toBe(`msg_${id}_q4`);
      expect((await g.post<any>(asked.answer.path, { input: { name: 'Hook' }, question: asked.question })).status).toBe(202);
      const done = await poll(async () => verified().find((b) => b.type === 'call.completed'), { what: 'call.completed', timeoutMs: 10_000 });
      expect(done).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Hook' }, receipt: { ended_by: 'completed' } });
      // Each once: the question's delivery and the completion's are distinct deliveries.
      expect(verified().map((b) => b.type)).toEqual(['call.input_required', 'call.completed']);
    });
  });
});

describe('resumption, at random cut points', () => {
  test('a client cut again and again, resuming each time on either API process, sees every chunk exactly once', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'] });
      try {
        await g.mandate({ budget: { total: '20.00', currency: 'EUR' } });
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }),
            fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
            async (cuts, where) => {
              const n = 12;
              const first = await readEvents(`${g.url}/v0/calls`, {
                method: 'POST',
                body: { mandate: MANDATE, agent: 'fixtures/streamer', input: { n, gap_ms: 40 } },
                until: (e) => e.id >= 1 + cuts[0]!,
              });
              const id = first.events[0]!.data.call.id as string;
              const all = [...first.events];
              for (let i = 1; !all.some((e) => e.event === 'completed'); i++) {
                const base = where[i % where.length] ? other.url : g.url;
                const lastId = all.at(-1)!.id;
                const cut = cuts[i % cuts.length]!;
                const next = await readEvents(`${base}/v0/calls/${id}/events`, {
                  headers: { 'last-event-id': String(lastId) },
                  until: (e, got) => e.event !== 'completed' && got.length >= cut,
                });
                all.push(...next.events);
              }
              expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
              expect(all.filter((e) => e.event === 'output.chunk').map((e) => e.data.seq)).toEqual([...Array(n).keys()]);
              expect(all.at(-1)!.data.receipt).toMatchObject({ ended_by: 'completed', delivered: { chunks: n, units: String(n) } });
            },
          ),
          { numRuns: 4 },
        );
      } finally {
        await other.stop();
      }
    });
  });
});

describe('on the embedded defaults (PGlite, in-process queue, store and notifier)', () => {
  test('MCP (chunks as progress, a question as a form) and call.input_required to a callback_url', async () => {
    const gw = await startEmbeddedGateway('streams-pglite-mcp');
    try {
      expect(gw.db.kind).toBe('pglite');
      const url = `http://127.0.0.1:${gw.port}`;
      const m = await send(url, 'POST', '/v0/mandates', {
        body: { id: 'carol/mcp', issuer: 'carol', grantee: 'carol/assistant', allow: { agents: ['fixtures/*'] }, budget: { total: '1.00', currency: 'EUR' } },
      });
      expect(m.status).toBe(201);
      const client = new Client({ name: 'pglite-events', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Lite' } }));
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'carol/mcp' } } }));
      try {
        const messages: string[] = [];
        const streamed = await client.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/streamer', input: { n: 2, gap_ms: 30 } } }, undefined, {
          onprogress: (p) => messages.push(p.message ?? ''),
        });
        expect(streamed.structuredContent).toMatchObject({ status: 'succeeded', receipt: { delivered: { chunks: 2, units: '2' } } });
        expect(messages.filter((t) => t.startsWith('output.chunk'))).toHaveLength(2);
        const asked = await client.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/asker', input: {} } }, undefined, { onprogress: () => {} });
        expect(asked.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Lite' } });
      } finally {
        await client.close();
      }
      // A callback_url hears the question at once, signed with the dev gateway's secret.
      const { url: hook, received } = await startReceiver(defer);
      const queued = await send<any>(url, 'POST', '/v0/calls', {
        body: { mandate: 'carol/mcp', agent: 'fixtures/asker', input: {}, callback_url: hook },
        headers: { prefer: 'respond-async' },
      });
      const id = queued.body.call.id as string;
      const secret = gw.webhookSecret!.secret;
      const verified = () => received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>);
      const q = await poll(async () => verified().find((b) => b.type === 'call.input_required'), { what: 'call.input_required', timeoutMs: 10_000 });
      expect(q).toMatchObject({ call: { id }, question: 4 });
      expect((await send(url, 'POST', `/v0/calls/${id}/input`, { body: { input: { name: 'Hook' } } })).status).toBe(202);
      const done = await poll(async () => verified().find((b) => b.type === 'call.completed'), { what: 'call.completed', timeoutMs: 10_000 });
      expect(done).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Hook' } });
      expect((await audit(gw.db.knex)).problems).toEqual([]);
    } finally {
      await gw.stop();
    }
  });

  test('a streamed call, and a question answered, as `npm start` runs them', async () => {
    const gw = await startEmbeddedGateway('streams-pglite');
    try {
      expect(gw.db.kind).toBe('pglite');
      expect(gw.context.messaging.kind).toBe('memory');
      const url = `http://127.0.0.1:${gw.port}`;
      const m = await send(url, 'POST', '/v0/mandates', {
        body: {
          id: 'carol/streams',
          issuer: 'carol',
          grantee: 'carol/assistant',
          allow: { agents: ['fixtures/*'] },
          budget: { total: '1.00', currency: 'EUR' },
        },
      });
      expect(m.status).toBe(201);
      const streamed = await readEvents(`${url}/v0/calls`, { method: 'POST', body: { mandate: 'carol/streams', agent: 'fixtures/streamer', input: { n: 4 } } });
      expect(streamed.events.map((e) => e.event)).toEqual(['queued', 'running', 'output.chunk', 'output.chunk', 'output.chunk', 'output.chunk', 'completed']);
      expect(streamed.events.at(-1)!.data.receipt).toMatchObject({ cost: { own: '0.04' }, delivered: { chunks: 4, units: '4' }, ended_by: 'completed' });

      const asking = readEvents(`${url}/v0/calls`, { method: 'POST', body: { mandate: 'carol/streams', agent: 'fixtures/asker', input: {} } });
      const question = await poll(
        async () => {
          const rows = await gw.db.knex('call_stream_events').where({ kind: 'input_required' }).select('call_id', 'seq');
          return rows[0] as { call_id: string; seq: number } | undefined;
        },
        { what: 'the question', timeoutMs: 10_000, intervalMs: 20 },
      );
      const answered = await send(url, 'POST', `/v0/calls/${question.call_id}/input`, { body: { input: { name: 'Pg' } } });
      expect(answered.status).toBe(202);
      const done = await asking;
      expect(done.events.at(-1)!.data).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Pg' } });
      expect((await audit(gw.db.knex)).problems).toEqual([]);
    } finally {
      await gw.stop();
    }
  });
});

describe('whose events and questions (hosted)', () => {
  test("another account's key gets 404 for a call's events and its question; the caller's own key reads and answers", async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const { agent } = await workMandate(g.url, alice);
      const mallory = await signUp(g.url, 'mallory');
      const queued = await send<any>(g.url, 'POST', '/v0/calls', {
        key: agent,
        body: { agent: 'fixtures/asker', input: {} },
        headers: { prefer: 'respond-async' },
      });
      expect(queued.status).toBe(202);
      const id = queued.body.call.id as string;
      await poll(async () => (await send<any>(g.url, 'GET', `/v0/calls/${id}`, { key: agent })).body.call.status === 'input_required', {
        what: 'the question',
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      const theirs = await readEvents(`${g.url}/v0/calls/${id}/events`, { headers: { authorization: `Bearer ${mallory.human}` } });
      expect(theirs.status).toBe(404);
      const answer = await send<any>(g.url, 'POST', `/v0/calls/${id}/input`, { key: mallory.human, body: { input: { name: 'Mal' } } });
      expect(answer.status).toBe(404);
      const noKey = await send<any>(g.url, 'POST', `/v0/calls/${id}/input`, { body: { input: { name: 'Anon' } } });
      expect(noKey.status).toBe(401);
      expect((await send<any>(g.url, 'POST', `/v0/calls/${id}/input`, { key: alice.human, body: { input: { name: 'Al' } } })).status).toBe(202);
      const mine = await readEvents(`${g.url}/v0/calls/${id}/events`, { headers: { authorization: `Bearer ${agent}` } });
      expect(mine.events.at(-1)!.data).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Al' } });
    });
  });
});

describe('questions inside a delegated run', () => {
  test('the child asks its caller — the orchestrator — which answers it itself; no human is asked', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const r = await g.post<any>('/v0/calls', { mandate: MANDATE, agent: 'fixtures/ask-relay', input: { mode: 'answer' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.output).toEqual({ child: { greeting: 'hello Relay' } });
      const child = r.body.receipt.children[0];
      expect(child).toMatchObject({ agent: 'fixtures/asker@1.0.0', status: 'succeeded', ended_by: 'completed', cost: { own: '0.02' } });
      // The root call asked nobody: no question in its own events.
      const root = await readEvents(`${g.url}/v0/calls/${r.body.receipt.id}/events`);
      expect(root.events.map((e) => e.event)).toEqual(['queued', 'running', 'completed']);
    });
  });

  test('the orchestrator passes the question up with ctx.ask: its caller answers, the answer goes down to the child', async () => {
    await useAudited(await startTestGateway(), async (g) => {
      await g.mandate({});
      const queued = await g.post<any>('/v0/calls', { mandate: MANDATE, agent: 'fixtures/ask-relay', input: { mode: 'pass' } }, { prefer: 'respond-async' });
      const id = queued.body.call.id as string;
      const waiting = await poll(
        async () => {
          const s = await g.get<any>(`/v0/calls/${id}`);
          return s.body.call.status === 'input_required' ? s.body : undefined;
        },
        { what: 'the question passed up', timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(waiting.input_required.request.message).toBe('What is name 1?');
      expect((await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Root' } })).status).toBe(202);
      const done = await g.get<any>(`/v0/calls/${id}?wait=15`);
      expect(done.body).toMatchObject({ call: { status: 'succeeded' }, output: { child: { greeting: 'hello Root' } } });
      expect(done.body.receipt.children[0]).toMatchObject({ status: 'succeeded', ended_by: 'completed' });
      expect(await budget(g)).toMatchObject({ spent: '0.03', reserved: '0.00' });
    });
  });
});
