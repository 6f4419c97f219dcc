/**
 * A call's events on MCP (services/api/mcp/call-events.ts), driven by the SDK's own client over Streamable HTTP:
 * chunks and progress as `notifications/progress` on the call_agent request, a question as an elicitation form
 * answered in the client, a declined form cancelling the call, and no form (no elicitation capability) leaving the
 * call held for `POST /v0/calls/{id}/input`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test as base } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';

const test = base.extend<{ gateway: TestGateway }>({
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { mcpMandate: 'alice/test', mcpProgressMs: 200 } }), use),
});

async function withClient<T>(g: TestGateway, elicit: ((r: ElicitRequest) => Promise<ElicitResult>) | undefined, use: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'holon-events-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe('call events over MCP', () => {
  test('chunks and progress arrive as notifications/progress on the call_agent request, in order, before the result', async ({ gateway: g }) => {
    await g.mandate({});
    await withClient(g, undefined, async (c) => {
      const seen: Progress[] = [];
      const r = await c.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/streamer', input: { n: 3, gap_ms: 50 } } }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      expect((r.structuredContent as any).status).toBe('succeeded');
      expect((r.structuredContent as any).receipt).toMatchObject({ delivered: { chunks: 3, units: '3' }, ended_by: 'completed' });
      const chunks = seen.map((p) => p.message ?? '').filter((m) => m.startsWith('output.chunk'));
      expect(chunks).toHaveLength(3);
      // The chunk is another agent's output: inside <untrusted>, `<` and `&` escaped (none here), as JSON.
      const unwrap = (m: string) => JSON.parse(/^output\.chunk <untrusted>([\s\S]*)<\/untrusted>$/.exec(m)![1]!);
      chunks.forEach((m, i) => expect(unwrap(m)).toEqual({ seq: i, data: { text: `part ${i}` }, units_so_far: i + 1 }));
      // Progress numbers only grow (MCP requires it).
      expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
    });
  });

  test('a question becomes an elicitation form; the answer given there goes to the agent', async ({ gateway: g }) => {
    await g.mandate({});
    const asked: ElicitRequest[] = [];
    await withClient(
      g,
      async (request) => {
        asked.push(request);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      async (c) => {
        const r = await c.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/asker', input: {} } }, undefined, { onprogress: () => {} });
        expect(r.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Ada' } });
        expect(asked).toHaveLength(1);
        const params = asked[0]!.params as any;
        expect(params.message).toContain('What is name 1?');
        expect(params.requestedSchema).toEqual({ type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] });
      },
    );
  });

  test('a declined form cancels the call, unbilled', async ({ gateway: g }) => {
    await g.mandate({});
    await withClient(
      g,
      async () => ({ action: 'decline' }),
      async (c) => {
        const r = await c.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/asker', input: {} } });
        expect(r.isError).toBe(true);
        expect((r.structuredContent as any).receipt).toMatchObject({ status: 'failed', error: 'cancelled', billed: false, ended_by: 'cancelled' });
      },
    );
  });

  test('without elicitation the call is held for POST /v0/calls/{id}/input, and the tool answers once it is answered', async ({ gateway: g }) => {
    await g.mandate({});
    await withClient(g, undefined, async (c) => {
      const messages: string[] = [];
      const pending = c.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/asker', input: {} } }, undefined, {
        onprogress: (p) => messages.push(p.message ?? ''),
      });
      const note = await poll(async () => messages.find((m) => m.startsWith('input_required')), { what: 'the question', timeoutMs: 10_000, intervalMs: 20 });
      const id = /\/v0\/calls\/([^/]+)\/input/.exec(note)![1]!;
      expect((await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Bo' } })).status).toBe(202);
      const r = await pending;
      expect(r.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Bo' } });
    });
  });

  test("a task whose agent asks is input_required (tasks/get says how to answer); answered, its result is the call's", async ({ gateway: g }) => {
    await g.mandate({});
    await withClient(g, undefined, async (c) => {
      const { task } = await c.request(
        { method: 'tools/call', params: { name: 'call_agent', arguments: { agent: 'fixtures/asker', input: {} }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const waiting = await poll(
        async () => {
          const t = await c.experimental.tasks.getTask(task.taskId);
          return t.status === 'input_required' ? t : undefined;
        },
        { what: 'the task to wait for an answer', timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(waiting.statusMessage).toBe(`call ${task.taskId} waits for an answer to question 4: POST /v0/calls/${task.taskId}/input`);
      expect((await g.post<any>(`/v0/calls/${task.taskId}/input`, { input: { name: 'Task' } })).status).toBe(202);
      const result = await c.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Task' } });
      expect((await c.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    });
  });
});
