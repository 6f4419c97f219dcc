/**
 * A settler process's delivery slots (services/settler/delivery-slots.ts), over the pure fair schedule: an attempt
 * goes at once when its account is below its cap; otherwise it waits its turn (round robin, when a slot is
 * released) or is postponed (its account's waiting room full, its hold over, its host's breaker open); a release
 * with a host failure counts towards the breaker, and after the cool-down one probe goes. The clock is the test's.
 */
import { describe, expect, test } from 'vitest';
import { deliverySlots } from '../../services/settler/delivery-slots.js';

function slotsAt(options: { slots?: number; accountCap?: number; holdMs?: number } = {}) {
  let now = 1_000_000;
  const slots = deliverySlots({
    slots: options.slots ?? 4,
    accountCap: options.accountCap ?? 2,
    breaker: { failures: 2, coolDownMs: 1_000 },
    holdMs: options.holdMs ?? 10_000,
    now: () => now,
  });
  return { slots, advance: (ms: number) => (now += ms) };
}

const attempt = (key: string, account: string, host = `${account}.test:443`) => ({ key, account, host });

/** Settles `p` if it settles within this turn of the event loop (and the microtasks after it). */
async function settled<T>(p: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([p, new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')))]);
}

describe('delivery slots of one process', () => {
  test('an account at its cap waits; another account goes at once; a release hands the slot to the one waiting', async () => {
    const { slots } = slotsAt({ accountCap: 2 });
    const a1 = await slots.acquire(attempt('a1', 'alice'));
    const a2 = await slots.acquire(attempt('a2', 'alice'));
    expect([a1.kind, a2.kind]).toEqual(['go', 'go']);
    const a3 = slots.acquire(attempt('a3', 'alice'));
    expect(await settled(a3)).toBe('waiting');
    expect((await slots.acquire(attempt('b1', 'bob'))).kind).toBe('go');
    expect(slots.inFlight()).toBe(3);
    if (a1.kind === 'go') a1.release('success');
    expect((await a3).kind).toBe('go');
    expect(slots.inFlight()).toBe(3);
  });

  test('an account whose cap’s worth already waits is postponed at once, and so is the same attempt twice', async () => {
    const { slots } = slotsAt({ accountCap: 1 });
    expect((await slots.acquire(attempt('a1', 'alice'))).kind).toBe('go');
    const waiting = slots.acquire(attempt('a2', 'alice'));
    expect(await settled(waiting)).toBe('waiting');
    const third = await slots.acquire(attempt('a3', 'alice'));
    expect(third).toMatchObject({ kind: 'postpone' });
    expect(third.kind === 'postpone' && third.ms).toBeGreaterThanOrEqual(10_000);
    expect(await slots.acquire(attempt('a2', 'alice'))).toMatchObject({ kind: 'postpone' });
  });

  test('an attempt that waited its hold without a turn is postponed, and no longer counts as waiting', async () => {
    const { slots } = slotsAt({ accountCap: 1, holdMs: 20 });
    expect((await slots.acquire(attempt('a1', 'alice'))).kind).toBe('go');
    expect(await slots.acquire(attempt('a2', 'alice'))).toMatchObject({ kind: 'postpone' });
    // Its place is free again: another of alice's attempts may wait.
    expect(await settled(slots.acquire(attempt('a3', 'alice')))).toBe('waiting');
  });

  test('a host that failed twice: its attempts are postponed to the cool-down’s end without a slot; then one probe; its success closes it', async () => {
    const { slots, advance } = slotsAt({ slots: 4, accountCap: 4 });
    const host = 'dead.test:443';
    for (const key of ['x1', 'x2']) {
      const s = await slots.acquire(attempt(key, 'alice', host));
      if (s.kind === 'go') s.release('failure');
    }
    const held = await slots.acquire(attempt('x3', 'bob', host));
    expect(held).toMatchObject({ kind: 'postpone' });
    expect(held.kind === 'postpone' && held.ms).toBeGreaterThanOrEqual(1_000);
    expect(slots.inFlight()).toBe(0);
    expect((await slots.acquire(attempt('y1', 'alice', 'alive.test:443'))).kind).toBe('go'); // other hosts go on
    advance(1_000);
    const probe = await slots.acquire(attempt('x4', 'bob', host));
    expect(probe.kind).toBe('go');
    expect(await slots.acquire(attempt('x5', 'carol', host))).toMatchObject({ kind: 'postpone' }); // one probe at a time
    if (probe.kind === 'go') probe.release('success');
    expect((await slots.acquire(attempt('x6', 'carol', host))).kind).toBe('go');
  });

  test('a release counts once, however often it is called', async () => {
    const { slots } = slotsAt({ accountCap: 1 });
    const a1 = await slots.acquire(attempt('a1', 'alice'));
    const b1 = await slots.acquire(attempt('b1', 'bob'));
    if (a1.kind === 'go') {
      a1.release('success');
      a1.release('success');
    }
    expect(slots.inFlight()).toBe(1);
    expect(b1.kind).toBe('go');
  });
});
