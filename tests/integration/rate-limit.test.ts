/**
 * Rate limits: the limiter contract, run against Redis (two connections = two API processes sharing one
 * Redis) and the in-process twin; then the Express middleware, two apps over one Redis. Timing: only "wait
 * past the window" (300 ms windows); no upper-bound timing assertions.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, test, vi } from 'vitest';
import { createMemoryRateLimiter, createRedisRateLimiter, redisRateKey, type RateLimiter, type RateRule } from '../../shared/platform/rate-limit.js';
import { actionLimit, rateLimitMiddleware, type RateLimitOptions } from '../../services/api/rate-limit.js';
import { perTestCleanups } from '../support/cleanups.js';
import type { TestRedis } from '../support/redis.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const { defer, testRedis } = perTestCleanups();

function redisLimiter(r: TestRedis): RateLimiter {
  const l = createRedisRateLimiter(r.url, r.prefix);
  defer(() => l.close());
  return l;
}

describe.each(['redis', 'memory'] as const)('rate limiter contract: %s', (kind) => {
  /** Two limiters over one store: two connections to one Redis, or the one in-process limiter twice. */
  async function pair(): Promise<[RateLimiter, RateLimiter]> {
    if (kind === 'redis') {
      const r = await testRedis();
      return [redisLimiter(r), redisLimiter(r)];
    }
    const m = createMemoryRateLimiter();
    defer(() => m.close());
    return [m, m];
  }

  test('limit 10: exactly 10 of 30 concurrent hits across both limiters are admitted', async () => {
    const [a, b] = await pair();
    const rule: RateRule = { limit: 10, windowMs: 60_000 };
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).hit('addr:203.0.113.1', rule)));
    const admitted = decisions.filter((d) => d.ok);
    const refused = decisions.filter((d) => !d.ok);
    expect(admitted).toHaveLength(10);
    expect(admitted.map((d) => d.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const d of admitted) expect(d.retryAfterS).toBe(0);
    for (const d of refused) {
      expect(d.remaining).toBe(0);
      expect(Number.isInteger(d.retryAfterS)).toBe(true);
      expect(d.retryAfterS).toBeGreaterThanOrEqual(1);
      expect(d.retryAfterS).toBeLessThanOrEqual(60);
    }
  });

  test('keys are separate buckets', async () => {
    const [a, b] = await pair();
    const rule: RateRule = { limit: 1, windowMs: 60_000 };
    expect((await a.hit('acct:alice', rule)).ok).toBe(true);
    expect((await b.hit('acct:alice', rule)).ok).toBe(false);
    expect((await b.hit('acct:bob', rule)).ok).toBe(true);
    expect((await a.hit('addr:alice', rule)).ok).toBe(true);
  });

  test('a new window admits again', async () => {
    const [a, b] = await pair();
    const rule: RateRule = { limit: 2, windowMs: 300 };
    expect((await a.hit('k', rule)).ok).toBe(true);
    expect((await b.hit('k', rule)).ok).toBe(true);
    const refused = await a.hit('k', rule);
    expect(refused).toEqual({ ok: false, remaining: 0, retryAfterS: 1 });
    await sleep(450);
    expect(await b.hit('k', rule)).toEqual({ ok: true, remaining: 1, retryAfterS: 0 });
  });

  test('refuses a bad key or rule', async () => {
    const [a] = await pair();
    await expect(a.hit('', { limit: 1, windowMs: 1000 })).rejects.toThrow(TypeError);
    await expect(a.hit('k', { limit: 0, windowMs: 1000 })).rejects.toThrow(TypeError);
    await expect(a.hit('k', { limit: 1, windowMs: 0 })).rejects.toThrow(TypeError);
    await expect(a.hit('k', { limit: 1.5, windowMs: 1000 })).rejects.toThrow(TypeError);
  });
});

describe('redis limiter', () => {
  test('keys live under the prefix and expire', async () => {
    const r = await testRedis();
    const l = redisLimiter(r);
    expect(redisRateKey(r.prefix, 'addr:1.2.3.4')).toBe(`${r.prefix}:r:addr:1.2.3.4`);
    const rule: RateRule = { limit: 1, windowMs: 5000 };
    await l.hit('addr:1.2.3.4', rule);
    await l.hit('addr:1.2.3.4', rule); // a refused hit does not make the key permanent
    const ttl = await r.client.pttl('r:addr:1.2.3.4'); // the test client adds `<prefix>:`
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5000);
    expect(await r.client.get('r:addr:1.2.3.4')).toBe('2');
  });

  test('a key that lost its TTL gets one back on the next hit', async () => {
    const r = await testRedis();
    const l = redisLimiter(r);
    await r.client.set('r:k', '5');
    const d = await l.hit('k', { limit: 3, windowMs: 5000 });
    expect(d.ok).toBe(false);
    expect(d.retryAfterS).toBe(5);
    expect(await r.client.pttl('r:k')).toBeGreaterThan(0);
  });

  test('fails fast when Redis is unreachable', async () => {
    const l = createRedisRateLimiter('redis://127.0.0.1:1', 'holon-test-unreachable', { commandTimeoutMs: 200 });
    defer(() => l.close());
    await expect(l.hit('k', { limit: 1, windowMs: 1000 })).rejects.toThrow();
  });

  test('close is idempotent, and a closed limiter refuses hits', async () => {
    const r = await testRedis();
    const l = createRedisRateLimiter(r.url, r.prefix);
    await l.hit('k', { limit: 1, windowMs: 1000 });
    await l.close();
    await l.close();
    await expect(l.hit('k', { limit: 1, windowMs: 1000 })).rejects.toThrow(/closed/);
  });
});

describe('memory limiter', () => {
  test('drops expired windows, and refused hits do not extend a window', async () => {
    let t = 1_000_000;
    const m = createMemoryRateLimiter({ now: () => t });
    defer(() => m.close());
    const rule: RateRule = { limit: 1, windowMs: 1000 };
    expect((await m.hit('a', rule)).ok).toBe(true);
    await m.hit('b', rule);
    expect(m.size()).toBe(2);
    t += 600;
    expect(await m.hit('a', rule)).toEqual({ ok: false, remaining: 0, retryAfterS: 1 });
    t += 400; // 1000 ms after the first hit, 400 after the refused one
    expect(m.size()).toBe(0);
    expect((await m.hit('a', rule)).ok).toBe(true);
    expect(m.size()).toBe(1);
  });

  test('retryAfterS counts the seconds left in the window, rounded up', async () => {
    let t = 0;
    const m = createMemoryRateLimiter({ now: () => t });
    defer(() => m.close());
    const rule: RateRule = { limit: 1, windowMs: 60_000 };
    await m.hit('k', rule);
    t = 30_500;
    expect((await m.hit('k', rule)).retryAfterS).toBe(30);
    t = 59_999;
    expect((await m.hit('k', rule)).retryAfterS).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The middleware: two Express apps sharing one Redis are two API processes.

interface App {
  url: string;
  warn: ReturnType<typeof vi.fn>;
}

async function startApp(limiter: RateLimiter, options: Omit<RateLimitOptions, 'log'>, signupRule: RateRule = { limit: 100, windowMs: 60_000 }): Promise<App> {
  const warn = vi.fn();
  const app = express();
  app.post(
    '/v0/signup',
    actionLimit(limiter, { name: 'signup', rule: signupRule, what: 'sign-ups' }, { trustProxy: options.trustProxy, log: { warn } }),
    (_req, res) => {
      res.status(201).json({ ok: true });
    },
  );
  app.use(rateLimitMiddleware(limiter, { ...options, log: { warn } }));
  app.get('/v0/me', (_req, res) => {
    res.json({ ok: true });
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, warn };
}

const MINUTE = 60_000;
const wide: RateRule = { limit: 1000, windowMs: MINUTE };

/** An account from a test header: several "keys" (x-test-key) of one account name the same handle. */
const accountOf: RateLimitOptions['account'] = (req) => req.get('x-test-account');

async function twoApps(options: Omit<RateLimitOptions, 'log'>, signupRule?: RateRule): Promise<[App, App]> {
  const r = await testRedis();
  return [await startApp(redisLimiter(r), options, signupRule), await startApp(redisLimiter(r), options, signupRule)];
}

async function get(app: App, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${app.url}/v0/me`, { headers });
}

async function statuses(requests: Array<() => Promise<Response>>): Promise<number[]> {
  const out: number[] = [];
  for (const r of requests) out.push((await r()).status); // one after another: the order is the order of the hits
  return out;
}

describe('rate-limit middleware over Redis, two API processes', () => {
  test('the per-address limit is shared across processes; 429 says when to retry', async () => {
    const [a, b] = await twoApps({ trustProxy: false, perAddress: { limit: 5, windowMs: MINUTE }, perAccount: wide });
    expect(await statuses([() => get(a), () => get(b), () => get(a), () => get(b), () => get(a)])).toEqual([200, 200, 200, 200, 200]);
    const refused = await get(b);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toMatch(/address/);
    expect((await get(a)).status).toBe(429);
    expect(a.warn).not.toHaveBeenCalled();
  });

  test('trusted proxy: forged first entries share one bucket; a different last entry is another bucket', async () => {
    const [a, b] = await twoApps({ trustProxy: true, perAddress: { limit: 3, windowMs: MINUTE }, perAccount: wide });
    const xff = (v: string) => ({ 'x-forwarded-for': v });
    expect(
      await statuses([
        () => get(a, xff('1.1.1.1, 203.0.113.5')),
        () => get(b, xff('2.2.2.2, 203.0.113.5')),
        () => get(a, xff('203.0.113.5')),
        () => get(b, xff('3.3.3.3, 4.4.4.4, 203.0.113.5')),
        () => get(a, xff('198.51.100.1, 203.0.113.5')),
      ]),
    ).toEqual([200, 200, 200, 429, 429]);
    // the last entry decides: these are other clients of the proxy
    expect((await get(b, xff('203.0.113.5, 203.0.113.6'))).status).toBe(200);
    expect((await get(a, xff('1.1.1.1, 198.51.100.1'))).status).toBe(200);
    // no header: the proxy's own address (the socket), its own bucket
    expect((await get(a)).status).toBe(200);
  });

  test('no trusted proxy: X-Forwarded-For is ignored entirely', async () => {
    const [a, b] = await twoApps({ trustProxy: false, perAddress: { limit: 3, windowMs: MINUTE }, perAccount: wide });
    expect(
      await statuses([
        () => get(a, { 'x-forwarded-for': '203.0.113.1' }),
        () => get(b, { 'x-forwarded-for': '203.0.113.2' }),
        () => get(a, { 'x-forwarded-for': '1.1.1.1, 203.0.113.3' }),
        () => get(b, { 'x-forwarded-for': '203.0.113.4' }),
        () => get(a),
      ]),
    ).toEqual([200, 200, 200, 429, 429]);
  });

  test('per account: more keys or more addresses buy nothing', async () => {
    const [a, b] = await twoApps({ trustProxy: true, perAddress: wide, perAccount: { limit: 2, windowMs: MINUTE }, account: accountOf });
    const as = (n: number, key: string, account = 'alice') => ({ 'x-forwarded-for': `203.0.113.${n}`, 'x-test-key': key, 'x-test-account': account });
    expect(await statuses([() => get(a, as(1, 'k1')), () => get(b, as(2, 'k2'))])).toEqual([200, 200]);
    const refused = await get(a, as(3, 'k3'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/account/);
    expect((await get(b, as(3, 'k1', 'bob'))).status).toBe(200);
    // unauthenticated requests from that address only count against the address
    expect((await get(b, { 'x-forwarded-for': '203.0.113.3' })).status).toBe(200);
  });

  test('sign-ups per address', async () => {
    const [a, b] = await twoApps({ trustProxy: true, perAddress: wide, perAccount: wide }, { limit: 2, windowMs: MINUTE });
    const signup = (app: App, xff: string) => () => fetch(`${app.url}/v0/signup`, { method: 'POST', headers: { 'x-forwarded-for': xff } });
    expect(await statuses([signup(a, '9.9.9.9, 203.0.113.8'), signup(b, '203.0.113.8'), signup(a, '8.8.8.8, 203.0.113.8')])).toEqual([201, 201, 429]);
    expect(await statuses([signup(b, '203.0.113.9')])).toEqual([201]);
    const refused = await signup(b, '203.0.113.8')();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  });

  test('fails open when the limiter fails: requests pass and a warning is logged (once per burst)', async () => {
    const failing: RateLimiter = {
      hit: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      close: async () => {},
    };
    const app = await startApp(failing, { trustProxy: false, perAddress: { limit: 1, windowMs: MINUTE }, perAccount: wide, account: accountOf });
    expect(await statuses([() => get(app), () => get(app, { 'x-test-account': 'alice' }), () => get(app)])).toEqual([200, 200, 200]);
    expect(app.warn).toHaveBeenCalledTimes(1);
    expect(app.warn.mock.calls[0]![1]).toMatch(/unlimited/);
  });

  test('fails open over an unreachable Redis', async () => {
    const dead = createRedisRateLimiter('redis://127.0.0.1:1', 'holon-test-unreachable', { commandTimeoutMs: 200 });
    defer(() => dead.close());
    const app = await startApp(dead, { trustProxy: false, perAddress: { limit: 1, windowMs: MINUTE }, perAccount: wide });
    expect(await statuses([() => get(app), () => get(app)])).toEqual([200, 200]);
    expect(app.warn).toHaveBeenCalled();
  });
});
