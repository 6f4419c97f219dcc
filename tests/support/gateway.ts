/**
 * A whole gateway for integration tests: every service in this process, on the test's own Postgres
 * database and Redis key prefix, listening on a free port. `call()` posts to it.
 */
import { checkAnswer } from './response-check.js';
import { test as base } from 'vitest';
import { startGateway, type RunningGateway, type Role, ALL_ROLES } from '../../services/compose.js';
import { audit } from '../../shared/ledger/audit.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createTestRedis } from './redis.js';
import type { Config } from '../../shared/platform/config.js';

export interface TestGateway {
  gw: RunningGateway;
  db: TestDatabase;
  redisUrl: string;
  redisPrefix: string;
  url: string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  get(path: string): Promise<{ status: number; body: any }>;
  /** Create a mandate (POST /v0/mandates) with defaults that tests override. */
  mandate(doc: Record<string, unknown>): Promise<any>;
}

export const TEST_REGISTRY = ['examples', 'tests/fixtures/registry'];

export async function startTestGateway(options: { roles?: readonly Role[]; config?: Partial<Config> } = {}): Promise<TestGateway & { stop(): Promise<void> }> {
  const db = await createTestDatabase('postgres', { poolMax: 20 });
  const redis = await createTestRedis();
  const prefix = redis.prefix;
  const gw = await startGateway(options.roles ?? ALL_ROLES, {
    port: 0,
    databaseUrl: db.url!,
    redisUrl: redis.url,
    redisPrefix: prefix,
    registryDirs: TEST_REGISTRY,
    registryExplicit: true,
    logLevel: 'warn',
    ...options.config,
  });
  const url = `http://127.0.0.1:${gw.port}`;
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    let isJson = false;
    try {
      parsed = JSON.parse(text);
      isJson = (res.headers.get('content-type') ?? '').includes('json');
    } catch {
      /* not JSON */
    }
    // Every JSON answer matches what the OpenAPI document says of it (tests/support/response-check.ts).
    await checkAnswer(url, method, path, res.status, parsed, isJson);
    return { status: res.status, body: parsed as any };
  };
  const t: TestGateway = {
    gw,
    db,
    redisUrl: redis.url,
    redisPrefix: prefix,
    url,
    post: (path, body, headers) => request('POST', path, body, headers),
    get: (path) => request('GET', path),
    mandate: async (doc) => {
      const r = await request('POST', '/v0/mandates', {
        id: 'alice/test',
        issuer: 'alice',
        grantee: 'alice/assistant',
        allow: { agents: ['examples/*', 'fixtures/*'], capabilities: ['text.*', 'test.*'] },
        budget: { total: '5.00', currency: 'EUR' },
        ...doc,
      });
      if (r.status >= 300) throw new Error(`mandate refused: ${JSON.stringify(r.body)}`);
      return r.body;
    },
  };
  return {
    ...t,
    stop: async () => {
      await gw.stop();
      await redis.cleanup();
      await db.close();
    },
  };
}

/** Hand the gateway to a test, then require a clean ledger audit, and stop the gateway whatever happened. */
/** More roles, as another process would run them (own connections), on the same database and Redis prefix as `g`. */
export function startBeside(g: TestGateway, roles: readonly Role[], extra: Partial<Config> = {}): Promise<RunningGateway> {
  return startGateway(roles, {
    port: 0,
    databaseUrl: g.db.url!,
    redisUrl: g.redisUrl,
    redisPrefix: g.redisPrefix,
    registryDirs: TEST_REGISTRY,
    registryExplicit: true,
    logLevel: 'warn',
    ...extra,
  });
}

export async function useAudited(g: TestGateway & { stop(): Promise<void> }, use: (g: TestGateway) => Promise<void>): Promise<void> {
  try {
    await use(g);
    const report = await audit(g.db.knex);
    if (!report.ok) throw new Error(`ledger audit after the test:\n${report.problems.join('\n')}`);
  } finally {
    await g.stop();
  }
}

/** `test` with a running gateway; the ledger audit must pass after each test. */
export const gatewayTest = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway(), use),
});
