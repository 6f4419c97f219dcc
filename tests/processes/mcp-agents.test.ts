/**
 * MCP agents behind the gateway (gateway.md §6, the Holon MCP agent profile), end to end: the reference host
 * (agents/host.mjs) serves real tools, a whole gateway on real Postgres and Redis calls them through its MCP
 * runtime, and the receipts and the ledger say what was paid. The ledger audit runs after every test.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAgentHost } from '../../agents/host.mjs';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import { AGENTS_DIR, manifestsPointingAt, MCP_FIXTURES_DIR, startChildHost } from '../support/mcp-agents.js';
import { poll } from '../support/poll.js';
import type { Schema, CallRan, Succeeded } from '../support/http.js';

const MANDATE = { allow: { agents: ['holon-labs/*', 'fixtures/*', 'examples/*'], capabilities: ['data.*', 'test.*', 'text.*'] } };

async function withHost(dir: string, use: (g: TestGateway) => Promise<void>): Promise<void> {
  const host = await startAgentHost({ port: 0, dir, log: () => {} });
  try {
    const registry = await manifestsPointingAt(dir, host.url);
    await useAudited(await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, registry], mcpMandate: 'alice/test' } }), use);
  } finally {
    await host.close();
  }
}

async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
}

/** Waits of this test: up to 10 s, every 20 ms. */
const SOON = { timeoutMs: 10_000, intervalMs: 20 };

const CSV = 'name,age,joined\nada,36,2021-04-01\nbob,,2022-01-15\n"smith, jo",41,2020-12-31\n';

describe('MCP agents behind the gateway', () => {
  test('holon-labs/csv-profile over MCP: profiled, billed per run, with its receipt; a declared unbilled error costs nothing', async () => {
    await withHost(AGENTS_DIR, async (g) => {
      await g.mandate(MANDATE);
      const r = await g.post<Succeeded<{ rows: number; columns: Array<{ name: string; type: string; nulls: number }> }>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'holon-labs/csv-profile',
        input: { csv: CSV },
      });
      expect(r.status).toBe(200);
      expect(r.body.output.rows).toBe(3);
      expect(r.body.output.columns.map((c: any) => [c.name, c.type, c.nulls])).toEqual([
        ['name', 'string', 0],
        ['age', 'integer', 1],
        ['joined', 'date', 0],
      ]);
      expect(r.body.receipt).toMatchObject({
        agent: 'holon-labs/csv-profile@1.0.0',
        status: 'succeeded',
        billed: true,
        cost: { own: '0.002', total: '0.002' },
      });
      expect(r.body.receipt.splits).toEqual([
        { to: 'holon', amount: '0.0002' },
        { to: 'holon-labs', amount: '0.0018' },
      ]);

      const empty = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'holon-labs/csv-profile', input: { csv: '' } });
      expect(empty.status).toBe(502);
      expect(empty.body.receipt).toMatchObject({ status: 'failed', error: 'empty_input', billed: false });
      expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.002', reserved: '0.00' });
    });
  });

  test('MCP both ways: an MCP client calls csv-profile through /mcp, and the gateway calls it over MCP', async () => {
    await withHost(AGENTS_DIR, async (g) => {
      await g.mandate(MANDATE);
      const client = new Client({ name: 'holon-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
      try {
        const found = (await client.callTool({ name: 'search_agents', arguments: { capability: 'data.profile' } })).structuredContent as any;
        expect(found.agents[0]).toMatchObject({ id: 'holon-labs/csv-profile', runtime: { kind: 'mcp', attested: true } });
        const r = await client.callTool({ name: 'call_agent', arguments: { capability: 'data.profile', input: { csv: CSV } } });
        const body = r.structuredContent as any;
        expect(body).toMatchObject({ status: 'succeeded', output: { rows: 3 }, receipt: { agent: 'holon-labs/csv-profile@1.0.0', billed: true } });
        const receipt = (await client.callTool({ name: 'get_receipt', arguments: { id: body.receipt.id } })).structuredContent as any;
        expect(receipt).toMatchObject({ id: body.receipt.id, cost: { total: '0.002' } });
      } finally {
        await client.close();
      }
    });
  });

  test('charge_on attempt: a declared billed error is billed with its units; an unbilled or unknown code is not', async () => {
    await withHost(MCP_FIXTURES_DIR, async (g) => {
      await g.mandate(MANDATE);
      const call = (input: unknown) => g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/mcp-attempt', input });
      const ok = await call({ units: 2 });
      expect(ok.body.receipt).toMatchObject({ status: 'succeeded', billed: true, cost: { total: '0.02' } });
      const billed = await call({ fail: 'quota_used', units: 3 });
      expect(billed.body.receipt).toMatchObject({ status: 'failed', error: 'quota_used', billed: true, cost: { total: '0.03' } });
      const unbilled = await call({ fail: 'bad_luck', units: 3 });
      expect(unbilled.body.receipt).toMatchObject({ status: 'failed', error: 'bad_luck', billed: false, cost: { total: '0.00' } });
      const unknown = await call({ fail: 'mystery_code', units: 3 });
      expect(unknown.body.receipt).toMatchObject({ status: 'failed', billed: false, cost: { total: '0.00' } });
      expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.05', reserved: '0.00' });
    });
  });

  test('a hanging MCP agent is cancelled at its hard timeout and sees the cancellation; nothing is billed', async () => {
    await withHost(MCP_FIXTURES_DIR, async (g) => {
      await g.mandate(MANDATE);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-mcp-hang-')), 'hang.log');
      const r = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/mcp-hang', input: { file } });
      expect(r.status).toBe(502);
      expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'timeout', billed: false });
      await poll(async () => (await lines(file)).includes('cancelled'), { what: 'the agent to see the cancellation', ...SOON });
      expect(await lines(file)).toEqual(['started', 'cancelled']);
      expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
    });
  });

  test("an MCP agent's server killed mid-call fails the call cleanly, unbilled; an unreachable one is runtime_unavailable", async () => {
    const host = await startChildHost(MCP_FIXTURES_DIR);
    try {
      const registry = await manifestsPointingAt(MCP_FIXTURES_DIR, host.url);
      await useAudited(await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, registry] } }), async (g) => {
        await g.mandate(MANDATE);
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-mcp-kill-')), 'hang.log');
        const pending = g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/mcp-hang', input: { file } });
        await poll(async () => (await lines(file)).includes('started'), { what: 'the agent to start', ...SOON });
        await host.stop();
        const r = await pending;
        expect(r.status).toBe(502);
        // The connection broke before the 3 s hard timeout: the agent failed, it did not time out.
        expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'agent_error', billed: false });

        const gone = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/mcp-attempt', input: {} });
        expect(gone.status).toBe(502);
        expect(gone.body.receipt).toMatchObject({ status: 'failed', error: 'runtime_unavailable', billed: false });
        expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
      });
    } finally {
      await host.stop();
    }
  });
});
