/**
 * The demo (gateway.md §7; docs/demo.md; services/api/routes/demo.ts): `POST /v0/demo/{ns}/{name}` runs one of our
 * own cheap shipped agents — here holon-labs/csv-profile behind the reference MCP host — with no key, and leaves no
 * trace in the books: no call, hold, journal entry, receipt or call_events row. Narrowed input, 10 runs per visitor
 * and 600 in all per hour (Redis, shared by API processes), CORS for HOLON_SITE_URL only.
 */
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { describe, expect, test } from 'vitest';
import { demoRoutes } from '../../services/api/routes/demo.js';
import type { ServiceContext } from '../../shared/context.js';
import { HolonError } from '../../shared/core/errors.js';
import { DEFAULT_EXCLUDE } from '../../shared/platform/config.js';
import { createLogger } from '../../shared/platform/log.js';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from '../../shared/platform/rate-limit.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import type { Runtime } from '../../shared/runtimes/types.js';
import { startAgentHost } from '../../agents/host.mjs';
import { DEMO_PER_VISITOR, DEMO_TOTAL } from '../../shared/demo/rules.js';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import { send } from '../support/hosted.js';
import { AGENTS_DIR, manifestsPointingAt } from '../support/mcp-agents.js';
import { httpStatusOf } from '../../services/api/http-status.js';

const SITE = 'https://site.example';
const CSV = 'name,age\nada,36\nlin,41\n';
const DEMO = '/v0/demo/holon-labs/csv-profile';

async function withDemo(use: (g: TestGateway, registryDirs: string[]) => Promise<void>): Promise<void> {
  const host = await startAgentHost({ port: 0, dir: AGENTS_DIR, log: () => {} });
  try {
    const registry = await manifestsPointingAt(AGENTS_DIR, host.url);
    const registryDirs = [...TEST_REGISTRY, registry];
    await useAudited(await startTestGateway({ hosted: true, config: { registryDirs, siteUrl: SITE, trustProxy: true } }), (g) => use(g, registryDirs));
  } finally {
    await host.close();
  }
}

/** A visitor, as the trusted proxy names it. */
const from = (address: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': address, ...extra });

async function noTrace(g: TestGateway): Promise<void> {
  for (const table of ['calls', 'holds', 'receipts', 'journal_entries', 'call_events', 'approvals']) {
    expect(await g.db.knex(table).count({ n: '*' }).first(), table).toMatchObject({ n: expect.anything() });
    expect(Number((await g.db.knex(table).count({ n: '*' }).first())!.n), table).toBe(0);
  }
}

describe('POST /v0/demo/{ns}/{name}', () => {
  test('runs our agent with no key: a receipt-less answer that says it was a demo, and nothing in the books', async () => {
    await withDemo(async (g) => {
      const ok = await send(g.url, 'POST', DEMO, { body: { input: { csv: CSV } }, headers: from('203.0.113.1') });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({
        demo: true,
        agent: 'holon-labs/csv-profile@1.0.0',
        status: 'succeeded',
        output: {
          rows: 2,
          columns: [
            { name: 'name', type: 'string' },
            { name: 'age', type: 'integer', min: 36, max: 41 },
          ],
        },
        billed: false,
        measured: false,
        note: expect.stringMatching(/demo.*not billed.*no receipt/),
      });
      expect(ok.body).not.toHaveProperty('receipt');
      expect(ok.headers.get('cache-control')).toBe('no-store');
      // A declared error is shown as the agent's answer, still a demo.
      const empty = await send(g.url, 'POST', DEMO, { body: { input: { csv: '' } }, headers: from('203.0.113.1') });
      expect(empty.status).toBe(502);
      expect(empty.body).toMatchObject({ demo: true, status: 'failed', error: { code: 'empty_input' }, billed: false });
      await noTrace(g);
    });
  });

  test('refuses agents that are not ours, and everything else under /v0/demo (404); narrowed input (400, 413, 422)', async () => {
    await withDemo(async (g) => {
      const post = (path: string, body: unknown) => send(g.url, 'POST', path, { body, headers: from('203.0.113.2') });
      for (const [path, why] of [
        ['/v0/demo/examples/echo-upper', /Holon ships itself/], // shipped, not ours
        ['/v0/demo/holon-labs/summarize', /no such agent/], // HOLON_EXCLUDE: never listed
        ['/v0/demo/nobody/nothing', /no such agent/],
      ] as const) {
        const r = await post(path, { input: { text: 'x' } });
        expect([r.status, r.body.error.code], path).toEqual([404, 'demo_not_available']);
        expect(r.body.error.message).toMatch(why);
      }
      for (const path of ['/v0/demo', '/v0/demo/holon-labs', `${DEMO}/run`]) expect((await post(path, { input: {} })).status, path).toBe(404);
      expect((await send(g.url, 'GET', DEMO)).status).toBe(404);

      const long = await post(DEMO, { input: { csv: 'a'.repeat(2001) } });
      expect(long.status).toBe(400);
      expect(long.body.error.problems).toEqual([{ path: '$.input.csv', message: 'must be at most 2000 characters in the demo' }]);
      const file = await post(DEMO, { input: { csv: 'holon://files/f_aaaaaaaaaaaaaaaaaaaaaa' } });
      expect([file.status, file.body.error.problems[0].message]).toEqual([400, expect.stringContaining('takes no uploaded file')]);
      const big = await post(DEMO, { input: { csv: 'a,b\n'.repeat(2100) } });
      expect([big.status, big.body.error.code]).toEqual([413, 'body_too_large']);
      const shape = await post(DEMO, { input: 'a,b', extra: 1 });
      expect(shape.status).toBe(400);
      expect(shape.body.error.problems.map((p: { path: string }) => p.path).sort()).toEqual(['$.extra', '$.input']);
      const schema = await post(DEMO, { input: { delimiter: '#' } });
      expect(schema.status).toBe(422);
      expect(schema.body.error.code).toBe('rejected_input');
      expect(schema.body.error.problems.map((p: { path: string }) => p.path)).toEqual(expect.arrayContaining(['$.input.csv', '$.input.delimiter']));
      // Refused requests do not count: the visitor still has all its runs.
      for (let i = 0; i < DEMO_PER_VISITOR.limit; i++) expect((await post(DEMO, { input: { csv: CSV } })).status).toBe(200);
      await noTrace(g);
    });
  });

  test('CORS: the site gets Access-Control-Allow-Origin and its preflight answered; other pages 403; no Origin is fine', async () => {
    await withDemo(async (g) => {
      const site = await send(g.url, 'POST', DEMO, { body: { input: { csv: CSV } }, headers: from('203.0.113.3', { origin: SITE }) });
      expect(site.status).toBe(200);
      expect(site.headers.get('access-control-allow-origin')).toBe(SITE);
      expect(site.headers.get('vary')).toMatch(/Origin/);
      const preflight = await send(g.url, 'OPTIONS', DEMO, {
        headers: { origin: SITE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(SITE);
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toBe('content-type');
      // Errors carry the header too, so the site can read why.
      const refused = await send(g.url, 'POST', '/v0/demo/examples/echo-upper', { body: { input: {} }, headers: { origin: SITE } });
      expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([404, SITE]);

      for (const origin of ['https://evil.example', 'http://localhost:3000', g.url, 'null']) {
        const r = await send(g.url, 'POST', DEMO, { body: { input: { csv: CSV } }, headers: from('203.0.113.3', { origin }) });
        expect([r.status, r.body.error?.code], origin).toEqual([403, 'origin_not_allowed']);
        expect(r.headers.get('access-control-allow-origin')).toBeNull();
        const p = await send(g.url, 'OPTIONS', DEMO, { headers: { origin, 'access-control-request-method': 'POST' } });
        expect([p.status, p.headers.get('access-control-allow-origin')], origin).toEqual([403, null]);
      }
      // The demo's rule is the demo's: no other route sends CORS headers to the site.
      const other = await send(g.url, 'GET', '/v0/catalog', { headers: { origin: SITE } });
      expect([other.status, other.headers.get('access-control-allow-origin')]).toEqual([200, null]);
      const otherPreflight = await send(g.url, 'OPTIONS', '/v0/signup', { headers: { origin: SITE, 'access-control-request-method': 'POST' } });
      expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
      // Express routes paths in any case: so does the rule.
      const upper = await send(g.url, 'POST', '/V0/DEMO/holon-labs/csv-profile', {
        body: { input: { csv: CSV } },
        headers: { origin: 'https://evil.example' },
      });
      expect(upper.status).toBe(403);
      await noTrace(g);
    });
  });

  test(`${DEMO_PER_VISITOR.limit} runs per visitor and ${DEMO_TOTAL.limit} in all per hour, counted in Redis across API processes`, async () => {
    await withDemo(async (g, registryDirs) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: { registryDirs, siteUrl: SITE, trustProxy: true } });
      try {
        const run = (base: string, address: string) => send(base, 'POST', DEMO, { body: { input: { csv: CSV } }, headers: from(address) });
        // The visitor's 10 runs, half through each process; the 11th is refused by either, with Retry-After.
        for (let i = 0; i < DEMO_PER_VISITOR.limit; i++) expect((await run(i % 2 ? other.url : g.url, '198.51.100.7')).status).toBe(200);
        for (const base of [g.url, other.url]) {
          const r = await run(base, '198.51.100.7');
          expect([r.status, r.body.error.code]).toEqual([429, 'rate_limited']);
          expect(r.body.error.message).toMatch(/10 runs per visitor per hour/);
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(3000);
        }
        // A forged X-Forwarded-For buys nothing: the proxy's appended entry is the visitor.
        expect((await run(g.url, '10.9.9.9, 198.51.100.7')).status).toBe(429);
        // Another visitor still has its own, until everyone's hour is used up (here by filling the shared count).
        expect((await run(g.url, '198.51.100.8')).status).toBe(200);
        const limiter = createRedisRateLimiter(g.redisUrl, g.redisPrefix);
        try {
          for (let used = DEMO_PER_VISITOR.limit + 1; used < DEMO_TOTAL.limit; used++) await limiter.hit('demo:all', DEMO_TOTAL);
        } finally {
          await limiter.close();
        }
        const last = await run(other.url, '198.51.100.9');
        expect(last.status).toBe(429);
        expect(last.body.error.message).toMatch(/600 runs of this hour are used up/);
        await noTrace(g);
      } finally {
        await other.stop();
      }
    });
  });

  test('dev mode without Redis: the same limits in the in-memory limiter; a limiter that fails closes the demo (503)', async () => {
    const log = createLogger('demo-test', 'silent');
    const { registry } = await loadDevRegistry(['agents'], { exclude: DEFAULT_EXCLUDE, log });
    let runs = 0;
    const runtimes: Runtime = {
      run: async () => {
        runs += 1;
        return { kind: 'output', output: { rows: 0, columns: [] } };
      },
    };
    const serve = async (limiter: RateLimiter) => {
      const errors: ErrorRequestHandler = (err, _req, res, _next) =>
        void res.status(err instanceof HolonError ? httpStatusOf(err.code) : 500).json(err instanceof HolonError ? err.toJSON() : {});
      const app = express()
        .use(express.json())
        .use(demoRoutes({ ctx: { registry, log } as unknown as ServiceContext, runtimes, limiter, trustProxy: false }))
        .use(errors);
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
    };
    const memory = createMemoryRateLimiter();
    const dev = await serve(memory);
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= DEMO_PER_VISITOR.limit; i++) statuses.push((await send(dev.url, 'POST', DEMO, { body: { input: { csv: CSV } } })).status);
      expect(statuses).toEqual([...Array(DEMO_PER_VISITOR.limit).fill(200), 429]);
      expect(runs).toBe(DEMO_PER_VISITOR.limit);
    } finally {
      await dev.close();
      await memory.close();
    }
    const down = await serve({ hit: async () => Promise.reject(new Error('redis is down')), close: async () => {} });
    try {
      const r = await send(down.url, 'POST', DEMO, { body: { input: { csv: CSV } } });
      expect([r.status, r.body.error.code]).toEqual([503, 'demo_unavailable']);
      expect(runs).toBe(DEMO_PER_VISITOR.limit);
    } finally {
      await down.close();
    }
  });
});
