/**
 * An MCP agent's side of the call's events (shared/runtimes/mcp/): its progress notifications become `progress`
 * events, and an elicitation it sends during its tool call becomes the run's question to its caller (the run's
 * stream), answered back as the elicitation's result — against real MCP servers on 127.0.0.1 (the SDK's own server).
 * Two runs on one pooled session each get their own question.
 */
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { RunStream } from '../../shared/runtimes/types.js';
import { perTestCleanups } from '../support/cleanups.js';
import { agent, context, mcpHarness, structured, type Tool } from '../support/mcp-test-servers.js';

const { defer } = perTestCleanups();
const { startMcpServer, runtime } = mcpHarness(defer);

/** A run's stream that records what the agent told and answers each question with `answer(message)`. */
function recorder(answer: (message: string) => Promise<unknown>) {
  const seen: Array<{ progress?: unknown; asked?: unknown }> = [];
  const stream: RunStream = {
    emit: async () => {},
    progress: async (p) => void seen.push({ progress: p }),
    ask: async (request) => {
      seen.push({ asked: request });
      return answer(request.message);
    },
  };
  return { stream, seen };
}

/** A tool that reports progress, asks for a name (elicitation/create), and answers with what it was given. */
const asking: Tool = async (args, extra) => {
  const token = extra._meta?.progressToken;
  if (token !== undefined)
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 4, message: 'reading' } });
  const r = await extra.sendRequest(
    {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `name for ${String(args.who)}?`,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    },
    ElicitResultSchema,
  );
  return structured({ action: r.action, content: r.content ?? null });
};

describe('mcp runtime: streams and questions', () => {
  it("the agent's progress is the run's progress; its elicitation is the run's question, answered back", async () => {
    const s = await startMcpServer({ run: asking });
    const { stream, seen } = recorder(async () => ({ name: 'Ada' }));
    const r = await runtime().run(agent(s.url), { who: 'x' }, context({ stream }));
    expect(r).toEqual({ kind: 'output', output: { action: 'accept', content: { name: 'Ada' } } });
    expect(seen).toEqual([
      { progress: { message: 'reading', fraction: 0.25 } },
      { asked: { message: 'name for x?', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
    ]);
  });

  it('concurrent runs on one pooled session: each elicitation reaches the run whose tool call sent it', async () => {
    const s = await startMcpServer({ run: asking });
    const rt = runtime();
    const runs = ['a', 'b', 'c'].map(async (who) => {
      const { stream, seen } = recorder(async (message) => {
        await new Promise((resolve) => setTimeout(resolve, who === 'a' ? 80 : 10));
        return { name: `${who}:${message}` };
      });
      const r = await rt.run(agent(s.url), { who }, context({ stream }));
      return { who, r, asked: seen.filter((e) => e.asked).length };
    });
    for (const { who, r, asked } of await Promise.all(runs)) {
      expect(r).toEqual({ kind: 'output', output: { action: 'accept', content: { name: `${who}:name for ${who}?` } } });
      expect(asked).toBe(1);
    }
  });

  it('a question nobody answers is cancelled at the agent; with no stream (an evaluation) it is declined', async () => {
    const s = await startMcpServer({ run: asking });
    const { stream } = recorder(async () => {
      throw new Error('nobody answered');
    });
    expect(await runtime().run(agent(s.url), { who: 'y' }, context({ stream }))).toEqual({ kind: 'output', output: { action: 'cancel', content: null } });
    expect(await runtime().run(agent(s.url), { who: 'z' }, context())).toEqual({ kind: 'output', output: { action: 'decline', content: null } });
  });
});
