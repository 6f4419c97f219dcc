/**
 * HOLON_RECORDS (shared/catalogue/sample-records.ts; gateway.md §7 "off by default: sample records are not
 * measurements"), on a real gateway: a sample is shown beside an agent's measured record, labelled, only while the
 * agent has no measured run; it disappears with the first paid call; it never reaches search, ranking or admission.
 *
 * The samples lie on purpose: examples/echo-upper's says it almost always fails (5% of 5000 runs), fixtures/fork's
 * that it never fails and costs nothing. Counted, either would deny echo-upper under `require.min_success_rate`
 * and rank the fork first for text.transform.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test as base } from 'vitest';
import { getAgent, type McpDeps } from '../../services/api/mcp/tools.js';
import { SAMPLE_NOTE } from '../../shared/catalogue/sample-records.js';
import { gatewayTest } from '../support/gateway-fixture.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import type { Schema, Answer, CallRan } from '../support/http.js';

const SAMPLES = {
  'examples/echo-upper': { runs: 5000, success_rate: '0.05', latency_ms: { p50: 9000, p95: 30000 } },
  'fixtures/fork': { runs: 10000, success_rate: 1, latency_ms: { p50: 5, p95: 9 }, cost_per_successful_run: '0.000001', currency: 'EUR' },
  'nobody/unlisted': { runs: 3, success_rate: '1', latency_ms: { p50: 1, p95: 1 } },
};

const ECHO_SAMPLE = {
  source: 'sample',
  note: SAMPLE_NOTE,
  runs: 5000,
  success_rate: 0.05,
  latency_ms: { p50: 9000, p95: 30000 },
  currency: 'EUR',
  cost_per_successful_run: null,
};
const FORK_SAMPLE = {
  source: 'sample',
  note: SAMPLE_NOTE,
  runs: 10000,
  success_rate: 1,
  latency_ms: { p50: 5, p95: 9 },
  currency: 'EUR',
  cost_per_successful_run: '0.000001',
};

const EMPTY_WINDOW = {
  runs: 0,
  successes: 0,
  payers: 0,
  counted_payers: 0, // a dev gateway: every payer counts
  success_rate: null,
  latency_ms: { p50: null, p95: null },
  currency: null,
  billed_total: '0.00',
  cost_per_successful_run: null,
  errors: {},
};

/** A mandate that would deny an agent whose record (of 20+ runs) succeeds less than 90% of the time. */
const STRICT = { require: { min_success_rate: '0.9' } };

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'holon-catalog-records-'));
  file = path.join(dir, 'records.json');
  await writeFile(file, JSON.stringify(SAMPLES));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function catalog(g: TestGateway): Promise<Map<string, any>> {
  const page = await g.get<Schema<'CatalogPage'>>('/v0/catalog?limit=100');
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  expect(page.body.next_cursor).toBeNull();
  return new Map((page.body.agents as any[]).map((a) => [a.id, a]));
}

/** The ranked search of text.transform under the strict mandate (what submit.ts ranks with, from measurements). */
const ranked = (g: TestGateway) => g.get<Schema<'MandateSearch'>>('/v0/agents?capability=text.transform&mandate=alice/test');

base('with HOLON_RECORDS: the labelled sample while no run is measured, the measured record from the first paid call', async () => {
  const plain = await startTestGateway();
  try {
    await useAudited(await startTestGateway({ config: { recordsFile: file } }), async (g) => {
      await g.mandate(STRICT);
      await plain.mandate(STRICT);

      // ---- GET /v0/catalog: the sample beside the (empty) measured record, never in it
      let entries = await catalog(g);
      const echo = entries.get('examples/echo-upper');
      expect(echo.sample).toEqual(ECHO_SAMPLE);
      expect(echo.measured).toEqual({ all_time: EMPTY_WINDOW, last_30_days: EMPTY_WINDOW });
      expect(echo.record).toMatchObject({ runs: 0, successes: 0, success_rate: null });
      expect(echo.versions).toEqual([{ version: '1.0.0', record: expect.objectContaining({ runs: 0 }), evaluation: 'none' }]);
      expect(entries.get('fixtures/fork').sample).toEqual(FORK_SAMPLE);
      // An agent absent from the file: its measured record only. An id in the file but not listed: nowhere.
      const wordCount = entries.get('examples/word-count');
      expect(wordCount).not.toHaveProperty('sample');
      expect(wordCount.measured.all_time).toEqual(EMPTY_WINDOW);
      expect(entries.has('nobody/unlisted')).toBe(false);
      expect([...entries.values()].filter((a) => 'sample' in a).map((a) => a.id)).toEqual(['examples/echo-upper', 'fixtures/fork']);

      // ---- GET /v0/agents/{ns}/{name}, and MCP get_agent (the same view): the sample, labelled the same way
      const one = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/echo-upper');
      expect(one.status).toBe(200);
      expect(one.body.sample).toEqual(ECHO_SAMPLE);
      expect(one.body.records.agent.all_time).toEqual(EMPTY_WINDOW);
      expect(one.body.record.runs).toBe(0);
      const viaMcp = await getAgent({ ctx: g.gw.context } as McpDeps, { mandateId: 'alice/test', askInClient: false }, { id: 'fixtures/fork' });
      expect(viaMcp.structured.sample).toEqual(FORK_SAMPLE);

      // ---- search, ranking, admission: exactly what a gateway without samples answers
      const search = await ranked(g);
      expect(search.status, JSON.stringify(search.body)).toBe(200);
      expect(search.body).toEqual((await ranked(plain)).body);
      expect(search.body.agents.map((a: any) => a.id)).toEqual(['examples/echo-upper', 'fixtures/fork']);
      expect(search.body.agents.map((a: any) => a.cost_per_successful_run)).toEqual(['0.02', '0.07']);
      expect(search.body.denied).toEqual([]);
      for (const a of search.body.agents) expect(a).not.toHaveProperty('sample');
      expect((await g.get('/v0/agents?q=echo')).body).toEqual((await plain.get('/v0/agents?q=echo')).body);

      // ---- one paid call: by capability, so ranking and require.min_success_rate decide on measurements
      const paid = await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', capability: 'text.transform', input: { text: 'x' } });
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      expect(paid.body.receipt).toMatchObject({ agent: 'examples/echo-upper@1.0.0', status: 'succeeded' });

      // ---- the measured record now, and no sample; the fork, still unmeasured, keeps its sample
      entries = await catalog(g);
      const measured = entries.get('examples/echo-upper');
      expect(measured).not.toHaveProperty('sample');
      expect(measured.measured.all_time).toMatchObject({ runs: 1, successes: 1, success_rate: 1, currency: 'EUR', cost_per_successful_run: '0.01' });
      expect(measured.record).toMatchObject({ runs: 1, successes: 1 });
      expect(entries.get('fixtures/fork').sample).toEqual(FORK_SAMPLE);
      const after = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/echo-upper');
      expect(after.body).not.toHaveProperty('sample');
      expect(after.body.records.agent.all_time).toMatchObject({ runs: 1, successes: 1 });
    });
  } finally {
    await plain.stop();
  }
});

gatewayTest('without HOLON_RECORDS: no sample anywhere', async ({ gateway: g }) => {
  expect(g.gw.config.recordsFile).toBeUndefined();
  expect(g.gw.context.settings.sampleRecords).toBeUndefined();
  const entries = await catalog(g);
  expect(entries.size).toBeGreaterThan(0);
  for (const a of entries.values()) expect(a).not.toHaveProperty('sample');
  const one = await g.get('/v0/agents/examples/echo-upper');
  expect(one.status).toBe(200);
  expect(one.body).not.toHaveProperty('sample');
});
