/**
 * Searching the catalogue with a sentence (shared/catalogue/text-search.ts): GET /v0/agents?q= and MCP search_agents
 * match ANY word of the query, stemmed, over id, name, summary, description, capabilities and examples, ranked by
 * relevance, then by cost per successful run. A table of natural-language queries, each with the agent it must return
 * in its top 3, runs against both surfaces and prints its hit rate, beside the hit rate of the substring match the
 * catalogue used before (replicated here, so both figures are printed on every run). The same answers on Postgres
 * and PGlite; every other filter (capability, mandate, HOLON_EXCLUDE) as before; no query answers a 5xx.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, test as base } from 'vitest';
import { searchCatalogue } from '../../shared/catalogue/catalogue.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import type { AgentVersion } from '../../shared/registry/agent-version.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import { createRegistry, type Registry } from '../../shared/registry/registry.js';
import { createLogger } from '../../shared/platform/log.js';
import { createTestDatabase } from '../support/db.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { query, type Answer, type Schema } from '../support/http.js';
import { buildManifest } from '../support/manifest-builder.js';

/** Every agent of agents/, examples/ and tests/fixtures/registry, summarize included; fixtures/looper excluded. */
const DIRS = ['agents', 'examples', 'tests/fixtures/registry'];
const EXCLUDE = ['fixtures/looper'];

/** A sentence someone would type, and the agent it must find among its first three. */
const QUERIES: ReadonlyArray<readonly [string, string]> = [
  ['profile this CSV', 'holon-labs/csv-profile'],
  ['count words', 'examples/word-count'],
  ['upper case', 'examples/echo-upper'],
  ['translate to french', 'examples/quote-translate'],
  ['summarize a document', 'holon-labs/summarize'],
  ['how many words are in my text', 'examples/word-count'],
  ['characters in a text', 'examples/word-count'],
  ['describe the columns of a table', 'holon-labs/csv-profile'],
  ['min and max of each column', 'holon-labs/csv-profile'],
  ['data profile', 'holon-labs/csv-profile'],
  ['convert text to upper case', 'examples/echo-upper'],
  ['a short summary of a long text', 'holon-labs/summarize'],
  ['summarise with Claude', 'holon-labs/summarize'],
  ['reverse the text', 'examples/quote-translate'],
  ['translate an invoice', 'examples/invoice-pipeline'],
  ['digest an invoice line', 'examples/invoice-digest'],
  ['wait some milliseconds', 'examples/slow'],
  ['demonstrate a hard timeout', 'examples/slow'],
  ['succeed or fail on demand', 'examples/flaky'],
  ['which outcomes are billed', 'examples/flaky'],
  ['quote the price', 'fixtures/quote'],
  ['priced in US dollars', 'fixtures/usd'],
  ['count invocations in a file', 'fixtures/counter'],
  ['a fork that pays its upstream', 'fixtures/fork'],
  ['report whether it was cancelled', 'fixtures/patient'],
  ['report units then succeed', 'fixtures/units'],
  ['hire two other agents', 'examples/invoice-pipeline'],
  ['text.translate', 'examples/quote-translate'],
];

/** Every metacharacter of a regular expression. */
const REGEX = ['.', '*', '+', '?', '^', '$', '{', '}', '(', ')', '|', '[', ']', '\\'].join('');

/** Queries that must never answer a 5xx: stop words, punctuation, operators, regular expressions, odd Unicode. */
const HOSTILE = [
  'the of and a',
  'it is',
  '!!! ??? ... ,,,',
  "a & b | !c <-> d:* 'e'",
  REGEX,
  "'; DROP TABLE published_versions; --",
  '%',
  '_',
  '"unbalanced',
  '\\',
  '😀 日本語 ÄÖÜ',
  'x'.repeat(500),
  ' '.repeat(500),
  `${'word '.repeat(99)}word`,
  '\ufffd\ufffd',
  '\u0001\u001f\u007f',
];

/** Today's rule before this change (shared/registry/registry.ts `matchesText`): a case-insensitive substring of the id, the summary or a capability, results in id order. */
function substringSearch(registry: Registry, q: string): string[] {
  const needle = q.trim().toLowerCase();
  return registry
    .search({})
    .filter((a) => {
      const m = a.manifest;
      return m.id.toLowerCase().includes(needle) || m.summary.toLowerCase().includes(needle) || m.capabilities.some((c) => c.toLowerCase().includes(needle));
    })
    .map((a) => a.manifest.id);
}

interface HitRate {
  hits: number;
  misses: string[];
}

function hitRate(answers: ReadonlyArray<readonly [string, string, string[]]>): HitRate {
  const misses = answers
    .filter(([, want, got]) => !got.slice(0, 3).includes(want))
    .map(([q, want, got]) => `"${q}" → ${want}, got [${got.slice(0, 3).join(', ')}]`);
  return { hits: answers.length - misses.length, misses };
}

const percent = (r: HitRate) => `${r.hits}/${QUERIES.length} (${Math.round((100 * r.hits) / QUERIES.length)}%)`;

const test = base.extend<{ gateway: TestGateway }>({
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { registryDirs: DIRS, exclude: EXCLUDE, mcpMandate: 'alice/test' } }), use),
});

/** A mandate that may hire every agent of the table (USD at a rate, for fixtures/usd). */
const EVERYONE = {
  allow: { agents: ['examples/*', 'fixtures/*', 'holon-labs/*'], capabilities: ['text.*', 'test.*', 'data.*'] },
  budget: { total: '5.00', currency: 'EUR', fx: { USD: '0.92' } },
};

async function mcpClient(g: TestGateway): Promise<Client> {
  const client = new Client({ name: 'holon-search-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
  return client;
}

const ids = (agents: Array<{ id: string }>) => agents.map((a) => a.id);

describe('search that understands a sentence', () => {
  test('the table of queries: each finds its agent in the top 3, over REST and over MCP; the hit rate before and after', async ({ gateway: g }) => {
    await g.mandate(EVERYONE);
    const before = hitRate(QUERIES.map(([q, want]) => [q, want, substringSearch(g.gw.context.registry, q)] as const));

    const rest: Array<readonly [string, string, string[]]> = [];
    for (const [q, want] of QUERIES) {
      const r = await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q })}`);
      expect(r.status, q).toBe(200);
      rest.push([q, want, ids(r.body.agents)]);
    }
    const client = await mcpClient(g);
    const mcp: Array<readonly [string, string, string[]]> = [];
    try {
      for (const [q, want] of QUERIES) {
        const r = await client.callTool({ name: 'search_agents', arguments: { q } });
        expect(r.isError, `${q}: ${JSON.stringify(r.structuredContent)}`).toBeFalsy();
        const found = r.structuredContent as { agents: Array<{ id: string }>; denied: unknown[] };
        expect(found.denied, q).toEqual([]);
        mcp.push([q, want, ids(found.agents)]);
      }
    } finally {
      await client.close();
    }
    const afterRest = hitRate(rest);
    const afterMcp = hitRate(mcp);
    console.log(
      `search hit rate (expected agent in the top 3, ${QUERIES.length} queries): substring match before ${percent(before)}; ` +
        `full-text search now: REST ${percent(afterRest)}, MCP ${percent(afterMcp)}`,
    );
    expect(afterRest.misses).toEqual([]);
    expect(afterMcp.misses).toEqual([]);
    // The same ranking on both surfaces (MCP under a mandate that allows every agent of the table).
    expect(mcp.map(([, , got]) => got)).toEqual(rest.map(([, , got]) => got));
  });

  test('a query equal to an agent id ranks that agent first, on both surfaces', async ({ gateway: g }) => {
    await g.mandate(EVERYONE);
    const client = await mcpClient(g);
    try {
      for (const agent of g.gw.context.registry.search({})) {
        const id = agent.manifest.id;
        expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: id })}`)).body.agents)[0], id).toBe(id);
        expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: ` ${id.toUpperCase()} ` })}`)).body.agents)[0], id).toBe(id);
        const r = await client.callTool({ name: 'search_agents', arguments: { q: id } });
        expect(ids((r.structuredContent as { agents: Array<{ id: string }> }).agents)[0], id).toBe(id);
      }
    } finally {
      await client.close();
    }
  });

  test('the other filters are what they were: capability, prefix, mandate (denied apart), HOLON_EXCLUDE, blank q', async ({ gateway: g }) => {
    await g.mandate({ allow: { agents: ['examples/*'], capabilities: [] } });
    // capability: exact class, then prefix pattern
    expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'count words', capability: 'text.count' })}`)).body.agents)).toEqual([
      'examples/word-count',
    ]);
    const prefixed = ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'waits', capability: 'test.*' })}`)).body.agents);
    expect(prefixed.length).toBeGreaterThan(0);
    for (const id of prefixed) expect(g.gw.context.registry.search({ capability: 'test.*' }).map((a) => a.manifest.id)).toContain(id);
    expect(prefixed).not.toContain('holon-labs/summarize');
    // under a mandate: what it does not allow is listed apart, with the reasons, and only when it matches
    const under = await g.get<Schema<'MandateSearch'>>(`/v0/agents${query({ q: 'profile this CSV', mandate: 'alice/test' })}`);
    expect(under.status).toBe(200);
    expect(ids(under.body.agents)).not.toContain('holon-labs/csv-profile');
    expect(under.body.denied.map((d: { id: string }) => d.id)).toContain('holon-labs/csv-profile');
    expect(under.body.denied.find((d: { id: string }) => d.id === 'holon-labs/csv-profile')!.reasons.length).toBeGreaterThan(0);
    for (const d of under.body.denied) expect(d.id).not.toMatch(/^examples\//);
    // under a mandate with an exact capability: words every implementer matches change nothing of the ranking
    const ranking = await g.get<Schema<'MandateSearch'>>(`/v0/agents${query({ capability: 'text.transform', mandate: 'alice/test' })}`);
    expect(ranking.body.agents.length + ranking.body.denied.length).toBe(2);
    expect((await g.get<Schema<'MandateSearch'>>(`/v0/agents${query({ q: 'text', capability: 'text.transform', mandate: 'alice/test' })}`)).body).toEqual(
      ranking.body,
    );
    // HOLON_EXCLUDE: never listed, whatever the words
    for (const q of ['loops on ctx.call', 'fixtures/looper', 'looper']) {
      expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q })}`)).body.agents), q).not.toContain('fixtures/looper');
    }
    // a blank q is no filter at all
    const all = ids((await g.get<Answer<'searchAgents', 200>>('/v0/agents')).body.agents);
    expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: '   ' })}`)).body.agents)).toEqual(all);
    expect(all).toEqual(g.gw.context.registry.search({}).map((a) => a.manifest.id));
  });

  test('no query answers a 5xx: stop words, punctuation, operators, regular expressions, NUL, lone surrogates, 10 kB', async ({ gateway: g }) => {
    await g.mandate(EVERYONE);
    for (const q of HOSTILE) {
      const r = await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q })}`);
      expect(r.status, JSON.stringify(q)).toBe(200);
      expect(Array.isArray(r.body.agents)).toBe(true);
    }
    // Only stop words or punctuation: nothing to match.
    for (const q of ['the of and a', '!!! ??? ... ,,,', REGEX])
      expect((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q })}`)).body.agents, q).toEqual([]);
    // Operators are words like any other: the tsquery syntax is never read from the query.
    expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'csv & !profile' })}`)).body.agents)).toContain('holon-labs/csv-profile');
    // Too long, given twice, a NUL, a lone surrogate (as bytes that are not UTF-8): a clear 400, or read as U+FFFD.
    const tooLong = await g.get<Schema<'Error'>>(`/v0/agents${query({ q: 'profile this CSV '.repeat(640) })}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_request', message: 'q must be at most 500 characters', problems: [{ path: 'query.q' }] });
    const twice = await g.get<Schema<'Error'>>('/v0/agents?q=csv&q=profile');
    expect(twice.status).toBe(400);
    expect(twice.body.error.code).toBe('invalid_request');
    expect((await g.get('/v0/agents?q=a%00b')).status).toBe(400);
    for (const raw of ['%ED%A0%80', '%ED%B0%80x', '%FF%FE', 'csv%C0']) {
      const r = await g.get(`/v0/agents?q=${raw}`);
      expect(r.status, raw).toBeLessThan(500);
    }

    const client = await mcpClient(g);
    try {
      for (const q of HOSTILE) {
        const r = await client.callTool({ name: 'search_agents', arguments: { q } });
        expect(r.isError, JSON.stringify(q)).toBeFalsy();
        expect(r.structuredContent, JSON.stringify(q)).toHaveProperty('agents');
      }
      const long = await client.callTool({ name: 'search_agents', arguments: { q: 'x'.repeat(10_000) } });
      expect(long.isError).toBe(true);
      expect((long.structuredContent as { error: { code: string } }).error.code).toBe('invalid_request');
      // A NUL or a lone surrogate is refused with the request body, before any tool sees it (services/api/body-guard.ts):
      // a JSON-RPC error -32602 naming the problem, not a 5xx.
      for (const q of ['a\u0000b', '\ud800', 'a\udc00b']) {
        const refused = await client.callTool({ name: 'search_agents', arguments: { q } }).then(
          () => undefined,
          (e: Error) => e.message,
        );
        expect(refused, JSON.stringify(q)).toMatch(/-32602.*(NUL|surrogate)/);
      }
    } finally {
      await client.close();
    }
  });

  test('ranked by relevance, then by cost per successful run; the exact id above both', async ({ gateway: g }) => {
    const priced = (id: string, amount: bigint, summary: string): AgentVersion => ({
      manifest: buildManifest({ id, summary, capabilities: ['data.tables'], pricing: { model: 'per_run', currency: 'EUR', amount, chargeOn: 'success' } }),
      origin: 'shipped',
    });
    g.gw.context.registry = createRegistry([
      priced('acme/dear', 90_000n, 'Extracts tables from PDF files'),
      priced('acme/cheap', 10_000n, 'Extracts tables from PDF files'),
      priced('acme/middle', 50_000n, 'Extracts tables from PDF files'),
      priced('acme/precise', 200_000n, 'Extracts tables and their footnotes from scanned PDF files'),
      { manifest: buildManifest({ id: 'acme/other', summary: 'Translates a text', capabilities: ['text.translate'] }), origin: 'shipped' },
    ]);
    await g.mandate({ allow: { agents: ['acme/*'], capabilities: [] } });
    // Equal relevance: cheaper per successful run first (no runs yet: the worst case is the prior).
    const plain = ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'tables pdf' })}`)).body.agents);
    expect(plain).toEqual(['acme/cheap', 'acme/middle', 'acme/dear', 'acme/precise']);
    const under = ids((await g.get<Schema<'MandateSearch'>>(`/v0/agents${query({ q: 'tables pdf', mandate: 'alice/test' })}`)).body.agents);
    expect(under).toEqual(['acme/cheap', 'acme/middle', 'acme/dear', 'acme/precise']);
    // More of the words: more relevant, whatever the price.
    expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'scanned footnotes tables' })}`)).body.agents)[0]).toBe('acme/precise');
    // The exact id first, then the rest by relevance and cost.
    expect(ids((await g.get<Answer<'searchAgents', 200>>(`/v0/agents${query({ q: 'acme/dear' })}`)).body.agents)[0]).toBe('acme/dear');
  });
});

describe('the same answers on Postgres and PGlite', () => {
  test('every query of the table and every hostile one', async () => {
    const { registry } = await loadDevRegistry(DIRS, { exclude: EXCLUDE, log: createLogger('registry', 'error') });
    const answers: Record<string, unknown[]> = {};
    for (const backend of ['postgres', 'pglite'] as const) {
      const db = await createTestDatabase(backend);
      try {
        const ctx = { db: db.knex, registry, settings: DEFAULT_SETTINGS, now: () => Date.now() } as unknown as ServiceContext;
        const out: unknown[] = [];
        for (const q of [...QUERIES.map(([q]) => q), ...HOSTILE, '\ud800x', 'x\u0000y']) out.push(ids((await searchCatalogue(ctx, { q })).agents));
        answers[backend] = out;
      } finally {
        await db.close();
      }
    }
    expect(answers.pglite).toEqual(answers.postgres);
    expect(answers.postgres!.slice(0, QUERIES.length).every((got, i) => (got as string[]).slice(0, 3).includes(QUERIES[i]![1]))).toBe(true);
  });
});
