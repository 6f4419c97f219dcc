/**
 * Services as separate processes on their own database and Redis prefix, sharing one dev webhook signing secret
 * (HOLON_CALLBACK_SECRET) and a short delivery schedule: for tests of webhook deliveries across processes.
 * `defer` receives what stops the processes and removes the database and the keys, run after the test.
 */
import { onTestFailed } from 'vitest';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createCluster, type Cluster } from './processes.js';
import { createTestRedis, type TestRedis } from './redis.js';

export async function webhookCluster(
  schedule: string,
  defer: (fn: () => Promise<void>) => void,
): Promise<{ cluster: Cluster; secret: string; db: TestDatabase; redis: TestRedis }> {
  const db = await createTestDatabase('postgres');
  const redis = await createTestRedis();
  const secret = generateWebhookSecret();
  const cluster = createCluster({
    databaseUrl: db.url!,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    env: { HOLON_CALLBACK_SECRET: secret, HOLON_WEBHOOK_SCHEDULE: schedule },
  });
  defer(async () => {
    await cluster.stopAll();
    await redis.cleanup();
    await db.close();
  });
  onTestFailed(() => console.error(`service output:\n${cluster.describe()}`));
  return { cluster, secret, db, redis };
}
