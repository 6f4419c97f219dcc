/**
 * BullMQ's redelivery (shared/messaging/bullmq.ts) when the process of a worker that took a job is killed with
 * SIGKILL: the job is delivered again, counted as an attempt, and a job that stalls twice is failed. The worker runs in
 * a child process (tests/support/stalling-worker.ts), each test under its own Redis key prefix.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { createBullBackend, type BullBackend } from '../../shared/messaging/bullmq.js';
import type { JobInfo } from '../../shared/messaging/types.js';
import { perTestCleanups } from '../support/cleanups.js';
import { poll } from '../support/poll.js';
import type { TestRedis } from '../support/redis.js';

/** Assertions that hold soon: retried every 20 ms for up to 10 s (poll's `assert` form). */
const SOON = { assert: true, timeoutMs: 10_000, intervalMs: 20 } as const;

const { defer, testRedis } = perTestCleanups();

describe('redelivery after a worker process is killed', () => {
  const script = fileURLToPath(new URL('../support/stalling-worker.ts', import.meta.url));
  // Short locks so the test is quick; production uses DEFAULT_STALL_SETTINGS (10 s lock, 5 s checks).
  const LOCK_MS = 2000;
  const STALLED_MS = 500;

  /** Starts a worker in a child process and resolves once it has taken a job (then it hangs). */
  async function stallingWorker(r: TestRedis, queue: string): Promise<{ child: ChildProcess; taken: Promise<{ id: string; attemptsMade: number }> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', script, r.url, r.prefix, queue, String(LOCK_MS), String(STALLED_MS)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    defer(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    });
    const taken = new Promise<{ id: string; attemptsMade: number }>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        const msg = JSON.parse(line) as { event: string; id: string; attemptsMade: number };
        if (msg.event === 'taken') resolve(msg);
      });
      child.once('exit', (code, signal) => reject(new Error(`stalling worker exited (${code ?? signal}) before taking a job`)));
    });
    taken.catch(() => {});
    return { child, taken };
  }

  async function kill9(child: ChildProcess): Promise<void> {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  function backend(r: TestRedis): BullBackend {
    const b = createBullBackend({ connection: r.url, prefix: r.prefix, worker: { stalledIntervalMs: STALLED_MS } });
    defer(() => b.close());
    return b;
  }

  test('a job whose worker was killed with SIGKILL is delivered again, counted as an attempt', async () => {
    const r = await testRedis();
    const b = backend(r);
    await b.queue<{ callId: string }>('crash').add({ callId: 'call_7' }, { jobId: 'run:call_7' });

    const first = await stallingWorker(r, 'crash');
    expect(await first.taken).toEqual(expect.objectContaining({ id: 'run:call_7', attemptsMade: 0 }));
    await kill9(first.child);
    expect(await b.jobState('crash', 'run:call_7')).toBe('active'); // still held by the dead worker

    const redelivered: Array<{ data: { callId: string }; job: JobInfo }> = [];
    b.worker<{ callId: string }>('crash', async (data, job) => void redelivered.push({ data, job }), { concurrency: 1 });
    await poll(() => expect(redelivered).toHaveLength(1), { what: 'the redelivery', ...SOON, timeoutMs: 20_000 });
    expect(redelivered[0]).toEqual({ data: { callId: 'call_7' }, job: { id: 'run:call_7', attemptsMade: 1 } });
    await poll(async () => expect(await b.jobState('crash', 'run:call_7')).toBe('unknown'), { what: 'run:call_7 to be completed and removed', ...SOON }); // completed and removed
  });

  test('a job that stalls twice is failed, not delivered a third time', async () => {
    const r = await testRedis();
    const b = backend(r);
    await b.queue<{ callId: string }>('crash').add({ callId: 'call_8' }, { jobId: 'run:call_8' });

    const first = await stallingWorker(r, 'crash');
    expect((await first.taken).attemptsMade).toBe(0);
    await kill9(first.child);
    const second = await stallingWorker(r, 'crash'); // its stalled checker recovers the job, then it takes it
    expect(await second.taken).toEqual(expect.objectContaining({ id: 'run:call_8', attemptsMade: 1 }));
    await kill9(second.child);

    let delivered = 0;
    b.worker<unknown>('crash', async () => void (delivered += 1), { concurrency: 1 });
    await poll(async () => expect(await b.jobState('crash', 'run:call_8')).toBe('failed'), { what: 'run:call_8 to fail', ...SOON, timeoutMs: 20_000 });
    expect(delivered).toBe(0);
  });
});
