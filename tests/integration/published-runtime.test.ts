/**
 * Published agents go through the guarded client (gateway.md §7 "Network safety"), on the real runner path: a test
 * gateway (API + settler) and the runner started with `startRunner`, whose guard is given a fake resolver the test
 * flips and a route that dials 127.0.0.1 for the public address the resolver answered (tests/support/published-servers.ts).
 * Shipped agents are exempt; HOLON_ALLOW_PRIVATE_ENDPOINTS (`allowPrivateEndpoints`) admits http:// and private addresses.
 */
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { afterEach, describe, expect, test } from 'vitest';
import { createRuntimes } from '../../shared/runtimes/index.js';
import type { AgentVersion } from '../../shared/runtimes/types.js';
import { startRunner } from '../../services/runner/worker.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import type { StartedRole } from '../../shared/context.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { buildManifest } from '../support/manifest-builder.js';
import {
  flippingResolver,
  PUBLIC_STAND_IN,
  type PublishedServer,
  routeStandIn,
  startMcpAgent,
  startWebhookAgent,
  TEST_TLS,
} from '../support/published-servers.js';

const servers: PublishedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function webhook(tls: boolean): Promise<PublishedServer> {
  const s = await startWebhookAgent({ tls });
  servers.push(s);
  return s;
}

async function mcp(tls: boolean): Promise<PublishedServer> {
  const s = await startMcpAgent({ tls });
  servers.push(s);
  return s;
}

function version(id: string, runtime: Manifest['runtime'], origin: AgentVersion['origin']): AgentVersion {
  return { manifest: buildManifest({ id, version: '1.0.0', capabilities: ['text.echo'], runtime }), origin };
}
const hook = (id: string, endpoint: string, origin: AgentVersion['origin'] = 'published') => version(id, { kind: 'webhook', endpoint, timeoutS: 10 }, origin);
const tool = (id: string, endpoint: string, origin: AgentVersion['origin'] = 'published') =>
  version(id, { kind: 'mcp', endpoint, tool: 'run', timeoutS: 10 }, origin);

/** Both remote runtimes: [name, start a server, build an agent, the server's path]. */
const KINDS = [
  ['webhook', webhook, hook, '/hook'],
  ['MCP', mcp, tool, '/mcp'],
] as const;

type Guard = NonNullable<Parameters<typeof startRunner>[1]['guard']>;

/** A gateway without its own runner, the given agents listed, and the real runner started with `allowPrivateEndpoints` and `guard`. */
async function run(agents: AgentVersion[], options: { allowPrivateEndpoints: boolean; guard?: Guard }, body: (g: TestGateway) => Promise<void>): Promise<void> {
  await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
    g.gw.context.registry = createRegistry([...g.gw.context.registry.list(), ...agents]);
    const noWaiter = { wait: async () => false, receiptOf: async () => null, heard: () => {}, close: async () => {} };
    const runner: StartedRole = await startRunner(g.gw.engine.withWaiter(noWaiter), {
      concurrency: 2,
      allowPrivateEndpoints: options.allowPrivateEndpoints,
      ...(options.guard ? { guard: options.guard } : {}),
    });
    try {
      await g.mandate({ allow: { agents: ['acme/*', 'examples/*'], capabilities: ['text.*'] } });
      await body(g);
      expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
    } finally {
      for (const stop of runner.stop) await stop();
      await Promise.all(runner.workers.map((w) => w.close()));
      for (const release of runner.release) await release();
    }
  });
}

const call = (g: TestGateway, agent: string, input: unknown = { text: 'hi' }) => g.post('/v0/calls', { mandate: 'alice/test', agent, input });

/** The call succeeded and was billed. */
function paid(r: { status: number; body: any }, output: unknown): void {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.output).toEqual(output);
  expect(r.body.receipt).toMatchObject({ status: 'succeeded', billed: true });
}

/** The call failed runtime_unavailable, unbilled (the runtime's own words are in the runtimes-level tests below). */
async function refused(g: TestGateway, r: { status: number; body: any }): Promise<void> {
  expect(r.status, JSON.stringify(r.body)).toBe(502);
  expect(r.body.receipt).toMatchObject({ status: 'failed', billed: false, error: 'runtime_unavailable' });
  expect(r.body.error.code).toBe('runtime_unavailable');
  const entry = await g.db
    .knex('journal_entries')
    .where({ key: `settle:${r.body.receipt.id}` })
    .first();
  const lines = entry ? await g.db.knex('journal_lines').where({ entry_id: entry.id }) : [];
  expect(lines.every((l: { amount: string | number }) => BigInt(l.amount) === 0n)).toBe(true);
}

describe('published agents behind a host name whose resolution the test controls', () => {
  test.each(KINDS)('%s: runs while the name is public, refused once it resolves to loopback (DNS rebinding), unbilled', async (_kind, serve, make, path) => {
    const s = await serve(true);
    const resolver = flippingResolver();
    const agent = make('acme/echo', `https://agent.published.test:${s.port}${path}`);
    await run([agent], { allowPrivateEndpoints: false, guard: { lookup: resolver, route: routeStandIn, ca: TEST_TLS.cert } }, async (g) => {
      paid(await call(g, 'acme/echo'), { echo: { text: 'hi' } });
      expect(resolver.asked).toContain('agent.published.test');
      const hits = s.hits.length;

      // The name now resolves to loopback; the next connection is resolved again and refused.
      resolver.answer = '127.0.0.1';
      const asked = resolver.asked.length;
      await refused(g, await call(g, 'acme/echo'));
      expect(resolver.asked.length).toBeGreaterThan(asked);
      expect(s.hits.length).toBe(hits);

      // And back: the same agent runs again.
      resolver.answer = PUBLIC_STAND_IN;
      paid(await call(g, 'acme/echo'), { echo: { text: 'hi' } });
    });
  });

  test.each(KINDS)('%s: a redirect is refused, not followed, unbilled', async (_kind, serve, make, path) => {
    const s = await serve(true);
    s.redirect = true;
    const agent = make('acme/mover', `https://agent.published.test:${s.port}${path}`);
    await run([agent], { allowPrivateEndpoints: false, guard: { lookup: flippingResolver(), route: routeStandIn, ca: TEST_TLS.cert } }, async (g) => {
      await refused(g, await call(g, 'acme/mover'));
      expect(s.hits.some((h) => h.path === '/elsewhere')).toBe(false);
    });
  });
});

describe('http:// endpoints and private addresses', () => {
  test('a published agent on http://127.0.0.1 is refused without allowPrivateEndpoints, the server never hit', async () => {
    const w = await webhook(false);
    const m = await mcp(false);
    const agents = [hook('acme/hook', `http://127.0.0.1:${w.port}/hook`), tool('acme/tool', `http://127.0.0.1:${m.port}/mcp`)];
    await run(agents, { allowPrivateEndpoints: false }, async (g) => {
      await refused(g, await call(g, 'acme/hook'));
      await refused(g, await call(g, 'acme/tool'));
      expect(w.hits).toEqual([]);
      expect(m.hits).toEqual([]);
    });
  });

  test('a published agent over https on a private address is refused without allowPrivateEndpoints', async () => {
    const s = await webhook(true);
    await run([hook('acme/hook', `https://127.0.0.1:${s.port}/hook`)], { allowPrivateEndpoints: false, guard: { ca: TEST_TLS.cert } }, async (g) => {
      await refused(g, await call(g, 'acme/hook'));
      expect(s.hits).toEqual([]);
    });
  });

  test('with allowPrivateEndpoints, published agents on http://127.0.0.1 run', async () => {
    const w = await webhook(false);
    const m = await mcp(false);
    const agents = [hook('acme/hook', `http://127.0.0.1:${w.port}/hook`), tool('acme/tool', `http://127.0.0.1:${m.port}/mcp`)];
    await run(agents, { allowPrivateEndpoints: true }, async (g) => {
      paid(await call(g, 'acme/hook'), { echo: { text: 'hi' } });
      paid(await call(g, 'acme/tool'), { echo: { text: 'hi' } });
    });
  });

  test('with allowPrivateEndpoints, a redirect is still refused', async () => {
    const s = await webhook(false);
    s.redirect = true;
    await run([hook('acme/hook', `http://127.0.0.1:${s.port}/hook`)], { allowPrivateEndpoints: true }, async (g) => {
      await refused(g, await call(g, 'acme/hook'));
    });
  });

  test('shipped agents on loopback are exempt: they run without allowPrivateEndpoints', async () => {
    const w = await webhook(false);
    const m = await mcp(false);
    const agents = [hook('acme/hook', `http://127.0.0.1:${w.port}/hook`, 'shipped'), tool('acme/tool', `http://127.0.0.1:${m.port}/mcp`, 'shipped')];
    await run(agents, { allowPrivateEndpoints: false }, async (g) => {
      paid(await call(g, 'acme/hook'), { echo: { text: 'hi' } });
      paid(await call(g, 'acme/tool'), { echo: { text: 'hi' } });
      // The gateway's own agents too.
      paid(await call(g, 'examples/echo-upper'), { text: 'HI' });
    });
  });
});

describe('pooled MCP sessions', () => {
  test('a published agent never reuses a session a shipped agent opened at the same endpoint', async () => {
    const s = await mcp(true);
    const endpoint = `https://agent.published.test:${s.port}/mcp`;
    // The shipped agents' client reaches the name (its own resolver, trusting the test CA); the guard's resolver says loopback.
    const direct = new Agent({ connect: { ca: TEST_TLS.cert, lookup: (_h, _o, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) } });
    const runtimes = createRuntimes({
      mcp: { fetch: (url, init) => undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: direct }) as unknown as Promise<Response> },
      published: { allowPrivateEndpoints: false, guard: { lookup: flippingResolver('127.0.0.1'), ca: TEST_TLS.cert } },
    });
    const ctx = () => ({ callId: 'c1', signal: AbortSignal.timeout(5_000), timeoutMs: 5_000 });
    try {
      expect(await runtimes.run(tool('acme/echo', endpoint, 'shipped'), { a: 1 }, ctx())).toEqual({ kind: 'output', output: { echo: { a: 1 } } });
      expect(await runtimes.run(tool('acme/echo', endpoint, 'published'), { a: 1 }, ctx())).toMatchObject({
        kind: 'failure',
        code: 'runtime_unavailable',
        message: expect.stringContaining('loopback'),
      });
      expect(await runtimes.run(tool('acme/echo', endpoint, 'shipped'), { a: 2 }, ctx())).toEqual({ kind: 'output', output: { echo: { a: 2 } } });
    } finally {
      await runtimes.close();
      await direct.close();
    }
  });
});

describe('what the runtimes say (the same scenarios, createRuntimes as the runner builds it)', () => {
  const ctx = () => ({ callId: 'c1', signal: AbortSignal.timeout(5_000), timeoutMs: 5_000 });

  test.each(KINDS)('%s: rebinding, redirect and http:// are refused in plain words', async (_kind, serve, make, path) => {
    const s = await serve(true);
    const resolver = flippingResolver();
    const runtimes = createRuntimes({ published: { allowPrivateEndpoints: false, guard: { lookup: resolver, route: routeStandIn, ca: TEST_TLS.cert } } });
    const agent = make('acme/echo', `https://agent.published.test:${s.port}${path}`);
    try {
      expect(await runtimes.run(agent, { a: 1 }, ctx())).toEqual({ kind: 'output', output: { echo: { a: 1 } } });
      resolver.answer = '127.0.0.1';
      expect(await runtimes.run(agent, { a: 1 }, ctx())).toEqual({
        kind: 'failure',
        code: 'runtime_unavailable',
        message: 'the endpoint was refused (address refused: agent.published.test resolves to a loopback address)',
      });
      resolver.answer = PUBLIC_STAND_IN;
      s.redirect = true;
      expect(await runtimes.run(agent, { a: 1 }, ctx())).toEqual({
        kind: 'failure',
        code: 'runtime_unavailable',
        message: 'the endpoint was refused (redirect refused: agent.published.test answered 302, and redirects are not followed)',
      });
      expect(await runtimes.run(make('acme/plain', `http://agent.published.test:${s.port}${path}`), { a: 1 }, ctx())).toEqual({
        kind: 'failure',
        code: 'runtime_unavailable',
        message: 'the endpoint was refused: a published agent must use an https:// runtime.endpoint',
      });
    } finally {
      await runtimes.close();
    }
  });

  test('an IP-literal private endpoint over https is refused as such', async () => {
    const s = await webhook(true);
    const runtimes = createRuntimes({ published: { allowPrivateEndpoints: false, guard: { ca: TEST_TLS.cert } } });
    try {
      expect(await runtimes.run(hook('acme/hook', `https://127.0.0.1:${s.port}/hook`), {}, ctx())).toEqual({
        kind: 'failure',
        code: 'runtime_unavailable',
        message: 'the endpoint was refused (address refused: 127.0.0.1 is a loopback address)',
      });
      expect(s.hits).toEqual([]);
    } finally {
      await runtimes.close();
    }
  });
});
