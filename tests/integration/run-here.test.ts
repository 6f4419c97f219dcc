/**
 * Running where the call was admitted (`ServiceContext.runHere`, services/runner/run-here.ts): in a process that runs
 * a runner, a call admitted there starts there while the runner has a free slot — no run job — and goes to the run
 * queue when the slots are full, when its local start fails before the run ends, and once the runner stopped. The
 * `queued` row is the durable hand-off in every case; the books balance after each.
 */
import { describe, expect, test as plain } from 'vitest';
import { runHandOff } from '../../services/runner/run-here.js';
import { RUN_QUEUE } from '../../shared/calls/jobs.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import { createMessaging } from '../../shared/messaging/index.js';
import type { Messaging, Queue } from '../../shared/messaging/types.js';
import { createLogger } from '../../shared/platform/log.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { gatewayTest as test } from '../support/gateway-fixture.js';

/** Counts the jobs added to the run queue through `messaging` (every role of a process shares its one messaging). */
function countRunJobs(messaging: Messaging): { added(): number } {
  let added = 0;
  const queues = messaging.queues;
  const queue = queues.queue.bind(queues);
  queues.queue = <T>(name: string): Queue<T> => {
    const q = queue<T>(name);
    if (name !== RUN_QUEUE) return q;
    return {
      add: (data, options) => {
        added++;
        return q.add(data, options);
      },
      pending: (jobId) => q.pending(jobId),
    };
  };
  return { added: () => added };
}

async function bareContext(): Promise<ServiceContext> {
  const messaging = await createMessaging();
  return {
    db: undefined as never, // the hand-off itself never reads the database
    registry: createRegistry([]),
    messaging,
    log: createLogger('test', 'silent'),
    settings: DEFAULT_SETTINGS,
    now: () => Date.now(),
  };
}

describe('the run hand-off', () => {
  plain('nothing runs here before the runner attached, nor beyond its slots; a failed start goes to the run queue; close waits', async () => {
    const ctx = await bareContext();
    const jobs = countRunJobs(ctx.messaging);
    const runs = runHandOff(ctx);
    expect(runs.run('c0')).toBe(false); // no runner yet: the caller queues it

    const started: string[] = [];
    const ends = new Map<string, () => void>();
    const worker = runs.attach(
      (callId) =>
        new Promise<void>((resolve, reject) => {
          started.push(callId);
          ends.set(callId, resolve);
          if (callId === 'boom') reject(new Error('the database is down'));
        }),
      2,
    );
    expect(runs.run('c1')).toBe(true);
    expect(runs.run('c2')).toBe(true);
    expect(runs.run('c3')).toBe(false); // both slots taken
    expect(started).toEqual(['c1', 'c2']);

    ends.get('c1')!();
    await new Promise((r) => setImmediate(r));
    expect(runs.run('boom')).toBe(true); // a slot came free
    await new Promise((r) => setImmediate(r));
    // Its start failed before the run ended: the run queue takes it, under the call's own job id.
    expect(jobs.added()).toBe(1);
    expect(await ctx.messaging.queues.queue(RUN_QUEUE).pending('boom')).toBe(true);

    let closed = false;
    const closing = worker.close().then(() => {
      closed = true;
    });
    expect(runs.run('c4')).toBe(false); // stopping: nothing new starts here
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false); // c2 still runs
    ends.get('c2')!();
    await closing;
    expect(closed).toBe(true);
    await ctx.messaging.close();
  });
});

test('a synchronous call in `holon serve` runs where it was admitted: answered, settled, no run job', async ({ gateway: g }) => {
  const jobs = countRunJobs(g.gw.context.messaging);
  await g.mandate({});
  for (let i = 0; i < 5; i++) {
    const r = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: `hi ${i}` } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ text: `HI ${i}` });
    expect(r.body.receipt).toMatchObject({ status: 'succeeded', billed: true });
  }
  expect(jobs.added()).toBe(0);
});

test('without a runner in the process the call is queued as a job, and a runner elsewhere runs it', async ({ gateway: g }) => {
  const { startTestGateway } = await import('../support/gateway.js');
  const api = await startTestGateway({ beside: g, roles: ['api', 'settler'] });
  try {
    const jobs = countRunJobs(api.gw.context.messaging);
    await g.mandate({});
    const r = await api.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'there' } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ text: 'THERE' });
    expect(jobs.added()).toBe(1);
  } finally {
    await api.stop();
  }
});
