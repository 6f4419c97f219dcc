/**
 * Each test gets its own Redis key prefix on the run's Redis (or on the Redis `url` names: the test cluster,
 * redis-cluster.ts), and its keys are deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import { inject, test as base } from 'vitest';
import { openRedis, type RedisClient } from '../../shared/messaging/redis-target.js';
import { deleteKeysUnder } from './redis-keys.js';

export interface TestRedis {
  url: string;
  /**
   * e.g. `holon-test.1a2b3c4d.9f8e7d6c5b` — usable as HOLON_REDIS_PREFIX (no ':'); every key this test writes
   * starts with it, and all of them are deleted afterwards.
   */
  prefix: string;
  /** A client whose keys are all under `prefix`. */
  client: RedisClient;
}

export async function createTestRedis(url = inject('redisUrl')): Promise<TestRedis & { cleanup(): Promise<void> }> {
  const prefix = `holon-test.${inject('testRunId')}.${randomBytes(5).toString('hex')}`;
  const client = openRedis(url, { keyPrefix: `${prefix}:`, maxRetriesPerRequest: 2 });
  return {
    url,
    prefix,
    client,
    cleanup: async () => {
      try {
        await deleteKeysUnder(url, prefix);
      } finally {
        client.disconnect();
      }
    },
  };
}

export const redisTest = base.extend<{ redis: TestRedis }>({
  // eslint-disable-next-line no-empty-pattern
  redis: async ({}, use) => {
    const r = await createTestRedis();
    try {
      await use(r);
    } finally {
      await r.cleanup();
    }
  },
});
