import { MIGRATIONS } from '../../shared/db/migrate.js';
import { describe, expect, test } from 'vitest';
import { Redis } from 'ioredis';
import { dbTest } from '../support/db.js';
import { redisTest } from '../support/redis.js';
import { createTestDatabase } from '../support/db.js';
import { loadTestRegistry, startTestGateway } from '../support/gateway.js';
import type { Answer } from '../support/http.js';

describe('test bed', () => {
  dbTest('postgres')('each test database is its own, migrated and empty', async ({ db }) => {
    const other = await createTestDatabase('postgres');
    try {
      expect(db.url).not.toBe(other.url);
      await db.knex('accounts').insert({ handle: 'only-here', kind: 'user' });
      expect(await other.knex('accounts').where({ handle: 'only-here' }).first()).toBeUndefined();
      const migrations = await other.knex('knex_migrations').select('name').orderBy('id');
      expect(migrations.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
      expect(MIGRATIONS.map((m) => m.name).slice(0, 6)).toEqual([
        '001_ledger',
        '002_calls',
        '003_call_lifecycle',
        '004_approvals',
        '005_delegation',
        '006_hosted',
      ]);
    } finally {
      await other.close();
    }
  });

  redisTest('each test has its own Redis key prefix, cleaned afterwards', async ({ redis }) => {
    await redis.client.set('k', 'v');
    const raw = new Redis(redis.url);
    try {
      expect(await raw.get(`${redis.prefix}:k`)).toBe('v');
      expect(await raw.get('k')).not.toBe('v');
    } finally {
      raw.disconnect();
    }
    expect(redis.prefix).toMatch(/^holon-test\.[0-9a-f]{8}\.[0-9a-f]{10}$/);
  });

  test('gateways given one loaded registry each list it in a registry of their own', async () => {
    const agents = await loadTestRegistry();
    expect(agents.map((a) => a.manifest.id)).toContain('examples/echo-upper');
    const [a, b] = await Promise.all([startTestGateway({ registry: agents, roles: ['api'] }), startTestGateway({ registry: agents, roles: ['api'] })]);
    try {
      expect(a.gw.context.registry.hide('examples/echo-upper', '1.0.0')).toBe(true);
      expect(a.gw.context.registry.resolve('examples/echo-upper').ok).toBe(false);
      expect(b.gw.context.registry.resolve('examples/echo-upper').ok).toBe(true);
      expect((await b.get<Answer<'describeAgent', 200>>('/v0/agents/examples/echo-upper')).body.id).toBe('examples/echo-upper');
      expect((await a.get('/v0/agents/examples/echo-upper')).status).toBe(404);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
