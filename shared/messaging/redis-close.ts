import type { RedisClient } from './redis-target.js';

/** Close a Redis connection politely when it is up (QUIT), at once otherwise; never throws. */
export async function closeRedis(client: RedisClient | undefined): Promise<void> {
  if (!client || client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/**
 * One Redis connection opened on first use and closed once: `connection()` throws after `close()` (with
 * `<what> is closed`), and `close()` may be called any number of times.
 */
export function lazyRedis<T extends RedisClient>(what: string, open: () => T): { connection(): T; close(): Promise<void> } {
  let client: T | undefined;
  let closed = false;
  return {
    connection(): T {
      if (closed) throw new Error(`${what} is closed`);
      client ??= open();
      return client;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const c = client;
      client = undefined;
      await closeRedis(c);
    },
  };
}
