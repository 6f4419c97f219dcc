import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cancelReason, isCancel } from '../../shared/runtimes/abort.js';
import { createNodeRuntime, defineAgentContextExtension, type AgentContext, type NodeRunContext } from '../../shared/runtimes/node.js';
import { createRuntimes } from '../../shared/runtimes/index.js';
import type { AgentVersion, RunContext } from '../../shared/runtimes/types.js';
import { buildManifest } from '../support/manifest-builder.js';

const agentsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents');

function agent(name: string, timeoutS = 1): AgentVersion {
  return {
    manifest: buildManifest({ id: `test/${name}`, runtime: { kind: 'node', timeoutS } }),
    dir: path.join(agentsDir, name),
    origin: 'shipped',
  };
}

function context(overrides: Partial<RunContext> = {}): RunContext {
  return { callId: 'r1', signal: AbortSignal.timeout(5_000), timeoutMs: 5_000, ...overrides };
}

const runtime = createNodeRuntime();

describe('node runtime: outcomes', () => {
  it('returns the output', async () => {
    const r = await runtime.run(agent('echo'), { file: 'a.pdf' }, context());
    expect(r).toEqual({ kind: 'output', output: { echo: { file: 'a.pdf' }, callId: 'r1', maxCost: null } });
  });

  it('passes ctx.callId and ctx.maxCost', async () => {
    const r = await runtime.run(agent('echo'), {}, context({ callId: 'r42', maxCost: { amount: '0.20', currency: 'EUR' } }));
    expect(r).toEqual({ kind: 'output', output: { echo: {}, callId: 'r42', maxCost: { amount: '0.20', currency: 'EUR' } } });
  });

  it('gives the agent a copy of the input', async () => {
    const input = { file: 'a.pdf' };
    const r = await createNodeRuntime({
      loadHandler: async () => (i: unknown) => {
        (i as { file: string }).file = 'changed';
        return i;
      },
    }).run(agent('echo'), input, context());
    expect(r).toEqual({ kind: 'output', output: { file: 'changed' } });
    expect(input.file).toBe('a.pdf');
  });

  it('reports units', async () => {
    const r = await runtime.run(agent('units'), { n: 3 }, context());
    expect(r).toEqual({ kind: 'output', output: { pages: 3 }, units: 3n });
    expect(await runtime.run(agent('units'), { n: 0 }, context())).toEqual({ kind: 'output', output: { pages: 0 }, units: 0n });
  });

  it('keeps the last units report', async () => {
    const r = await createNodeRuntime({
      loadHandler: async () => (_i: unknown, ctx: AgentContext) => {
        ctx.units(1);
        ctx.units(7);
        return {};
      },
    }).run(agent('units'), {}, context());
    expect(r).toEqual({ kind: 'output', output: {}, units: 7n });
  });

  it('reports a quote as micro-units', async () => {
    const r = await runtime.run(agent('quote'), { q: '0.35' }, context());
    expect(r).toEqual({ kind: 'output', output: { quoted: true }, quote: 350_000n });
    expect(await runtime.run(agent('quote'), { q: '12.000001' }, context())).toMatchObject({ quote: 12_000_001n });
  });

  it('turns a declared error into an error result carrying the units reported before it', async () => {
    const r = await runtime.run(agent('declared-error'), {}, context());
    expect(r).toEqual({ kind: 'error', code: 'no_table_found', message: 'no table on page 1', units: 2n });
  });

  it('reads a returned ctx.error like a thrown one', async () => {
    const r = await createNodeRuntime({
      loadHandler: async () => (_i: unknown, ctx: AgentContext) => {
        ctx.quote('1.5');
        return ctx.error('over_budget');
      },
    }).run(agent('x'), {}, context());
    expect(r).toEqual({ kind: 'error', code: 'over_budget', quote: 1_500_000n });
  });

  it('does not treat an ordinary error with a code property as a declared error', async () => {
    const r = await createNodeRuntime({
      loadHandler: async () => () => {
        throw Object.assign(new Error('nope'), { code: 'no_table_found' });
      },
    }).run(agent('x'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it('refuses a ctx.error without a string code', async () => {
    const r = await createNodeRuntime({
      loadHandler: async () => (_i: unknown, ctx: AgentContext) => {
        throw ctx.error(42 as unknown as string);
      },
    }).run(agent('x'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect((r as { message: string }).message).toMatch(/ctx\.error/);
  });

  it('turns any other thrown error into agent_error without the input', async () => {
    const secret = 'SECRET-INPUT-4711';
    const r = await runtime.run(agent('throws'), { secret }, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect((r as { message: string }).message).toMatch(/TypeError/);
    expect(JSON.stringify(r)).not.toContain(secret);
  });

  it('truncates a long error message to 200 characters', async () => {
    const r = await runtime.run(agent('long-error'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    const message = (r as { message: string }).message;
    expect(message.length).toBeLessThan(240);
    expect(message).not.toContain('x'.repeat(201));
  });

  it.each([
    ['-1', -1],
    ['1.5', 1.5],
    ['a string', 'x'],
    ['NaN', Number.NaN],
    ['beyond safe integers', 2 ** 53],
    ['a bigint', '__bigint__'],
  ])('refuses invalid units (%s) with agent_error', async (_label, n) => {
    const value = n === '__bigint__' ? 3n : n;
    const r = await createNodeRuntime({
      loadHandler: async () => (_i: unknown, ctx: AgentContext) => {
        ctx.units(value as number);
        return {};
      },
    }).run(agent('units'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect((r as { message: string }).message).toMatch(/ctx\.units/);
  });

  it('refuses invalid units from the fixture agent', async () => {
    for (const n of [-1, 1.5, 'x']) {
      const r = await runtime.run(agent('units'), { n }, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect((r as { message: string }).message).toMatch(/non-negative whole number/);
    }
  });

  it('fails the call even when the agent catches the invalid-units error', async () => {
    const r = await createNodeRuntime({
      loadHandler: async () => (_i: unknown, ctx: AgentContext) => {
        try {
          ctx.units(-5);
        } catch {
          /* ignored by a careless agent */
        }
        return { fine: true };
      },
    }).run(agent('units'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it.each([['1e3'], [0.5], ['-1'], ['0.1234567'], [''], ['01']])('refuses an invalid quote (%j) with agent_error', async (q) => {
    const r = await runtime.run(agent('quote'), { q }, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect((r as { message: string }).message).toMatch(/ctx\.quote/);
  });

  it('fails with agent_error when the agent returns nothing', async () => {
    const r = await runtime.run(agent('returns-undefined'), {}, context());
    expect(r).toEqual({ kind: 'failure', code: 'agent_error', message: expect.stringMatching(/returned nothing/) });
  });

  it('fails with agent_error when the output cannot travel as JSON', async () => {
    const r = await runtime.run(agent('bigint-output'), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it('returns null as an output (output validation decides)', async () => {
    const r = await createNodeRuntime({ loadHandler: async () => () => null }).run(agent('x'), {}, context());
    expect(r).toEqual({ kind: 'output', output: null });
  });
});

describe('node runtime: timeout and cancellation', () => {
  it('times out a handler that never returns and ignores the signal', async () => {
    const started = Date.now();
    const r = await runtime.run(agent('hang'), {}, context({ signal: AbortSignal.timeout(200), timeoutMs: 200 }));
    const elapsed = Date.now() - started;
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('lets the handler observe ctx.signal aborted, and ignores its reports after the timeout', async () => {
    const g = globalThis as { __observeSignal?: { aborted: boolean; reason?: string } };
    delete g.__observeSignal;
    const r = await runtime.run(agent('observe-signal'), {}, context({ signal: AbortSignal.timeout(200), timeoutMs: 200 }));
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(g.__observeSignal).toEqual({ aborted: true, reason: 'TimeoutError' });
  });

  it('ends cancelled when the signal is aborted with the cancel reason', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(cancelReason()), 50);
    const r = await runtime.run(agent('hang'), {}, context({ signal: controller.signal }));
    expect(r).toEqual({ kind: 'failure', code: 'cancelled', message: expect.any(String) });
  });

  it('does not run the handler when the signal already fired', async () => {
    let ran = false;
    const controller = new AbortController();
    controller.abort(cancelReason());
    const r = await createNodeRuntime({
      loadHandler: async () => () => {
        ran = true;
        return {};
      },
    }).run(agent('x'), {}, context({ signal: controller.signal }));
    expect(r).toMatchObject({ kind: 'failure', code: 'cancelled' });
    expect(ran).toBe(false);
  });

  it('an abort with any other reason is a timeout', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const r = await runtime.run(agent('hang'), {}, context({ signal: controller.signal }));
    expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
  });

  it('isCancel recognises the cancel reasons', () => {
    expect(isCancel(cancelReason())).toBe(true);
    expect(isCancel({ code: 'cancelled' })).toBe(true);
    expect(isCancel(Object.assign(new Error('x'), { name: 'CancelledError' }))).toBe(true);
    expect(isCancel(new DOMException('t', 'TimeoutError'))).toBe(false);
    expect(isCancel(undefined)).toBe(false);
  });
});

describe('node runtime: loading and extensions', () => {
  it('imports agent.mjs once per path', async () => {
    const g = globalThis as { __countedLoads?: number };
    const first = await runtime.run(agent('counted'), {}, context());
    const second = await createNodeRuntime().run(agent('counted'), {}, context());
    expect(first).toEqual({ kind: 'output', output: { loads: 1 } });
    expect(second).toEqual({ kind: 'output', output: { loads: 1 } });
    expect(g.__countedLoads).toBe(1);
  });

  it('is runtime_unavailable without agent.mjs, agent_error without a default export', async () => {
    expect(await runtime.run(agent('does-not-exist'), {}, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
    expect(await runtime.run({ ...agent('echo'), dir: undefined }, {}, context())).toMatchObject({
      kind: 'failure',
      code: 'runtime_unavailable',
    });
    expect(await runtime.run(agent('no-default'), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });

  it('lets the factory and each run extend ctx (ctx.call)', async () => {
    const seen: string[] = [];
    const rt = createNodeRuntime({
      extendContext: defineAgentContextExtension((ctx, { run }) => {
        ctx.call = async (target, input) => ({ target, input, from: run.callId });
      }),
      loadHandler: async () => async (_i: unknown, ctx: AgentContext) => {
        seen.push(typeof ctx.call);
        return ctx.call!('acme/pdf@^1', { file: 'a' });
      },
    });
    expect(await rt.run(agent('x'), {}, context({ callId: 'r9' }))).toEqual({
      kind: 'output',
      output: { target: 'acme/pdf@^1', input: { file: 'a' }, from: 'r9' },
    });
    const perRun: NodeRunContext = { ...context(), extendContext: (ctx) => void (ctx.call = async () => 'per-run') };
    expect(await rt.run(agent('x'), {}, perRun)).toEqual({ kind: 'output', output: 'per-run' });
    expect(seen).toEqual(['function', 'function']);
  });
});

describe('createRuntimes', () => {
  it('dispatches node agents, and MCP agents to the MCP runtime', async () => {
    const runtimes = createRuntimes();
    expect(await runtimes.run(agent('echo'), 1, context())).toMatchObject({ kind: 'output' });
    const mcp: AgentVersion = { manifest: buildManifest({ runtime: { kind: 'mcp', tool: 'run', timeoutS: 60 } }), origin: 'published' };
    expect(await runtimes.run(mcp, {}, context())).toEqual({
      kind: 'failure',
      code: 'runtime_unavailable',
      message: 'the agent has no valid http(s) runtime.endpoint',
    });
    await runtimes.close();
  });

  it('turns a runtime that throws into a result', async () => {
    const runtimes = createRuntimes({ runtimes: { node: { run: async () => Promise.reject(new Error('boom')) } } });
    expect(await runtimes.run(agent('echo'), 1, context())).toMatchObject({ kind: 'failure', code: 'runtime_unavailable' });
  });
});
