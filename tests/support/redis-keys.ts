/** Deleting every Redis key under a prefix (a test's, a seeded gateway's): no vitest, usable from scripts. */
import { Redis } from 'ioredis';

export async function deleteKeysUnder(url: string, prefix: string): Promise<void> {
  const raw = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await raw.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    raw.disconnect();
  }
}
