/**
 * holon-labs/sec-company end to end: the reference host (agents/host.mjs) serving it against a fake EDGAR on loopback
 * (tests/support/fake-edgar.ts), a whole gateway on real Postgres and Redis calling it over MCP: a lookup billed per
 * run with its receipt, an unknown company unbilled; and the gateway lists it only with HOLON_SEC_CONTACT set and the
 * agent not in HOLON_EXCLUDE (shared/registry/dev-registry.ts reads the gateway's environment, this process's). The
 * ledger audit runs after every gateway.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAgentHost, type AgentHost } from '../../agents/host.mjs';
import type { Config } from '../../shared/platform/config.js';
import { startFakeEdgar, type FakeEdgar } from '../support/fake-edgar.js';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import { AGENTS_DIR, manifestsPointingAt } from '../support/mcp-agents.js';
import type { Schema, Answer, RefusalWithReceipt, CallRan, Succeeded } from '../support/http.js';

const MANDATE = { allow: { agents: ['holon-labs/*'], capabilities: ['data.*'] } };
const CONTACT = 'filings-desk@holon.example';

let fake: FakeEdgar;
let host: AgentHost;
let registry: string;

beforeAll(async () => {
  fake = await startFakeEdgar();
  host = await startAgentHost({ port: 0, env: fake.env(CONTACT), log: () => {} });
  registry = await manifestsPointingAt(AGENTS_DIR, host.url);
});

afterAll(async () => {
  await host?.close();
  await fake?.stop();
});

/** A gateway whose registry holds agents/ pointed at the host, with HOLON_SEC_CONTACT as given (its config's `secContact`). */
async function withGateway(contact: string | undefined, config: Partial<Config>, use: (g: TestGateway) => Promise<void>): Promise<void> {
  const secContact = contact === undefined ? {} : { secContact: contact };
  await useAudited(await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, registry], ...secContact, ...config } }), use);
}

describe('holon-labs/sec-company behind the gateway', () => {
  test('a lookup is billed per run, 0.001 EUR, with its receipt; an unknown company is not billed', async () => {
    await withGateway(CONTACT, { exclude: ['holon-labs/summarize'] }, async (g) => {
      await g.mandate(MANDATE);
      const r = await g.post<Succeeded<{ filings: Array<{ accession_number: string }> }>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'holon-labs/sec-company',
        input: { company: 'AAPL', limit: 2 },
      });
      expect(r.status).toBe(200);
      expect(r.body.output).toMatchObject({ cik: '0000320193', name: 'Apple Inc.', matched_by: 'ticker' });
      expect(r.body.output.filings.map((f: { accession_number: string }) => f.accession_number)).toEqual(['0000320193-24-000123', '0000320193-24-000120']);
      expect(r.body.receipt).toMatchObject({
        agent: 'holon-labs/sec-company@1.0.0',
        status: 'succeeded',
        billed: true,
        cost: { own: '0.001', total: '0.001' },
      });
      expect(r.body.receipt.splits).toEqual([
        { to: 'holon', amount: '0.0001' },
        { to: 'holon-labs', amount: '0.0009' },
      ]);
      for (const request of fake.requests) expect(request.userAgent).toBe(`Holon ${CONTACT}`);

      const unknown = await g.post<Schema<'CallFailed'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'holon-labs/sec-company',
        input: { company: 'Zzyzx Quantum Widgets' },
      });
      expect(unknown.status).toBe(502);
      expect(unknown.body.receipt).toMatchObject({ status: 'failed', error: 'unknown_company', billed: false, cost: { total: '0.00' } });

      // Found by its capability too.
      const byCapability = await g.post<CallRan>('/v0/calls', {
        mandate: 'alice/test',
        capability: 'data.company.filings',
        input: { company: 'hathaway', limit: 1 },
      });
      expect(byCapability.body.receipt).toMatchObject({ agent: 'holon-labs/sec-company@1.0.0', billed: true });
      expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.002', reserved: '0.00' });
    });
  });

  test('not listed without HOLON_SEC_CONTACT, nor while HOLON_EXCLUDE names it (the default)', async () => {
    const listed = async (g: TestGateway) => {
      const r = await g.get<Answer<'describeAgent', 200>>('/v0/agents/holon-labs/sec-company');
      return r.status;
    };
    await withGateway(undefined, { exclude: ['holon-labs/summarize'] }, async (g) => {
      expect(await listed(g)).toBe(404);
      expect((await g.get('/v0/agents/holon-labs/csv-profile')).status).toBe(200);
      await g.mandate(MANDATE);
      const r = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'holon-labs/sec-company', input: { company: 'AAPL' } });
      expect(r.status).toBe(404);
      expect(r.body.error).toEqual({ code: 'unknown_agent', message: 'no agent holon-labs/sec-company is listed' });
      expect(r.body.receipt).toMatchObject({ status: 'denied', billed: false });
    });
    await withGateway(CONTACT, {}, async (g) => {
      expect(await listed(g)).toBe(404);
    });
    await withGateway(CONTACT, { exclude: [] }, async (g) => {
      expect(await listed(g)).toBe(200);
    });
  });
});
