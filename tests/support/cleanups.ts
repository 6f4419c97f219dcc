/**
 * Things a test opened, closed after it in reverse order: `const { defer, testRedis } = perTestCleanups();` at the
 * top of a file, then `defer(() => thing.close())` and `await testRedis()` (a Redis prefix deleted afterwards).
 */
import { afterEach } from 'vitest';
import { createTestRedis, type TestRedis } from './redis.js';

export function perTestCleanups(): { defer(fn: () => Promise<void>): void; testRedis(): Promise<TestRedis> } {
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
    async testRedis() {
      const r = await createTestRedis();
      defer(() => r.cleanup());
      return r;
    },
  };
}
