/**
 * Things a test opened, closed after it in reverse order: `const { defer, testRedis } = perTestCleanups();` at the
 * top of a file, then `defer(() => thing.close())` and `await testRedis()` (a Redis prefix deleted afterwards).
 */
import { afterEach } from 'vitest';
import { createTestRedis, type TestRedis } from './redis.js';

export function perTestCleanups(): { defer(fn: () => Promise<void>): void; testRedis(url?: string): Promise<TestRedis> } {
  let cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    const list = cleanups.reverse();
    cleanups = [];
    for (const c of list) await c();
  });
  const defer = (fn: () => Promise<void>) => {
    cleanups.push(fn);
  };
  return {
    defer,
    /** A prefix on the run's Redis, or on the one `url` names (the test cluster). */
    async testRedis(url?: string) {
      const r = await createTestRedis(url);
      defer(() => r.cleanup());
      return r;
    },
  };
}
