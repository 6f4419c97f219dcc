/**
 * MCP tasks on /mcp (services/api/mcp/tasks.ts, shared/calls/tasks.ts) with the SDK client's task API, across two
 * API processes on one database and Redis: a task started through one is read, awaited and cancelled through the
 * other, and through a process started after it (nothing lives in a process's memory); only its creator sees it;
 * a cancelled task's receipt is unbilled; the result is what the synchronous call_agent answers.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { send, signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';

async function connect(base: string, key: string): Promise<Client> {
  const client = new Client({ name: 'tasks-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** tools/call with a task: the handle comes back at once. */
async function startTask(client: Client, args: Record<string, unknown>) {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'call_agent', arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

async function started(file: string): Promise<void> {
  await poll(async () => (await readFile(file, 'utf8').catch(() => '')).includes('started'), { what: 'the call to run', timeoutMs: 10_000, intervalMs: 20 });
}

describe('MCP tasks', () => {
  test('create → get → result, cancel → unbilled, read through the other API process and a later one; only the creator sees them', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      let other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
      const clients: Client[] = [];
      const open = async (base: string, key: string) => {
        const c = await connect(base, key);
        clients.push(c);
        return c;
      };
      try {
        const alice = await signUp(g.url, 'alice');
        const { mandate, agent } = await workMandate(g.url, alice);
        const mallory = await signUp(g.url, 'mallory');
        const here = await open(g.url, agent);
        const there = await open(other.url, agent);

        const tools = await here.listTools();
        expect(tools.tools.find((t) => t.name === 'call_agent')?.execution).toEqual({ taskSupport: 'optional' });
        expect(tools.tools.find((t) => t.name === 'get_budget')?.execution).toBeUndefined();
        expect(here.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

        // The SDK's task stream on one process: created, then the result, the same as the synchronous tool's.
        const messages: any[] = [];
        for await (const m of here.experimental.tasks.callToolStream(
          { name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: 'task' } } },
          CallToolResultSchema,
          { task: { ttl: 60_000 } },
        )) {
          messages.push(m);
        }
        expect(messages[0], String(messages[0]?.error)).toMatchObject({ type: 'taskCreated', task: { status: 'working' } });
        const streamed = messages.at(-1);
        expect(streamed.type).toBe('result');
        expect(streamed.result.structuredContent).toMatchObject({ status: 'succeeded', output: { text: 'TASK' }, receipt: { billed: true } });
        const streamedId = messages[0].task.taskId;
        expect(streamed.result.structuredContent.receipt.id).toBe(streamedId);

        // Created through one process, followed through the other: get (working), result (waits), get (completed).
        const task = await startTask(here, { agent: 'examples/slow', input: { ms: 400 } });
        expect(task).toMatchObject({ status: 'working', pollInterval: expect.any(Number), ttl: expect.any(Number) });
        expect((await there.experimental.tasks.getTask(task.taskId)).status).toBe('working');
        const result = await there.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({
          status: 'succeeded',
          output: { waited: 400 },
          receipt: { id: task.taskId, billed: true, cost: { total: '0.02' } },
        });
        expect((await there.experimental.tasks.getTask(task.taskId)).status).toBe('completed');

        // Cancelled through the other process while the agent runs: the agent stops, nothing is billed.
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-tasks-')), 'patient.log');
        const long = await startTask(here, { agent: 'fixtures/patient', input: { file, ms: 20_000 } });
        await started(file);
        const cancelled = await there.experimental.tasks.cancelTask(long.taskId);
        expect(cancelled.status).toBe('cancelled');
        expect((await readFile(file, 'utf8')).trim().split('\n')).toEqual(['started', 'aborted:CancelledError']);
        const unbilled = await here.experimental.tasks.getTaskResult(long.taskId, CallToolResultSchema);
        expect(unbilled.isError).toBe(true);
        expect(unbilled.structuredContent).toMatchObject({
          status: 'failed',
          error: { code: 'cancelled' },
          receipt: { id: long.taskId, status: 'failed', error: 'cancelled', billed: false, cost: { total: '0.00' } },
        });
        // Final: a second cancel is refused, as the MCP spec says for a task in a terminal status.
        await expect(there.experimental.tasks.cancelTask(long.taskId)).rejects.toThrow(/already cancelled/);
        const budget = (await send(g.url, 'GET', `/v0/mandates/${mandate}`, { key: alice.human })).body.budget;
        expect(budget).toMatchObject({ spent: '0.03', reserved: '0.00' });

        // Listed, newest first, for its creator only.
        const listed = await there.experimental.tasks.listTasks();
        expect(listed.tasks.map((t) => [t.taskId, t.status])).toEqual([
          [long.taskId, 'cancelled'],
          [task.taskId, 'completed'],
          [streamedId, 'completed'],
        ]);
        expect(listed.nextCursor).toBeUndefined();
        await expect(there.experimental.tasks.listTasks('not-a-cursor')).rejects.toThrow();
        const stranger = await open(other.url, mallory.sandboxAgent);
        expect((await stranger.experimental.tasks.listTasks()).tasks).toEqual([]);
        await expect(stranger.experimental.tasks.getTask(task.taskId)).rejects.toThrow(/there is no task/);
        await expect(stranger.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/there is no task/);
        // Alice's other key (another mandate's connection) does not see them either.
        await expect((await open(other.url, alice.sandboxAgent)).experimental.tasks.getTask(task.taskId)).rejects.toThrow(/there is no task/);

        // A process started after all this (the other one gone) answers the same from the database.
        await Promise.all(clients.splice(0).map((c) => c.close()));
        await other.stop();
        other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
        const later = await open(other.url, agent);
        expect(await later.experimental.tasks.getTask(long.taskId)).toMatchObject({ taskId: long.taskId, status: 'cancelled' });
        const again = await later.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
        // The output was handed over once (as GET /v0/calls/{id}); the receipt stays.
        expect(again.structuredContent).toMatchObject({ status: 'succeeded', output: null, receipt: { id: task.taskId, billed: true } });

        // Refused at admission: the task is final at once, failed, with its receipt.
        const denied = await startTask(later, { agent: 'holon-labs/not-allowed', input: {} });
        expect(denied.status).toBe('failed');
        const deniedResult = await later.experimental.tasks.getTaskResult(denied.taskId, CallToolResultSchema);
        expect(deniedResult).toMatchObject({ isError: true, structuredContent: { receipt: { id: denied.taskId, billed: false } } });

        // Without a task, call_agent answers in the same tool call as ever.
        const sync = await later.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: { text: 'sync' } } });
        expect(sync.structuredContent).toMatchObject({ status: 'succeeded', output: { text: 'SYNC' } });
      } finally {
        await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
        await other.stop();
      }
    });
  });
});
