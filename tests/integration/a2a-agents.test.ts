/**
 * A2A agents behind the gateway (Postgres, BullMQ; docs/a2a-agents.md): the A2A SDK's own servers on 127.0.0.1
 * (tests/support/a2a-agents.ts), listed from a registry directory, hired through POST /v0/calls. A paid call and its
 * receipt; a question answered through POST /v0/calls/{id}/input; a streamed call cut by the budget, billed by the
 * units delivered, its task cancelled. The ledger is audited after each (useAudited).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { answeringWith, readEvents } from '../support/sse.js';
import { perTestCleanups } from '../support/cleanups.js';
import { asks, completes, startA2aAgent, streamsPages, type A2aAgentOptions, type Behaviour } from '../support/a2a-agents.js';

const { defer } = perTestCleanups();

async function agentServer(behaviour: Behaviour, options: A2aAgentOptions = {}) {
  const a = await startA2aAgent(behaviour, options);
  defer(() => a.close());
  return a;
}

/** A registry directory (a temporary one) with one agent's holon.yaml. */
async function registryWith(name: string, lines: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-a2a-'));
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, 'holon.yaml'), [...lines, ''].join('\n'));
  return dir;
}

const manifest = (name: string, endpoint: string, extra: string[]) => [
  `id: a2a/${name}`,
  'version: 1.0.0',
  `summary: an A2A agent (${name})`,
  'capabilities: [test.a2a]',
  'license: MIT',
  ...extra,
  `runtime: { kind: a2a, endpoint: "${endpoint}", skill: summarise, limits: { timeout_s: 10 } }`,
];

describe('A2A agents behind the gateway (Postgres, BullMQ)', () => {
  it('a paid call: the output, a billed receipt, the budget spent, the books audited', async () => {
    const a = await agentServer(completes);
    const dir = await registryWith(
      'echo',
      manifest('echo', a.url, [
        'interface: { input: { type: object }, output: { type: object, required: [echo] } }',
        'pricing: { model: per_run, currency: EUR, amount: "0.02" }',
      ]),
    );
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['a2a/*'] } });
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: 'alice/test', agent: 'a2a/echo', input: { text: 'hi' } } });
      const completed = r.events.at(-1)!.data;
      expect(completed).toMatchObject({ status: 'succeeded', output: { echo: { text: 'hi' } }, receipt: { billed: true, cost: { own: '0.02' } } });
      expect((await g.get<any>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.02', reserved: '0.00' });
      expect(a.received[0]!.metadata).toMatchObject({ 'holon.call_id': completed.receipt.id, 'holon.skill': 'summarise' });
    });
  });

  it('asks its caller: the question on the stream, the answer through POST /v0/calls/{id}/input, back on the same task', async () => {
    const a = await agentServer(asks, { streaming: true });
    const dir = await registryWith(
      'asker',
      manifest('asker', a.url, [
        'interface: { input: { type: object }, output: { type: object, required: [hello] } }',
        'pricing: { model: per_run, currency: EUR, amount: "0.02" }',
      ]),
    );
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['a2a/*'] } });
      const answering = answeringWith((path, body) => g.post(path, body), { name: 'Ada' });
      const r = await readEvents(`${g.url}/v0/calls`, {
        method: 'POST',
        body: { mandate: 'alice/test', agent: 'a2a/asker', input: {} },
        until: answering.until,
      });
      expect((await answering.answered()) as { status: number }).toMatchObject({ status: 202 });
      expect(r.events.map((e) => e.event)).toEqual(['queued', 'running', 'input_required', 'input_provided', 'completed']);
      expect(r.events[2]!.data).toMatchObject({ request: { message: 'which name?', schema: { required: ['name'] } } });
      expect(r.events.at(-1)!.data, JSON.stringify(r.events.at(-1)!.data)).toMatchObject({
        status: 'succeeded',
        output: { hello: 'Ada' },
        receipt: { billed: true, cost: { own: '0.02' } },
      });
      expect(a.received).toHaveLength(2);
      expect(a.received[1]!.taskId).not.toBe('');
    });
  });

  it('a streamed call cut by the budget: the chunks delivered, per_unit billed for them (ended_by: budget), the task cancelled', async () => {
    const a = await agentServer(streamsPages(10), { streaming: true });
    const dir = await registryWith(
      'pages',
      manifest('pages', a.url, [
        'interface:',
        '  input: { type: object }',
        '  output: { type: object }',
        '  stream:',
        '    chunk: { type: object, required: [page] }',
        'pricing: { model: per_unit, currency: EUR, amount: "0.01", unit: page, max: "1.00" }',
      ]),
    );
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['a2a/*'] } });
      const r = await readEvents(`${g.url}/v0/calls`, { method: 'POST', body: { mandate: 'alice/test', agent: 'a2a/pages', input: {}, max_cost: '0.03' } });
      expect(r.events.filter((e) => e.event === 'output.chunk').map((e) => e.data)).toEqual(
        [0, 1, 2].map((i) => ({ seq: i, data: { page: i + 1 }, units_so_far: i + 1 })),
      );
      expect(r.events.at(-1)!.data.receipt).toMatchObject({
        status: 'failed',
        error: 'budget_reached',
        billed: true,
        cost: { own: '0.03' },
        delivered: { chunks: 3, units: '3' },
        ended_by: 'budget',
      });
      expect((await g.get<any>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.03', reserved: '0.00' });
      const end = Date.now() + 3_000;
      while (a.cancels.length === 0 && Date.now() < end) await new Promise((res) => setTimeout(res, 20));
      expect(a.cancels).toHaveLength(1);
    });
  });

  it('a delegated run: a node orchestrator hires an A2A agent through ctx.call, and the receipt tree shows it', async () => {
    const a = await agentServer(completes);
    const dir = await registryWith(
      'echo',
      manifest('echo', a.url, [
        'interface: { input: { type: object }, output: { type: object, required: [echo] } }',
        'pricing: { model: per_run, currency: EUR, amount: "0.02" }',
      ]),
    );
    await mkdir(path.join(dir, 'boss'));
    await writeFile(
      path.join(dir, 'boss', 'holon.yaml'),
      [
        'id: a2a/boss',
        'version: 1.0.0',
        'summary: hires an A2A agent',
        'capabilities: [test.boss]',
        'license: MIT',
        'interface: { input: { type: object }, output: { type: object } }',
        'pricing: { model: per_run, currency: EUR, amount: "0.01" }',
        'calls: [{ agent: "a2a/echo", max_cost: "0.05" }]',
        'downstream: { mode: passthrough, cap: "0.05" }',
        'runtime: { kind: node, limits: { timeout_s: 20 } }',
        '',
      ].join('\n'),
    );
    await writeFile(
      path.join(dir, 'boss', 'agent.mjs'),
      "export default async function run(input, ctx) {\n  const r = await ctx.call('a2a/echo', { text: input.text });\n  return { inner: r.ok ? r.output : null };\n}\n",
    );
    await useAudited(await startTestGateway({ config: { registryDirs: [dir] } }), async (g) => {
      await g.mandate({ allow: { agents: ['a2a/*'] } });
      const r = await g.post<any>('/v0/calls', { mandate: 'alice/test', agent: 'a2a/boss', input: { text: 'up' } });
      expect(r.status).toBe(200);
      expect(r.body.output).toEqual({ inner: { echo: { text: 'up' } } });
      const tree = r.body.receipt;
      expect(tree).toMatchObject({ agent: 'a2a/boss@1.0.0', status: 'succeeded', cost: { own: '0.01', downstream: '0.02', total: '0.03' } });
      expect(tree.children).toHaveLength(1);
      expect(tree.children[0]).toMatchObject({ agent: 'a2a/echo@1.0.0', status: 'succeeded', billed: true, cost: { own: '0.02' }, parent: tree.id });
      // The A2A agent was told which call it serves: the child's; it declares no calls of its own, so no delegation token.
      expect(a.received[0]!.metadata).toMatchObject({ 'holon.call_id': tree.children[0].id });
      expect(a.received[0]!.metadata?.['holon.delegation']).toBeUndefined();
    });
  });
});
