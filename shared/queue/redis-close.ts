import type { Redis } from 'ioredis';

/** Close a Redis connection politely when it is up (QUIT), at once otherwise; never throws. */
export async function closeRedis(client: Redis | undefined): Promise<void> {
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
