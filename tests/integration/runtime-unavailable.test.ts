/**
 * runtime_unavailable says which endpoint failed and how (shared/runtimes/remote.ts, shared/platform/net-errors.ts):
 * in the failed call's answer and in the runner's log line, naming the endpoint's origin and path, never its query
 * string (a token may ride there).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import { createRuntimes } from '../../shared/runtimes/index.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, TEST_REGISTRY, useAudited } from '../support/gateway.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import type { Schema } from '../support/http.js';

/** A registry directory with two webhook agents: one on a port nothing listens on, one on a name that never resolves. */
async function unreachableAgents(port: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-unreachable-'));
  const agent = async (name: string, endpoint: string) => {
    await mkdir(path.join(dir, name));
    await writeFile(
      path.join(dir, name, 'holon.yaml'),
      `id: fixtures/${name}\nversion: 1.0.0\nsummary: Never answers\ncapabilities: [test.gone]\nlicense: MIT\n` +
        'interface: { input: { type: object }, output: { type: object } }\n' +
        'pricing: { model: per_run, currency: EUR, amount: "0.01" }\n' +
        `runtime: { kind: webhook, endpoint: "${endpoint}", limits: { timeout_s: 10 } }\n`,
    );
  };
  await agent('refused', `http://127.0.0.1:${port}/hook?token=sekrit`);
  await agent('nowhere', 'http://no-such-host.invalid/hook?token=sekrit');
  return dir;
}

describe('runtime_unavailable names the endpoint and the cause', () => {
  test("in the failed call's answer: connection refused, the name did not resolve; never the query string", async () => {
    const port = await freePort();
    const registry = await unreachableAgents(port);
    await useAudited(await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, registry] } }), async (g) => {
      await g.mandate({});
      const refused = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/refused', input: {} });
      expect(refused.status).toBe(502);
      expect(refused.body.receipt).toMatchObject({ status: 'failed', error: 'runtime_unavailable', billed: false });
      expect(refused.body.error).toEqual({
        code: 'runtime_unavailable',
        message: `the agent failed: runtime_unavailable — could not reach http://127.0.0.1:${port}/hook: connection refused (ECONNREFUSED); nothing was charged`,
      });

      const nowhere = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/nowhere', input: {} });
      expect(nowhere.status).toBe(502);
      expect(nowhere.body.error.message).toMatch(/could not reach http:\/\/no-such-host\.invalid\/hook: the name did not resolve.* \((ENOTFOUND|EAI_AGAIN)\)/);
      for (const r of [refused, nowhere]) expect(JSON.stringify(r.body)).not.toContain('sekrit');
    });
  });

  test("in the runner's log line, at warn", async () => {
    const port = await freePort();
    const registry = await unreachableAgents(port);
    // No runner here: this test runs the call itself, with a logger it reads.
    await useAudited(await startTestGateway({ roles: ['api', 'settler'], config: { registryDirs: [...TEST_REGISTRY, registry] } }), async (g) => {
      await g.mandate({});
      const queued = await g.post<Schema<'CallQueued'>>(
        '/v0/calls',
        { mandate: 'alice/test', agent: 'fixtures/refused', input: {} },
        { prefer: 'respond-async' },
      );
      expect(queued.status).toBe(202);
      const lines: Array<Record<string, unknown>> = [];
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      await createCallEngine({ ...g.gw.context, log }, { settlesHere: g.gw.engine.settlesHere }).run(queued.body.call.id, { runtimes: createRuntimes() });
      const line = lines.find((l) => l.code === 'runtime_unavailable');
      expect(line, JSON.stringify(lines)).toMatchObject({
        level: 40,
        call: queued.body.call.id,
        agent: 'fixtures/refused@1.0.0',
        msg: `runtime_unavailable: could not reach http://127.0.0.1:${port}/hook: connection refused (ECONNREFUSED)`,
      });
      expect(JSON.stringify(lines)).not.toContain('sekrit');
    });
  });
});
