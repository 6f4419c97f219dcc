/**
 * MCP agents of the 2026-07-28 era behind the MCP runtime (shared/runtimes/mcp/): the runtime negotiates the era
 * (`server/discover`) and calls a stateless server; an input request the agent answers with becomes the run's
 * question and is retried with the caller's answer; a task the agent answers with (the tasks extension) is polled to
 * its end, its input requests answered with `tasks/update`, and cancelled with the run — against real servers of the
 * SDK v2 (`createMcpHandler`) on 127.0.0.1.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { acceptedContent, createMcpHandler, inputRequired, Server, type CallToolResult } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { describe, expect, it } from 'vitest';
import type { RunStream } from '../../shared/runtimes/types.js';
import { perTestCleanups } from '../support/cleanups.js';
import { agent, context, mcpHarness } from '../support/mcp-test-servers.js';
import { poll } from '../support/poll.js';

const { defer } = perTestCleanups();
const { runtime } = mcpHarness(defer);

const NAME_SCHEMA = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
const structured = (value: Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
  ...(meta ? { _meta: meta } : {}),
});

/** What the test server saw: the protocol version of each request, the task's updates and cancels. */
interface Seen {
  versions: string[];
  updates: unknown[];
  cancels: string[];
}

/** A 2026-only server (`legacy: 'reject'`) with the tools `run`, `ask` and `task`, on a port of its own. */
async function start2026Server(task: { steps: Array<'working' | 'input_required'> } = { steps: ['working'] }): Promise<{ url: string; seen: Seen }> {
  const seen: Seen = { versions: [], updates: [], cancels: [] };
  let polls = 0;
  let answered: unknown;
  const handler = createMcpHandler(
    () => {
      const s = new Server({ name: 'agent-2026', version: '1' }, { capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } } });
      s.setRequestHandler('tools/list', async () => ({ tools: ['run', 'ask', 'task'].map((name) => ({ name, inputSchema: { type: 'object' as const } })) }));
      s.setRequestHandler('tools/call', async (request, ctx) => {
        const { name } = request.params;
        if (name === 'run') return structured({ ok: true, maxCost: (request.params._meta as any)?.['holon/max_cost'] ?? null }, { 'holon/units': 3 });
        if (name === 'ask') {
          const answer = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'who');
          if (!answer)
            return inputRequired({ inputRequests: { who: inputRequired.elicit({ mode: 'form', message: 'your name?', requestedSchema: NAME_SCHEMA }) } });
          return structured({ greeting: `hello ${answer.name}` });
        }
        const now = new Date().toISOString();
        return {
          resultType: 'task',
          taskId: 't-1',
          status: 'working',
          createdAt: now,
          lastUpdatedAt: now,
          ttlMs: 60_000,
          pollIntervalMs: 50,
          content: [],
        } as never;
      });
      s.setRequestHandler('tasks/get', { params: z.object({ taskId: z.string() }).loose(), result: z.object({}).loose() }, async (p) => {
        const now = new Date().toISOString();
        const base = { taskId: p.taskId, createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 50 };
        if (seen.cancels.length) return { ...base, status: 'cancelled' };
        const step = task.steps[polls++];
        if (step === 'working') return { ...base, status: 'working' };
        if (step === 'input_required' && answered === undefined) {
          polls--;
          return {
            ...base,
            status: 'input_required',
            inputRequests: { who: inputRequired.elicit({ mode: 'form', message: 'task asks a name', requestedSchema: NAME_SCHEMA }) },
          };
        }
        if (step === 'input_required') return { ...base, status: 'working' };
        return { ...base, status: 'completed', result: structured({ done: true, answered: answered ?? null }, { 'holon/units': 2 }) };
      });
      s.setRequestHandler('tasks/update', { params: z.object({ taskId: z.string() }).loose(), result: z.object({}).loose() }, async (p, ctx) => {
        const responses = ctx.mcpReq.inputResponses ?? (p as { inputResponses?: unknown }).inputResponses;
        seen.updates.push(responses);
        answered = acceptedContent(responses as never, 'who') ?? null;
        return {};
      });
      s.setRequestHandler('tasks/cancel', { params: z.object({ taskId: z.string() }).loose(), result: z.object({}).loose() }, async (p) => {
        seen.cancels.push(p.taskId);
        return {};
      });
      return s;
    },
    { legacy: 'reject' },
  );
  const node = toNodeHandler(handler);
  const http: HttpServer = createServer((req, res) => {
    seen.versions.push(String(req.headers['mcp-protocol-version'] ?? ''));
    void node(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  defer(async () => {
    await handler.close();
    await new Promise((resolve) => http.close(resolve));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen };
}

/** A run's stream that answers each question with `name` (or fails when `name` is undefined). */
function answering(name: string | undefined) {
  const asked: unknown[] = [];
  const stream: RunStream = {
    emit: async () => {},
    progress: async () => {},
    ask: async (request) => {
      asked.push(request);
      if (name === undefined) throw new Error('nobody answered');
      return { name };
    },
  };
  return { stream, asked };
}

describe('mcp runtime: 2026-07-28 agents', () => {
  it('negotiates the 2026 era and calls a stateless server; the Holon profile works as in 2025', async () => {
    const s = await start2026Server();
    const r = await runtime().run(agent(s.url), {}, context({ maxCost: { amount: '0.50', currency: 'EUR' } }));
    expect(r).toEqual({ kind: 'output', output: { ok: true, maxCost: { amount: '0.50', currency: 'EUR' } }, units: 3n });
    // Every request after the probe speaks 2026-07-28.
    expect(s.seen.versions.filter((v) => v !== '')).toContain('2026-07-28');
    expect(s.seen.versions.every((v) => v === '' || v === '2026-07-28')).toBe(true);
  });

  it("an input request is the run's question; the caller's answer goes back on the retry", async () => {
    const s = await start2026Server();
    const { stream, asked } = answering('Ada');
    const r = await runtime().run(agent(s.url, 'ask'), {}, context({ stream }));
    expect(r).toEqual({ kind: 'output', output: { greeting: 'hello Ada' } });
    expect(asked).toEqual([{ message: 'your name?', schema: NAME_SCHEMA }]);
  });

  it('a task is polled to its end; its input request is answered with tasks/update; the result is read as any', async () => {
    const s = await start2026Server({ steps: ['working', 'input_required', 'working'] });
    const { stream, asked } = answering('Tasha');
    const r = await runtime().run(agent(s.url, 'task'), {}, context({ stream }));
    expect(r).toEqual({ kind: 'output', output: { done: true, answered: { name: 'Tasha' } }, units: 2n });
    expect(asked).toEqual([{ message: 'task asks a name', schema: NAME_SCHEMA }]);
    expect(s.seen.updates).toEqual([{ who: { action: 'accept', content: { name: 'Tasha' } } }]);
  });

  it('a cancelled run cancels its task at the agent', async () => {
    const s = await start2026Server({ steps: Array(1000).fill('working') });
    const controller = new AbortController();
    const running = runtime().run(agent(s.url, 'task'), {}, context({ signal: controller.signal }));
    await poll(async () => (s.seen.versions.length > 4 ? true : undefined), { what: 'the task to be polled', timeoutMs: 5_000, intervalMs: 10 });
    controller.abort(new Error('cancelled by the caller'));
    const r = await running;
    expect(r.kind).toBe('failure');
    await poll(async () => (s.seen.cancels.length ? true : undefined), { what: 'tasks/cancel', timeoutMs: 5_000, intervalMs: 10 });
    expect(s.seen.cancels).toEqual(['t-1']);
  });
});
