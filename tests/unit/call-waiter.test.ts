/**
 * The call waiter (shared/calls/answer/waiter.ts): a wait for a call queued here trusts the `calls-done` notices it heard —
 * one that came before the wait began is remembered — and reads no receipt; any other wait reads the receipt row
 * once, so a call that ended before anyone listened is still seen.
 */
import { describe, expect, test } from 'vitest';
import { CALLS_DONE_CHANNEL } from '../../shared/calls/wire.js';
import { createCallWaiter } from '../../shared/calls/answer/waiter.js';
import type { Db } from '../../shared/db/connect.js';
import { createMessaging } from '../../shared/messaging/index.js';

/** A stand-in for the database that counts receipt reads and answers whether the receipt exists. */
function receipts(existing: readonly string[]) {
  let reads = 0;
  const db = ((table: string) => {
    expect(table).toBe('receipts');
    return {
      where: ({ id }: { id: string }) => ({
        first: async () => {
          reads++;
          return existing.includes(id) ? { id } : undefined;
        },
      }),
    };
  }) as unknown as Db;
  return { db, reads: () => reads };
}

describe('the call waiter', () => {
  test('a call queued here that ended before the wait began: its notice was remembered, no receipt read', async () => {
    const messaging = await createMessaging();
    const r = receipts([]);
    const waiter = await createCallWaiter(r.db, messaging.notifier);
    try {
      await messaging.notifier.publish(CALLS_DONE_CHANNEL, 'r_early');
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await waiter.wait('r_early', 5_000, { queuedHere: true })).toBe(true);
      // A notice that comes while waiting wakes the wait too.
      const later = waiter.wait('r_later', 5_000, { queuedHere: true });
      await messaging.notifier.publish(CALLS_DONE_CHANNEL, 'r_later');
      expect(await later).toBe(true);
      // No notice at all: the wait ends at its timeout (the caller then reads the receipt itself).
      expect(await waiter.wait('r_never', 50, { queuedHere: true })).toBe(false);
      expect(r.reads()).toBe(0);
    } finally {
      await waiter.close();
      await messaging.close();
    }
  });

  test('any other wait reads the receipt once: a call that ended before anyone listened is seen at once', async () => {
    const messaging = await createMessaging();
    const r = receipts(['r_done']);
    const waiter = await createCallWaiter(r.db, messaging.notifier);
    try {
      expect(await waiter.wait('r_done', 5_000)).toBe(true);
      expect(await waiter.wait('r_open', 50)).toBe(false);
      expect(r.reads()).toBe(2);
    } finally {
      await waiter.close();
      await messaging.close();
    }
  });
});
