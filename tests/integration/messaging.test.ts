/**
 * The messaging contract: one suite, run against the Redis implementations (BullMQ / ioredis, each test under
 * its own key prefix) on one server and on a Redis Cluster (tests/support/redis-cluster.ts), and the in-process
 * twins. Timing assertions are lower bounds and "not yet" checks only.
 * Redelivery after a worker process is killed: tests/processes/worker-redelivery.test.ts.
 */
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { createMessaging } from '../../shared/messaging/index.js';
import { redisChannelName } from '../../shared/messaging/notifier.js';
import type { JobInfo, JobStartObserver, Messaging } from '../../shared/messaging/types.js';
import { perTestCleanups } from '../support/cleanups.js';
import { poll, sleep } from '../support/poll.js';
import { ensureRedisCluster } from '../support/redis-cluster.js';

/** Assertions that hold soon: retried every 20 ms for up to 10 s (poll's `assert` form). */
const SOON = { assert: true, timeoutMs: 10_000, intervalMs: 20 } as const;

const { defer, testRedis } = perTestCleanups();

/** A promise handlers wait on; opened at the latest when the test ends, so a failing test cannot hang close(). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  defer(async () => open());
  return { open, opened };
}

describe.each(['redis', 'redis cluster', 'memory'] as const)('messaging contract: %s', (kind) => {
  async function messaging(options: { onJobStart?: JobStartObserver } = {}): Promise<Messaging> {
    const m =
      kind === 'memory'
        ? await createMessaging(options)
        : await (async () => {
            const r = await testRedis(kind === 'redis cluster' ? await ensureRedisCluster() : undefined);
            return createMessaging({ redisUrl: r.url, prefix: r.prefix, ...options });
          })();
    defer(() => m.close());
    expect(m.kind).toBe(kind === 'memory' ? 'memory' : 'redis');
    return m;
  }

  describe('queues', () => {
    test('jobs are delivered with their data, asynchronously', async () => {
      const m = await messaging();
      const seen: Array<{ data: { callId: string; n: number }; job: JobInfo }> = [];
      m.queues.worker<{ callId: string; n: number }>('run', async (data, job) => void seen.push({ data, job }), { concurrency: 2 });
      const q = m.queues.queue<{ callId: string; n: number }>('run');

      const adding = q.add({ callId: 'call_1', n: 1 });
      expect(seen).toHaveLength(0); // never inside add
      await adding;
      await q.add({ callId: 'call_2', n: 2 });

      await poll(() => expect(seen).toHaveLength(2), { what: 'both messages', ...SOON });
      expect(seen.map((s) => s.data).sort((a, b) => a.n - b.n)).toEqual([
        { callId: 'call_1', n: 1 },
        { callId: 'call_2', n: 2 },
      ]);
      for (const s of seen) expect(s.job.attemptsMade).toBe(0);
      expect(new Set(seen.map((s) => s.job.id)).size).toBe(2);
    });

    test('pending: a job is pending while it waits, runs or awaits a retry; not once it is done or failed', async () => {
      const m = await messaging();
      const q = m.queues.queue<{ n: number }>('pending');
      expect(await q.pending('p-1')).toBe(false);
      await q.add({ n: 1 }, { jobId: 'p-1' });
      await q.add({ n: 2 }, { jobId: 'p-2', attempts: 2, backoffMs: 50 });
      expect(await q.pending('p-1')).toBe(true);
      const release = gate();
      let failures = 0;
      m.queues.worker<{ n: number }>(
        'pending',
        async (data) => {
          if (data.n === 1) await release.opened;
          else {
            failures += 1;
            throw new Error('always');
          }
        },
        { concurrency: 2 },
      );
      await poll(() => expect(failures).toBe(2), { what: 'two failures', ...SOON });
      expect(await q.pending('p-1')).toBe(true); // running
      await poll(async () => expect(await q.pending('p-2')).toBe(false), { what: 'p-2 to fail for good', ...SOON }); // failed for good
      release.open();
      await poll(async () => expect(await q.pending('p-1')).toBe(false), { what: 'p-1 to be done', ...SOON }); // done
    });

    test('a worker never runs more than `concurrency` handlers at once', async () => {
      const m = await messaging();
      const release = gate();
      let inFlight = 0;
      let maxInFlight = 0;
      let done = 0;
      m.queues.worker<{ i: number }>(
        'settle',
        async () => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await release.opened;
          inFlight -= 1;
          done += 1;
        },
        { concurrency: 3 },
      );
      const q = m.queues.queue<{ i: number }>('settle');
      for (let i = 0; i < 8; i++) await q.add({ i });

      await poll(() => expect(inFlight).toBe(3), { what: 'three jobs in flight', ...SOON });
      await sleep(300); // room for a fourth, if the limit were broken
      expect(inFlight).toBe(3);
      expect(maxInFlight).toBe(3);
      release.open();
      await poll(() => expect(done).toBe(8), { what: 'all eight jobs', ...SOON });
      expect(maxInFlight).toBe(3);
    });

    test('a failing job is retried with backoff while attempts remain, and the attempt counter grows', async () => {
      const m = await messaging();
      const calls: Array<{ attemptsMade: number; at: number }> = [];
      let succeeded = false;
      m.queues.worker<{ x: number }>(
        'flaky',
        async (_data, job) => {
          calls.push({ attemptsMade: job.attemptsMade, at: Date.now() });
          if (calls.length < 3) throw new Error(`transient ${calls.length}`);
          succeeded = true;
        },
        { concurrency: 1 },
      );
      await m.queues.queue<{ x: number }>('flaky').add({ x: 1 }, { attempts: 3, backoffMs: 100 });

      await poll(() => expect(succeeded).toBe(true), { what: 'the third attempt to succeed', ...SOON });
      expect(calls.map((c) => c.attemptsMade)).toEqual([0, 1, 2]);
      // Exponential: ≥ 100 ms before the 2nd attempt, ≥ 200 ms before the 3rd (10 ms of timer slack).
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(90);
      expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(190);
      await sleep(300);
      expect(calls).toHaveLength(3); // a success is not redelivered
    });

    test('a handler that always throws stops after `attempts`; without attempts a job runs once', async () => {
      const m = await messaging();
      const seen: number[] = [];
      m.queues.worker<unknown>(
        'doomed',
        async (_data, job) => {
          seen.push(job.attemptsMade);
          throw new Error('permanent');
        },
        { concurrency: 1 },
      );
      let once = 0;
      m.queues.worker<unknown>(
        'single',
        async () => {
          once += 1;
          throw new Error('permanent');
        },
        { concurrency: 1 },
      );
      await m.queues.queue('doomed').add({}, { attempts: 3, backoffMs: 50 });
      await m.queues.queue('single').add({});

      await poll(() => expect(seen).toHaveLength(3), { what: 'the three attempts', ...SOON });
      await poll(() => expect(once).toBe(1), { what: 'the single job', ...SOON });
      await sleep(600); // a 4th attempt would come after 200 ms; a retry of `single` after the default 1 s backoff
      expect(seen).toEqual([0, 1, 2]);
      expect(once).toBe(1);
    });

    test('jobId deduplicates while a job with that id is waiting, running or awaiting a retry', async () => {
      const m = await messaging();
      const q = m.queues.queue<{ v: string }>('dedup');
      // Waiting (no worker yet). Ids may be any string: BullMQ's own rules (no ':', not an integer) are hidden.
      await q.add({ v: 'first' }, { jobId: 'settle:rcpt_1' });
      await q.add({ v: 'second' }, { jobId: 'settle:rcpt_1' });
      await q.add({ v: 'third' }, { jobId: 'settle:rcpt_1' });
      await q.add({ v: 'int' }, { jobId: '42' });
      await q.add({ v: 'int again' }, { jobId: '42' });

      const seen: Array<{ id: string; v: string }> = [];
      let hold = gate();
      let failOnce = true;
      m.queues.worker<{ v: string }>(
        'dedup',
        async (data, job) => {
          seen.push({ id: job.id, v: data.v });
          if (job.id === 'run:1') await hold.opened;
          if (job.id === 'retry:1' && failOnce) {
            failOnce = false;
            throw new Error('once');
          }
        },
        { concurrency: 4 },
      );
      await poll(() => expect(seen).toHaveLength(2), { what: 'both jobs', ...SOON });
      expect(seen.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: '42', v: 'int' },
        { id: 'settle:rcpt_1', v: 'first' },
      ]);

      // Running.
      await q.add({ v: 'run a' }, { jobId: 'run:1' });
      await poll(() => expect(seen.filter((s) => s.id === 'run:1')).toHaveLength(1), { what: 'run:1 once', ...SOON });
      await q.add({ v: 'run b' }, { jobId: 'run:1' });
      hold.open();

      // Awaiting a retry.
      await q.add({ v: 'retry a' }, { jobId: 'retry:1', attempts: 2, backoffMs: 800 });
      await poll(() => expect(seen.filter((s) => s.id === 'retry:1')).toHaveLength(1), { what: 'retry:1 once', ...SOON });
      await q.add({ v: 'retry b' }, { jobId: 'retry:1', attempts: 2, backoffMs: 800 });
      await poll(() => expect(seen.filter((s) => s.id === 'retry:1')).toHaveLength(2), { what: 'retry:1 again', ...SOON });
      await sleep(500);
      expect(seen.filter((s) => s.id === 'run:1').map((s) => s.v)).toEqual(['run a']);
      expect(seen.filter((s) => s.id === 'retry:1').map((s) => s.v)).toEqual(['retry a', 'retry a']);

      // Once finished, the id may be used again.
      hold = gate();
      hold.open();
      await q.add({ v: 'run c' }, { jobId: 'run:1' });
      await poll(() => expect(seen.filter((s) => s.id === 'run:1').map((s) => s.v)).toEqual(['run a', 'run c']), { what: "run:1's two runs", ...SOON });
    });

    test('a delayed job is not delivered before its delay', async () => {
      const m = await messaging();
      const order: string[] = [];
      const at: Record<string, number> = {};
      m.queues.worker<{ name: string }>(
        'later',
        async (data) => {
          order.push(data.name);
          at[data.name] = Date.now();
        },
        { concurrency: 2 },
      );
      const q = m.queues.queue<{ name: string }>('later');
      const t0 = Date.now();
      await q.add({ name: 'late' }, { delayMs: 2000 });
      await q.add({ name: 'now' });

      await poll(() => expect(order).toContain('now'), { what: 'the job due now', ...SOON });
      await sleep(Math.max(0, t0 + 1000 - Date.now()));
      expect(order).toEqual(['now']); // 1 s in: not yet
      await poll(() => expect(order).toEqual(['now', 'late']), { what: 'the delayed job', ...SOON });
      expect(at.late! - t0).toBeGreaterThanOrEqual(1950);
    });

    test('a delayed job is pending and keeps its jobId while it waits: adding it again is a no-op (webhook retries)', async () => {
      const m = await messaging();
      const q = m.queues.queue<{ v: string }>('retry-later');
      await q.add({ v: 'first' }, { jobId: 'deliver-msg_1-s1', delayMs: 1500 });
      await q.add({ v: 'second' }, { jobId: 'deliver-msg_1-s1', delayMs: 10 });
      expect(await q.pending('deliver-msg_1-s1')).toBe(true);
      const seen: string[] = [];
      // A handler may queue its own follow-up, delayed, under another id.
      m.queues.worker<{ v: string }>(
        'retry-later',
        async (data) => {
          seen.push(data.v);
          if (data.v === 'first') await q.add({ v: 'follow-up' }, { jobId: 'deliver-msg_1-s2', delayMs: 300 });
        },
        { concurrency: 2 },
      );
      await sleep(700);
      expect(seen).toEqual([]); // the second add did not replace the delay
      await poll(() => expect(seen).toEqual(['first', 'follow-up']), { what: 'the message and its follow-up', ...SOON });
      await poll(async () => expect(await q.pending('deliver-msg_1-s2')).toBe(false), { what: "the follow-up's job to end", ...SOON });
    });

    test('a handler that postpones its job: back to delayed under its id (pending, adding it again a no-op), no attempt counted', async () => {
      const m = await messaging();
      const q = m.queues.queue<{ v: string }>('postponed');
      const runs: Array<{ v: string; at: number }> = [];
      const attempts = 2;
      m.queues.worker<{ v: string }>(
        'postponed',
        async (data) => {
          runs.push({ ...data, at: Date.now() });
          return runs.length < 3 ? { postponeMs: 400 } : undefined;
        },
        { concurrency: 2 },
      );
      await q.add({ v: 'one' }, { jobId: 'deliver-msg_2-s0', attempts, backoffMs: 10 });
      await poll(() => expect(runs).toHaveLength(1), { what: 'the first run', ...SOON });
      await poll(async () => expect(await q.pending('deliver-msg_2-s0')).toBe(true), { what: 'the postponed job pending', ...SOON });
      await q.add({ v: 'other data' }, { jobId: 'deliver-msg_2-s0' }); // a no-op: the postponed job exists
      await poll(() => expect(runs).toHaveLength(3), { what: 'three runs: two postponements outlast `attempts`', ...SOON });
      expect(runs.map((r) => r.v)).toEqual(['one', 'one', 'one']);
      expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(380);
      await poll(async () => expect(await q.pending('deliver-msg_2-s0')).toBe(false), { what: 'the job to end', ...SOON });
      await sleep(500);
      expect(runs).toHaveLength(3);
    });

    test('closing a worker waits for its running handler; later jobs wait for another worker', async () => {
      const m = await messaging();
      let started = false;
      let finished = false;
      const w = m.queues.worker<unknown>(
        'closing',
        async () => {
          started = true;
          await sleep(700);
          finished = true;
        },
        { concurrency: 1 },
      );
      const q = m.queues.queue('closing');
      await q.add({});
      await poll(() => expect(started).toBe(true), { what: 'the job to start', ...SOON });
      await w.close();
      expect(finished).toBe(true);

      await q.add({ after: true });
      await sleep(300);
      let second = 0;
      m.queues.worker<unknown>('closing', async () => void (second += 1), { concurrency: 1 });
      await poll(() => expect(second).toBe(1), { what: 'the job after the close', ...SOON });
    });

    test('jobs added before any worker exists are processed once one starts', async () => {
      const m = await messaging();
      const q = m.queues.queue<{ i: number }>('early');
      for (let i = 0; i < 5; i++) await q.add({ i });
      await sleep(200);
      const seen: number[] = [];
      m.queues.worker<{ i: number }>('early', async (data) => void seen.push(data.i), { concurrency: 2 });
      await poll(() => expect(seen).toHaveLength(5), { what: 'five jobs', ...SOON });
      expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
    });

    test('counts: jobs waiting, running and delayed, read without changing anything; an unused queue counts zeros', async () => {
      const m = await messaging();
      expect(await m.queues.counts('never-used')).toEqual({ waiting: 0, active: 0, delayed: 0 });
      const q = m.queues.queue<{ i: number }>('counted');
      await q.add({ i: 1 });
      await q.add({ i: 2 });
      await q.add({ i: 3 }, { delayMs: 60_000 });
      expect(await m.queues.counts('counted')).toEqual({ waiting: 2, active: 0, delayed: 1 });
      expect(await m.queues.counts('counted')).toEqual({ waiting: 2, active: 0, delayed: 1 }); // reading moved nothing
      const release = gate();
      const seen: number[] = [];
      m.queues.worker<{ i: number }>(
        'counted',
        async (data) => {
          seen.push(data.i);
          await release.opened;
        },
        { concurrency: 1 },
      );
      await poll(async () => expect(await m.queues.counts('counted')).toEqual({ waiting: 1, active: 1, delayed: 1 }), {
        what: 'one job of each state',
        ...SOON,
      });
      release.open();
      await poll(async () => expect(await m.queues.counts('counted')).toEqual({ waiting: 0, active: 0, delayed: 1 }), {
        what: 'only the delayed job left',
        ...SOON,
      });
      expect(seen.sort()).toEqual([1, 2]);
    });

    test('onJobStart: told once per job, on its first delivery, with the queue and how long it waited since due', async () => {
      const started: Array<{ queue: string; waitMs: number }> = [];
      const m = await messaging({ onJobStart: (queue, waitMs) => void started.push({ queue, waitMs }) });
      const q = m.queues.queue<{ name: string }>('observed');
      await q.add({ name: 'early' });
      await q.add({ name: 'flaky' }, { attempts: 2, backoffMs: 20 });
      await sleep(300);
      let flaky = 0;
      const done: string[] = [];
      m.queues.worker<{ name: string }>(
        'observed',
        async (data) => {
          if (data.name === 'flaky' && ++flaky === 1) throw new Error('once');
          done.push(data.name);
        },
        { concurrency: 2 },
      );
      await poll(() => expect(done.sort()).toEqual(['early', 'flaky']), { what: 'both jobs to end', ...SOON });
      expect(flaky).toBe(2);
      // Two jobs, two first deliveries: the retry is not a new wait.
      expect(started.map((s) => s.queue)).toEqual(['observed', 'observed']);
      for (const s of started) expect(s.waitMs).toBeGreaterThanOrEqual(250);
    });
  });

  describe('notifier', () => {
    test('publish reaches every local subscriber of the channel and no other channel; unsubscribe stops delivery', async () => {
      const m = await messaging();
      const got: Record<string, string[]> = { a: [], b: [], c: [], other: [] };
      const unA = await m.notifier.subscribe('call:1', (msg) => got.a!.push(msg));
      const unB = await m.notifier.subscribe('call:1', (msg) => got.b!.push(msg));
      const unC = await m.notifier.subscribe('call:1', (msg) => got.c!.push(msg));
      await m.notifier.subscribe('call:2', (msg) => got.other!.push(msg));
      await m.notifier.subscribe('call:1', () => {
        throw new Error('a broken listener does not stop the others');
      });

      await m.notifier.publish('call:1', 'done');
      await m.notifier.publish('call:2', 'marker');
      await poll(() => expect(got.other).toEqual(['marker']), { what: 'the marker', ...SOON });
      await poll(() => expect([got.a, got.b, got.c]).toEqual([['done'], ['done'], ['done']]), { what: 'a, b and c done', ...SOON });

      await unA();
      await unA(); // idempotent
      await m.notifier.publish('call:1', 'again');
      await poll(() => expect(got.b).toEqual(['done', 'again']), { what: 'b again', ...SOON });
      expect(got.c).toEqual(['done', 'again']);
      expect(got.a).toEqual(['done']);

      await unB();
      await unC();
      await m.notifier.publish('call:1', 'unheard');
      await m.notifier.publish('call:2', 'marker 2');
      await poll(() => expect(got.other).toEqual(['marker', 'marker 2']), { what: 'the second marker', ...SOON });
      expect(got.b).toEqual(['done', 'again']);
      expect(got.c).toEqual(['done', 'again']);

      // A channel everyone left can be subscribed to again.
      const back: string[] = [];
      await m.notifier.subscribe('call:1', (msg) => back.push(msg));
      await m.notifier.publish('call:1', 'back');
      await poll(() => expect(back).toEqual(['back']), { what: 'the message to the listener back', ...SOON });
    });

    test('many listeners on one channel each get every message, in order', async () => {
      const m = await messaging();
      const lists = Array.from({ length: 200 }, () => [] as string[]);
      const unsubscribes = await Promise.all(lists.map((l) => m.notifier.subscribe('busy', (msg) => l.push(msg))));
      for (const msg of ['1', '2', '3']) await m.notifier.publish('busy', msg);
      await poll(
        () => {
          for (const l of lists) expect(l).toEqual(['1', '2', '3']);
        },
        { what: 'every listener to hear all three', ...SOON },
      );
      await Promise.all(unsubscribes.slice(0, 199).map((u) => u()));
      await m.notifier.publish('busy', '4');
      await poll(() => expect(lists[199]).toEqual(['1', '2', '3', '4']), { what: 'the last listener to hear the fourth', ...SOON });
      expect(lists[0]).toEqual(['1', '2', '3']);
    });
  });

  describe('ephemeral store', () => {
    test('put, peek, take once, delete', async () => {
      const m = await messaging();
      await m.store.put('input:call_1', '{"q":"hello"}', 60);
      expect(await m.store.peek('input:call_1')).toBe('{"q":"hello"}');
      expect(await m.store.peek('input:call_1')).toBe('{"q":"hello"}');
      expect(await m.store.take('input:call_1')).toBe('{"q":"hello"}');
      expect(await m.store.take('input:call_1')).toBeUndefined();
      expect(await m.store.peek('input:call_1')).toBeUndefined();
      expect(await m.store.take('never-put')).toBeUndefined();

      await m.store.put('result:call_2', 'v1', 60);
      await m.store.put('result:call_2', 'v2', 60);
      expect(await m.store.peek('result:call_2')).toBe('v2');
      await m.store.delete('result:call_2');
      expect(await m.store.peek('result:call_2')).toBeUndefined();
      await m.store.delete('result:call_2'); // deleting nothing is fine
    });

    test('values expire after their TTL', async () => {
      const m = await messaging();
      await m.store.put('short', 'gone soon', 1);
      await m.store.put('long', 'stays', 30);
      expect(await m.store.peek('short')).toBe('gone soon');
      await sleep(1500);
      expect(await m.store.peek('short')).toBeUndefined();
      expect(await m.store.take('short')).toBeUndefined();
      expect(await m.store.take('long')).toBe('stays');
    });

    test('a value kept for its consumers: read any number of times; deleted when the last named consumer has it, then `collected`', async () => {
      const m = await messaging();
      // Named before the value exists (a call's consumers are declared at admission, its output comes later).
      await m.store.keepFor('output:c1', ['sync', 'webhook'], 60);
      expect(await m.store.peekKept('output:c1')).toEqual({ kind: 'absent' });
      await m.store.put('output:c1', '{"a":1}', 60);
      for (let i = 0; i < 3; i++) expect(await m.store.peekKept('output:c1')).toEqual({ kind: 'kept', value: '{"a":1}' });
      // The webhook first: the synchronous answer still needs it.
      expect(await m.store.handOver('output:c1', 'webhook', 60)).toEqual({ kind: 'kept', value: '{"a":1}' });
      expect(await m.store.peekKept('output:c1')).toEqual({ kind: 'kept', value: '{"a":1}' });
      // A consumer handing over twice changes nothing for the others.
      expect(await m.store.handOver('output:c1', 'webhook', 60)).toEqual({ kind: 'kept', value: '{"a":1}' });
      expect(await m.store.peekKept('output:c1')).toEqual({ kind: 'kept', value: '{"a":1}' });
      // The last one: it gets the value, and the value is gone, collected.
      expect(await m.store.handOver('output:c1', 'sync', 60)).toEqual({ kind: 'kept', value: '{"a":1}' });
      expect(await m.store.peekKept('output:c1')).toEqual({ kind: 'collected' });
      expect(await m.store.peek('output:c1')).toBeUndefined();
      expect(await m.store.handOver('output:c1', 'sync', 60)).toEqual({ kind: 'collected' });

      // No consumer named: the first hand-over collects it; a value nobody hands over is only ever read.
      await m.store.put('output:c2', 'v', 60);
      expect(await m.store.handOver('output:c2', 'sync', 60)).toEqual({ kind: 'kept', value: 'v' });
      expect(await m.store.peekKept('output:c2')).toEqual({ kind: 'collected' });
      // Never put (or expired): absent, and handing it over leaves no note.
      expect(await m.store.handOver('output:never', 'sync', 60)).toEqual({ kind: 'absent' });
      expect(await m.store.peekKept('output:never')).toEqual({ kind: 'absent' });
      await expect(m.store.keepFor('output:c3', [''], 60)).rejects.toThrow(TypeError);
      await expect(m.store.handOver('output:c3', 'sync', 0)).rejects.toThrow(TypeError);
    });

    test('two consumers handing over at once: both get the value, it ends collected, never kept for nobody', async () => {
      const m = await messaging();
      for (let i = 0; i < 20; i++) {
        const key = `output:race${i}`;
        await m.store.keepFor(key, ['sync', 'webhook'], 60);
        await m.store.put(key, `v${i}`, 60);
        const [a, b] = await Promise.all([m.store.handOver(key, 'sync', 60), m.store.handOver(key, 'webhook', 60)]);
        expect([a, b]).toEqual([
          { kind: 'kept', value: `v${i}` },
          { kind: 'kept', value: `v${i}` },
        ]);
        expect(await m.store.peekKept(key)).toEqual({ kind: 'collected' });
      }
    });

    test('a kept value expires after its TTL: absent, not collected; the list of consumers expires too', async () => {
      const m = await messaging();
      await m.store.keepFor('output:t1', ['sync', 'webhook'], 30);
      await m.store.put('output:t1', 'short', 1);
      await m.store.keepFor('output:t2', ['sync', 'webhook'], 1);
      await m.store.put('output:t2', 'outlives its list', 30);
      await m.store.put('output:t3', 'collected soon', 30);
      expect(await m.store.handOver('output:t3', 'sync', 1)).toEqual({ kind: 'kept', value: 'collected soon' });
      await sleep(1500);
      expect(await m.store.peekKept('output:t1')).toEqual({ kind: 'absent' });
      expect(await m.store.handOver('output:t1', 'sync', 30)).toEqual({ kind: 'absent' });
      // Its consumers' list ended: nobody is due any more, so the next hand-over collects it.
      expect(await m.store.handOver('output:t2', 'webhook', 30)).toEqual({ kind: 'kept', value: 'outlives its list' });
      expect(await m.store.peekKept('output:t2')).toEqual({ kind: 'collected' });
      // The note that it was collected lives for the TTL given with the hand-over.
      expect(await m.store.peekKept('output:t3')).toEqual({ kind: 'absent' });
    });
  });
});

describe('messaging: Redis only', () => {
  test('a delayed job survives its process: a new backend on the same prefix delivers it after its delay', async () => {
    const r = await testRedis();
    const first = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
    const t0 = Date.now();
    await first.queues.queue<{ v: string }>('deliver').add({ v: 'later' }, { jobId: 'deliver-msg_2-s3', delayMs: 1500 });
    await first.close();
    const second = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
    defer(() => second.close());
    const seen: Array<{ v: string; at: number }> = [];
    second.queues.worker<{ v: string }>('deliver', async (data) => void seen.push({ v: data.v, at: Date.now() }), { concurrency: 1 });
    await poll(() => expect(seen.map((s) => s.v)).toEqual(['later']), { what: 'the later message', ...SOON });
    expect(seen[0]!.at - t0).toBeGreaterThanOrEqual(1450);
  });

  test('two gateways with different prefixes on one Redis never see each other', async () => {
    const r = await testRedis();
    const a = await createMessaging({ redisUrl: r.url, prefix: `${r.prefix}a` });
    defer(() => a.close());
    const b = await createMessaging({ redisUrl: r.url, prefix: `${r.prefix}b` });
    defer(() => b.close());

    const seenA: string[] = [];
    const seenB: string[] = [];
    b.queues.worker<{ from: string }>('run', async (data) => void seenB.push(data.from), { concurrency: 4 });
    await a.queues.queue<{ from: string }>('run').add({ from: 'a' }, { jobId: 'same-id' });
    await sleep(300);
    a.queues.worker<{ from: string }>('run', async (data) => void seenA.push(data.from), { concurrency: 4 });
    await b.queues.queue<{ from: string }>('run').add({ from: 'b' }, { jobId: 'same-id' });
    await poll(() => expect(seenA).toEqual(['a']), { what: "a's message", ...SOON });
    await poll(() => expect(seenB).toEqual(['b']), { what: "b's message", ...SOON });
    await sleep(300);
    expect(seenA).toEqual(['a']);
    expect(seenB).toEqual(['b']);

    const heardB: string[] = [];
    await b.notifier.subscribe('call:1', (msg) => heardB.push(msg));
    await a.notifier.publish('call:1', 'for a');
    await b.notifier.publish('call:1', 'for b');
    await poll(() => expect(heardB).toEqual(['for b']), { what: "b's message only", ...SOON });

    await a.store.put('k', 'a', 60);
    expect(await b.store.peek('k')).toBeUndefined();
    expect(await a.store.take('k')).toBe('a');
  });

  test('a kept value handed over by two processes at once (own connections): both get it, exactly one collects it', async () => {
    const r = await testRedis();
    const [api, settler] = await Promise.all([createMessaging({ redisUrl: r.url, prefix: r.prefix }), createMessaging({ redisUrl: r.url, prefix: r.prefix })]);
    defer(() => api.close());
    defer(() => settler.close());
    for (let i = 0; i < 50; i++) {
      const key = `output:two${i}`;
      await api.store.keepFor(key, ['sync', 'webhook'], 60);
      await settler.store.put(key, `v${i}`, 60);
      const got = await Promise.all([api.store.handOver(key, 'sync', 60), settler.store.handOver(key, 'webhook', 60)]);
      expect(got).toEqual([
        { kind: 'kept', value: `v${i}` },
        { kind: 'kept', value: `v${i}` },
      ]);
      expect(await api.store.peekKept(key)).toEqual({ kind: 'collected' });
      expect(await settler.store.peek(key)).toBeUndefined();
    }
    // What the store leaves in Redis: the note, no output, no list of consumers.
    expect((await r.client.keys('*two0*')).sort()).toEqual([`e:output:two0:gone`].map((k) => `${r.prefix}:${k}`));
  });

  test('one Redis subscription per channel however many local listeners; none once the last leaves', async () => {
    const r = await testRedis();
    const m = await createMessaging({ redisUrl: r.url, prefix: r.prefix });
    defer(() => m.close());
    const raw = new Redis(r.url);
    defer(async () => void raw.disconnect());
    const channel = redisChannelName(r.prefix, 'call:9');
    const subscribers = async () => {
      const reply = (await raw.pubsub('NUMSUB', channel)) as [string, number];
      return Number(reply[1]);
    };

    const unsubscribes = await Promise.all(Array.from({ length: 50 }, () => m.notifier.subscribe('call:9', () => {})));
    expect(await subscribers()).toBe(1);
    await Promise.all(unsubscribes.slice(0, 49).map((u) => u()));
    expect(await subscribers()).toBe(1);
    await unsubscribes[49]!();
    expect(await subscribers()).toBe(0);
  });
});
