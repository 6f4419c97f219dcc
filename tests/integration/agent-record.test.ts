/**
 * The Agent Record (gateway.md §7: computed from `call_events`; §6 and manifest.md §6: declarations shown as
 * attested), through `GET /v0/agents/…` and search, on a real gateway.
 *
 * Real calls check that what the gateway measures lands in the record; synthetic `call_events` rows (known
 * latencies, costs, dates beyond 30 days, another currency, a version no longer listed) check the exact
 * figures: nearest-rank percentiles (percentile_disc), the 30-day window, counts by error code, and the cost
 * per successful run rounded up to the micro-unit.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test as base } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { insertRuns, type SyntheticRun } from '../support/synthetic-runs.js';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import type { Answer, Schema } from '../support/http.js';

const NOTE = 'declared by the author, not verified by Holon';

type Event = Omit<SyntheticRun, 'agentId'>;

/** History written straight into the tables (tests/support/synthetic-runs.ts), each run paid by its `payer`. */
const insertEvents = (g: TestGateway, agentId: string, events: Event[]): Promise<void> =>
  insertRuns(
    g.db.knex,
    events.map((e) => ({ agentId, ...e })),
  );

function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

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

describe('the Agent Record from real calls', () => {
  test('flaky: runs, successes, billed failures, errors by code, latencies as measured', async ({ gateway: g }) => {
    await g.mandate({});
    const modes = ['ok', 'ok', 'declared_billed', 'declared_unbilled', 'crash'];
    for (const mode of modes) await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode } });
    for (let i = 0; i < 2; i++) {
      expect((await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } })).status).toBe(200);
    }
    const latencies = (await g.db.knex('call_events').where({ agent_id: 'examples/flaky' }).select('latency_ms')).map((r) => Number(r.latency_ms));
    expect(latencies).toHaveLength(5);

    const one = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/flaky');
    expect(one.status).toBe(200);
    // 2 successes and 1 billed declared error (charge_on attempt) at 0.01: 0.03 for 2 successes = 0.015 each
    const window = {
      runs: 5,
      successes: 2,
      payers: 1,
      counted_payers: 1,
      success_rate: 0.4,
      latency_ms: { p50: nearestRank(latencies, 0.5), p95: nearestRank(latencies, 0.95) },
      currency: 'EUR',
      billed_total: '0.03',
      cost_per_successful_run: '0.015',
      errors: { agent_error: 1, not_found: 1, partial: 1 },
    };
    expect(one.body.records).toEqual({
      version: { last_30_days: window, all_time: window },
      agent: { last_30_days: window, all_time: window },
    });
    expect(one.body.record).toEqual({
      runs: 5,
      successes: 2,
      payers: 1,
      counted_payers: 1,
      success_rate: 0.4,
      latency_p50_ms: window.latency_ms.p50,
      cost_per_successful_run: '0.015',
      currency: 'EUR',
    });
    expect(one.body.versions).toEqual([{ version: '1.0.0', record: one.body.record, records: { last_30_days: window, all_time: window }, evaluation: 'none' }]);
    expect(one.body.data).toEqual({ attested: true, retention: 'none', region: null, training: false, subprocessors: null, note: NOTE });
    expect(one.body.runtime).toEqual({ kind: 'node', attested: false });

    // search: one compact record per result, measured
    const all = await g.get<Answer<'searchAgents', 200>>('/v0/agents');
    const byId = new Map<string, any>(all.body.agents.map((a: any) => [a.id, a]));
    expect(byId.get('examples/flaky').record).toEqual(one.body.record);
    expect(byId.get('examples/echo-upper').record).toMatchObject({ runs: 2, successes: 2, success_rate: 1, cost_per_successful_run: '0.01', currency: 'EUR' });
    expect(byId.get('examples/echo-upper').record.latency_p50_ms).toEqual(expect.any(Number));
    expect(byId.get('examples/word-count').record).toEqual({
      runs: 0,
      successes: 0,
      payers: 0,
      counted_payers: 0,
      success_rate: null,
      latency_p50_ms: null,
      cost_per_successful_run: null,
      currency: null,
    });
    for (const a of all.body.agents) expect(a.data).toMatchObject({ attested: true, note: NOTE });

    // search under a mandate, ranked by capability: the measured record beside the ranking estimate
    const ranked = await g.get<Schema<'MandateSearch'>>('/v0/agents?capability=test.flaky&mandate=alice/test');
    expect(ranked.status).toBe(200);
    expect(ranked.body.agents[0]).toMatchObject({ id: 'examples/flaky', record: one.body.record, cost_per_successful_run: expect.any(String) });
    const filtered = await g.get<Schema<'MandateSearch'>>('/v0/agents?q=flaky&mandate=alice/test');
    expect(filtered.body.agents[0]).toMatchObject({ id: 'examples/flaky', record: one.body.record });
  });
});

describe('the Agent Record from known events', () => {
  test('exact percentiles, the 30-day window, errors by code, cost per success rounded up, currencies', async ({ gateway: g }) => {
    const recent: Event[] = [];
    // last 30 days, examples/word-count@1.0.0: latencies 10..100; 7 successes billing exactly 1.00 in all;
    // 2 over_budget and 1 timeout, unbilled.
    const successCosts = [142_857, 142_857, 142_857, 142_857, 142_857, 142_857, 142_858];
    for (let i = 0; i < 10; i++) {
      const latency = (i + 1) * 10;
      const payer = `payer-${i % 3}`; // three distinct payers in the window
      if (i < 7) recent.push({ version: '1.0.0', status: 'succeeded', latency, cost: successCosts[i]!, daysAgo: i * 3 + 0.5, payer });
      else recent.push({ version: '1.0.0', status: 'failed', code: i < 9 ? 'over_budget' : 'timeout', latency, daysAgo: i * 3 + 0.5, payer });
    }
    expect(Math.max(...recent.map((e) => e.daysAgo ?? 0))).toBeLessThan(29); // 27.5 days: inside the window
    // older than 30 days: latencies 1000..10000; 9 successes at 0.01, 1 agent_error
    const old: Event[] = [];
    for (let i = 0; i < 10; i++) {
      old.push({
        version: '1.0.0',
        status: i === 9 ? 'failed' : 'succeeded',
        code: i === 9 ? 'agent_error' : undefined,
        latency: (i + 1) * 1000,
        cost: i === 9 ? 0 : 10_000,
        daysAgo: 30.05 + i * 10,
        payer: i < 5 ? 'payer-0' : 'payer-3', // one payer seen in the window, one new
      });
    }
    // runs its author paid for (the account owning the namespace `examples`): billed, never counted
    const authors: Event[] = [
      { version: '1.0.0', status: 'succeeded', latency: 1, cost: 10_000, daysAgo: 1, payer: 'examples' },
      { version: '0.9.0', status: 'succeeded', latency: 1, cost: 10_000, daysAgo: 70, payer: 'examples' },
    ];
    // a version no longer listed, settled in USD long ago: counts for the agent as a whole only
    const unlisted: Event[] = [
      { version: '0.9.0', status: 'succeeded', latency: 7, cost: 50_000, currency: 'USD', daysAgo: 60, payer: 'payer-usd' },
      { version: '0.9.0', status: 'succeeded', latency: 7, cost: 50_000, currency: 'USD', daysAgo: 61, payer: 'payer-usd' },
      { version: '0.9.0', status: 'failed', code: 'agent_error', latency: 7, currency: 'USD', daysAgo: 62, payer: 'payer-0' },
    ];
    // another agent's events never leak in
    const other: Event[] = [{ version: '1.0.0', status: 'failed', code: 'other_code', latency: 1, daysAgo: 1 }];
    await insertEvents(g, 'examples/word-count', [...recent, ...old, ...unlisted, ...authors]);
    await insertEvents(g, 'examples/slow', other);

    const one = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/word-count');
    expect(one.status).toBe(200);
    const last30 = {
      runs: 10,
      successes: 7,
      payers: 3,
      counted_payers: 3,
      success_rate: 0.7,
      latency_ms: { p50: 50, p95: 100 }, // 5th and 10th of 10
      currency: 'EUR',
      billed_total: '1.00',
      cost_per_successful_run: '0.142858', // 1.00 / 7 = 0.142857142… rounded up
      errors: { over_budget: 2, timeout: 1 },
    };
    const versionAllTime = {
      runs: 20,
      successes: 16,
      payers: 4, // payer-0..2 in the window, payer-3 before it
      counted_payers: 4,

      success_rate: 0.8,
      latency_ms: { p50: 100, p95: 9000 }, // 10th and 19th of 20
      currency: 'EUR',
      billed_total: '1.09',
      cost_per_successful_run: '0.068125', // 1.09 / 16, exact
      errors: { agent_error: 1, over_budget: 2, timeout: 1 },
    };
    const agentAllTime = {
      runs: 23,
      successes: 18,
      payers: 5, // and payer-usd, of a version no longer listed
      counted_payers: 5,
      success_rate: 0.7826,
      latency_ms: { p50: 90, p95: 9000 }, // 12th and 22nd of 7,7,7,10..100,1000..10000
      // most runs were settled in EUR: the money fields are in EUR; each currency on its own below
      currency: 'EUR',
      billed_total: '1.09',
      cost_per_successful_run: '0.068125',
      errors: { agent_error: 2, over_budget: 2, timeout: 1 },
      by_currency: [
        { currency: 'EUR', runs: 20, successes: 16, billed_total: '1.09', cost_per_successful_run: '0.068125' },
        { currency: 'USD', runs: 3, successes: 2, billed_total: '0.10', cost_per_successful_run: '0.05' },
      ],
    };
    expect(one.body.records).toEqual({
      version: { last_30_days: last30, all_time: versionAllTime },
      agent: { last_30_days: last30, all_time: agentAllTime },
    });
    expect(one.body.record).toEqual({
      runs: 20,
      successes: 16,
      payers: 4,
      counted_payers: 4,
      success_rate: 0.8,
      latency_p50_ms: 100,
      cost_per_successful_run: '0.068125',
      currency: 'EUR',
    });
    // only listed versions are listed
    expect(one.body.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);

    const found = await g.get<Answer<'searchAgents', 200>>('/v0/agents?q=word-count');
    expect(found.body.agents).toHaveLength(1);
    expect(found.body.agents[0]!.record).toEqual(one.body.record);

    // a window with runs but no success: rate 0, no cost per success; an agent without runs: empty
    await insertEvents(g, 'examples/quote-translate', [
      { version: '1.0.0', status: 'failed', code: 'unsupported_language', latency: 3, daysAgo: 40 },
      { version: '1.0.0', status: 'failed', code: 'unsupported_language', latency: 5, daysAgo: 45 },
    ]);
    const failing = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/quote-translate');
    expect(failing.body.records.version).toEqual({
      last_30_days: EMPTY_WINDOW,
      all_time: {
        runs: 2,
        successes: 0,
        payers: 1,
        counted_payers: 1,
        success_rate: 0,
        latency_ms: { p50: 3, p95: 5 },
        currency: 'EUR',
        billed_total: '0.00',
        cost_per_successful_run: null,
        errors: { unsupported_language: 2 },
      },
    });
    const untouched = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/echo-upper');
    expect(untouched.body.records).toEqual({
      version: { last_30_days: EMPTY_WINDOW, all_time: EMPTY_WINDOW },
      agent: { last_30_days: EMPTY_WINDOW, all_time: EMPTY_WINDOW },
    });
    expect(untouched.body.record).toEqual({
      runs: 0,
      successes: 0,
      payers: 0,
      counted_payers: 0,
      success_rate: null,
      latency_p50_ms: null,
      cost_per_successful_run: null,
      currency: null,
    });
  });
});

// Several listed versions and remote runtimes need agents the shared registries do not have: a temporary
// registry beside them.
const AGENT_MJS = `export default async function run(input, ctx) {
  if (input.fail) throw ctx.error('nope', 'asked to fail');
  return { ok: true };
}
`;

function multi(version: string): string {
  return `id: rec/multi
version: ${version}
summary: A node agent with several listed versions
capabilities: [test.multi]
license: MIT
interface:
  input: { type: object, properties: { fail: { type: boolean } } }
  output: { type: object }
  errors:
    nope: { description: Asked to fail, billed: false }
pricing: { model: per_run, currency: EUR, amount: "0.02" }
runtime: { kind: node, limits: { timeout_s: 10 } }
`;
}

const HOOK = `id: rec/hook
version: 1.0.0
summary: A webhook agent, never called here
capabilities: [test.hook]
license: proprietary
interface:
  input: { type: object }
  output: { type: object }
pricing: { model: per_run, currency: EUR, amount: "0.01" }
runtime: { kind: webhook, endpoint: "https://hook.example.org/run" }
data:
  retention: 30d
  region: [eu, us]
  training: false
  subprocessors: [Example Cloud]
`;

const MCP = `id: rec/remote
version: 1.0.0
summary: An MCP agent that declares no data policy
capabilities: [test.remote]
license: proprietary
interface:
  input: { type: object }
  output: { type: object }
pricing: { model: per_run, currency: EUR, amount: "0.01" }
runtime: { kind: mcp, endpoint: "https://mcp.example.org/mcp", tool: run }
`;

const extended = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => {
    const dir = await mkdtemp(join(tmpdir(), 'holon-records-'));
    for (const v of ['1.0.0', '1.1.0', '2.0.0']) {
      await mkdir(join(dir, `multi-${v}`));
      await writeFile(join(dir, `multi-${v}`, 'holon.yaml'), multi(v));
      await writeFile(join(dir, `multi-${v}`, 'agent.mjs'), AGENT_MJS);
    }
    await mkdir(join(dir, 'hook'));
    await writeFile(join(dir, 'hook', 'holon.yaml'), HOOK);
    await mkdir(join(dir, 'remote'));
    await writeFile(join(dir, 'remote', 'holon.yaml'), MCP);
    try {
      await useAudited(await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, dir] } }), use);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
});

describe('several versions, remote runtimes', () => {
  extended('each listed version has its own record; the agent sums them all', async ({ gateway: g }) => {
    await g.mandate({ allow: { agents: ['rec/*'] } });
    const call = async (agent: string, input: unknown, status: number) => {
      expect((await g.post('/v0/calls', { mandate: 'alice/test', agent, input })).status).toBe(status);
    };
    await call('rec/multi@~1.0.0', {}, 200);
    await call('rec/multi@~1.0.0', {}, 200);
    await call('rec/multi@~1.0.0', { fail: true }, 502);
    await call('rec/multi', {}, 200); // 2.0.0
    // nothing ran on 1.1.0; 2.0.0 also has an old synthetic run
    await insertEvents(g, 'rec/multi', [{ version: '2.0.0', status: 'succeeded', latency: 1, cost: 20_001, daysAgo: 45 }]);

    const latest = await g.get<Answer<'describeAgent', 200>>('/v0/agents/rec/multi');
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({
      id: 'rec/multi',
      version: '2.0.0',
      record: { runs: 2, successes: 2, cost_per_successful_run: '0.020001', currency: 'EUR' },
    });
    expect(latest.body.records.version.last_30_days).toMatchObject({ runs: 1, successes: 1, billed_total: '0.02', cost_per_successful_run: '0.02' });
    expect(latest.body.records.version.all_time).toMatchObject({
      runs: 2,
      successes: 2,
      billed_total: '0.040001',
      cost_per_successful_run: '0.020001',
      errors: {},
    });
    expect(latest.body.records.agent.last_30_days).toMatchObject({
      runs: 4,
      successes: 3,
      success_rate: 0.75,
      billed_total: '0.06',
      cost_per_successful_run: '0.02',
      errors: { nope: 1 },
    });
    expect(latest.body.records.agent.all_time).toMatchObject({
      runs: 5,
      successes: 4,
      success_rate: 0.8,
      billed_total: '0.080001',
      cost_per_successful_run: '0.020001',
      errors: { nope: 1 },
    });
    const versions = new Map<string, any>(latest.body.versions.map((v: any) => [v.version, v]));
    expect([...versions.keys()]).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    expect(versions.get('2.0.0').records).toEqual(latest.body.records.version);
    expect(versions.get('1.1.0').records.all_time).toEqual(EMPTY_WINDOW);
    expect(versions.get('1.0.0').records.all_time).toMatchObject({
      runs: 3,
      successes: 2,
      success_rate: 0.6667,
      billed_total: '0.04',
      cost_per_successful_run: '0.02',
      errors: { nope: 1 },
    });
    expect(versions.get('1.0.0').record).toMatchObject({ runs: 3, successes: 2, success_rate: 0.6667, cost_per_successful_run: '0.02' });

    const pinned = await g.get<Answer<'describeAgent', 200>>('/v0/agents/rec/multi@1.0.0');
    expect(pinned.body.record).toEqual(versions.get('1.0.0').record);
    expect(pinned.body.records).toEqual({ version: versions.get('1.0.0').records, agent: latest.body.records.agent });
  });

  extended('data policy and remote runtimes are shown as attested', async ({ gateway: g }) => {
    const hook = await g.get<Answer<'describeAgent', 200>>('/v0/agents/rec/hook');
    expect(hook.body.runtime).toEqual({ kind: 'webhook', attested: true, note: expect.stringContaining("author's server") });
    expect(hook.body.data).toEqual({ attested: true, retention: '30d', region: ['eu', 'us'], training: false, subprocessors: ['Example Cloud'], note: NOTE });
    const remote = await g.get<Answer<'describeAgent', 200>>('/v0/agents/rec/remote');
    expect(remote.body.runtime).toMatchObject({ kind: 'mcp', attested: true });
    expect(remote.body.data).toEqual({ attested: true, retention: null, region: null, training: null, subprocessors: null, note: NOTE });
    const search = await g.get<Answer<'searchAgents', 200>>('/v0/agents?q=rec/');
    const byId = new Map<string, any>(search.body.agents.map((a: any) => [a.id, a]));
    expect(byId.get('rec/hook')).toMatchObject({ runtime: { kind: 'webhook', attested: true }, data: hook.body.data });
    expect(byId.get('rec/remote')).toMatchObject({ runtime: { kind: 'mcp', attested: true } });
    expect(byId.get('rec/multi')).toMatchObject({ version: '2.0.0', runtime: { kind: 'node', attested: false } });
  });
});
