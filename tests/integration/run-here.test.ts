/**
 * A call admitted in a process that runs a runner runs there (shared/calls/run/run-here.ts): the admission writes its
 * row `running` and stands for the claim; the run closes it in its settlement's own transaction (shared/calls/settle/
 * settle.ts `Closing`). What that must keep: exactly one close, the books exact, a process that dies leaves nothing
 * held past the sweep, and calls beyond the runner's slots go through the run queue.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { unbilled, type CallOutcome } from '../../shared/calls/call-outcome.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import { settleOne } from '../../shared/calls/settle/settle.js';
import { closeCallRow } from '../../shared/calls/transitions.js';
import { CALLS_DONE_CHANNEL, RUN_QUEUE } from '../../shared/calls/wire.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import { audit } from '../../shared/ledger/audit.js';
import { admitCall } from '../../shared/ledger/money-functions.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { generateSigningKey } from '../../shared/signing/keys.js';
import { sweep } from '../../services/settler/sweeper.js';
import { row, world } from '../support/admitted-calls.js';
import { dbTest, type TestDatabase } from '../support/db.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';

const test = dbTest('postgres');

const billed = (own: bigint): CallOutcome => ({ kind: 'success', billed: true, own: own.toString(), duration_ms: 3 });
const facts = (id: string) => ({ agentId: 'acme/noop', agentVersion: '1.0.0', payer: `${id}-payer`, currency: 'EUR' });

/** An engine that settles here, over the test's database, and a call admitted `running` under a mandate of 1 EUR. */
async function admittedRunning(db: TestDatabase, id: string, timeoutMs = 30_000): Promise<CallEngine> {
  const ctx: ServiceContext = {
    db: db.knex,
    registry: createRegistry([]),
    messaging: await createMessaging(),
    log: createLogger('test', 'silent'),
    settings: DEFAULT_SETTINGS,
    now: () => Date.now(),
    signingKey: generateSigningKey(),
  };
  const mandateId = await world(db, `${id}-payer`, 1_000_000n, 1_000_000n);
  expect(await admitCall(db.knex, { ...row(id, mandateId, `${id}-payer`, 100_000n), timeout_ms: timeoutMs, status: 'running' })).toBe('reserved');
  return createCallEngine(ctx, { settlesHere: true });
}

async function callRow(db: TestDatabase, id: string) {
  return db.knex('calls').where({ id }).first('status', 'error_code', 'outcome', 'started_at', 'deadline_at', 'finished_at');
}

async function budget(db: TestDatabase, id: string) {
  const m = await db
    .knex('mandates')
    .where({ id: `${id}-payer/m` })
    .first('spent', 'reserved');
  const b = await db
    .knex('account_balances')
    .where({ account: `${id}-payer`, currency: 'EUR' })
    .first('balance', 'held');
  return { spent: BigInt(m.spent), reserved: BigInt(m.reserved), balance: BigInt(b.balance), held: BigInt(b.held) };
}

describe('a call admitted running', () => {
  test('is running from its admission: started, its deadline its timeout from now', async ({ db }) => {
    const engine = await admittedRunning(db, 'started');
    try {
      const r = await callRow(db, 'started');
      expect(r.status).toBe('running');
      expect(r.started_at).not.toBeNull();
      const window = new Date(r.deadline_at).getTime() - new Date(r.started_at).getTime();
      expect(window).toBe(30_000);
      expect(await engine.close('started', 'running', unbilled('cancelled'), facts('started'))).toBe(true);
    } finally {
      await engine.resources.messaging.close();
    }
  });

  test('is closed and settled in one transaction: the outcome, the charge and the release, exactly', async ({ db }) => {
    const engine = await admittedRunning(db, 'folded');
    try {
      expect(await engine.close('folded', 'running', billed(37_000n), facts('folded'))).toBe(true);
      const r = await callRow(db, 'folded');
      expect(r).toMatchObject({ status: 'succeeded', error_code: null, outcome: { kind: 'success', billed: true, own: '37000' } });
      expect(r.finished_at).not.toBeNull();
      expect(await budget(db, 'folded')).toEqual({ spent: 37_000n, reserved: 0n, balance: 1_000_000n - 37_000n, held: 0n });
      expect(await db.knex('receipts').where({ id: 'folded' }).first('status', 'billed')).toMatchObject({ status: 'succeeded', billed: true });
      // Closing it again changes nothing: the row is no longer running.
      expect(await engine.close('folded', 'running', billed(37_000n), facts('folded'))).toBe(false);
      expect((await budget(db, 'folded')).spent).toBe(37_000n);
      expect((await audit(db.knex)).problems).toEqual([]);
    } finally {
      await engine.resources.messaging.close();
    }
  });

  test('closed by someone else first (the sweeper): the run’s close is a no-op, nothing charged twice', async ({ db }) => {
    const engine = await admittedRunning(db, 'raced');
    try {
      expect(await closeCallRow(db.knex, 'raced', 'running', unbilled('gateway_restarted'))).toBe(true);
      expect(await engine.close('raced', 'running', billed(50_000n), facts('raced'))).toBe(false);
      expect(await engine.settle('raced')).toBe('settled');
      expect(await callRow(db, 'raced')).toMatchObject({ status: 'failed', error_code: 'gateway_restarted' });
      expect(await budget(db, 'raced')).toEqual({ spent: 0n, reserved: 0n, balance: 1_000_000n, held: 0n });
      expect((await audit(db.knex)).problems).toEqual([]);
    } finally {
      await engine.resources.messaging.close();
    }
  });

  test('a close whose batch committed but whose answer was lost is recognised as its own, and its waiters told', async ({ db }) => {
    const engine = await admittedRunning(db, 'lost');
    const ctx = engine.resources;
    const heard: string[] = [];
    const unsubscribe = await ctx.messaging.notifier.subscribe(CALLS_DONE_CHANNEL, (m) => heard.push(m));
    try {
      const closing = { outcome: billed(20_000n), facts: facts('lost'), at: new Date() };
      expect(await engine.close('lost', 'running', closing.outcome, closing.facts)).toBe(true);
      heard.length = 0;
      // The batch's answer lost: the same close, on its own, finds its own outcome written.
      expect(await settleOne(ctx, { callId: 'lost', closing })).toBe('settled');
      expect(heard.some((m) => m.includes('lost'))).toBe(true);
      // Another outcome found there is not this close's: nothing to do (its output is not kept).
      expect(await settleOne(ctx, { callId: 'lost', closing: { ...closing, outcome: unbilled('agent_error') } })).toBe('noop');
      expect((await budget(db, 'lost')).spent).toBe(20_000n);
      expect((await audit(db.knex)).problems).toEqual([]);
    } finally {
      await unsubscribe();
      await ctx.messaging.close();
    }
  });

  test('a close written whose settlement failed after it: the same close, on its own, settles it as this close', async ({ db }) => {
    const engine = await admittedRunning(db, 'half');
    const ctx = engine.resources;
    try {
      const closing = { outcome: billed(30_000n), facts: facts('half'), at: new Date() };
      // What a settlement that failed after its own UPDATE leaves: the row closed with this outcome, not settled.
      expect(await closeCallRow(db.knex, 'half', 'running', closing.outcome)).toBe(true);
      expect(await settleOne(ctx, { callId: 'half', closing })).toBe('settled');
      expect(await callRow(db, 'half')).toMatchObject({ status: 'succeeded', outcome: { own: '30000' } });
      expect(await budget(db, 'half')).toEqual({ spent: 30_000n, reserved: 0n, balance: 1_000_000n - 30_000n, held: 0n });
      expect((await audit(db.knex)).problems).toEqual([]);
    } finally {
      await ctx.messaging.close();
    }
  });

  test('its process dies before the run ends: the sweep closes it past its deadline, unbilled, the hold released', async ({ db }) => {
    const engine = await admittedRunning(db, 'died', 1);
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await sweep(engine, { graceMs: 0 })).closed).toBe(1);
      expect(await callRow(db, 'died')).toMatchObject({ status: 'failed', error_code: 'gateway_restarted' });
      expect(await budget(db, 'died')).toEqual({ spent: 0n, reserved: 0n, balance: 1_000_000n, held: 0n });
      expect((await audit(db.knex)).problems).toEqual([]);
    } finally {
      await engine.resources.messaging.close();
    }
  });
});

describe('where admitted calls run', () => {
  test('beyond the runner’s free slots, calls go through the run queue; every one ends, once', async () => {
    await useAudited(await startTestGateway({ config: { runnerConcurrency: 1 } }), async (g) => {
      await g.mandate({});
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-run-here-')), 'patient.log');
      const calls = await Promise.all([0, 1, 2].map(() => g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/patient', input: { file, ms: 300 } })));
      for (const r of calls) expect(r.status, JSON.stringify(r.body)).toBe(200);
      const m = parsePrometheus(await (await fetch(`${g.url}/metrics`)).text());
      // One ran in the slot of the process that admitted it; the two others waited for the run queue.
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: RUN_QUEUE })).toBe(2);
      expect((await g.get<{ budget: { spent: string; reserved: string } }>('/v0/mandates/alice/test')).body.budget).toMatchObject({
        spent: '0.06',
        reserved: '0.00',
      });
    });
  });

  test('with budget leases on, calls carved from a lease run here or through the queue, and the books stay exact', async () => {
    await useAudited(await startTestGateway({ config: { runnerConcurrency: 2, budgetLease: 500_000n } }), async (g) => {
      await g.mandate({});
      const knex = g.db.knex;
      // The first call is reserved on the mandate's row and asks for a lease, taken in the background: once it is
      // open, calls are carved from it.
      const first = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/success-only', input: { fail: true } });
      expect((first.body as { status?: string }).status).toBe('failed');
      await poll(async () => ((await knex('budget_leases').whereNull('closed_at').first('id')) ? true : undefined), {
        what: 'an open lease',
        timeoutMs: 10_000,
      });
      // 24 at once: two run in this process's slots at a time (each patient call holds its slot 300 ms), the rest
      // wait for the run queue. Half are billed (0.02 each); half end in a declared error that a charge_on: success
      // agent does not bill.
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-run-here-')), 'patient.log');
      const calls = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          g.post(
            '/v0/calls',
            i % 2 === 0
              ? { mandate: 'alice/test', agent: 'fixtures/patient', input: { file, ms: 300 } }
              : { mandate: 'alice/test', agent: 'fixtures/success-only', input: { fail: true } },
          ),
        ),
      );
      const byStatus = calls.map((r) => (r.body as { status?: string }).status);
      expect(byStatus.filter((s) => s === 'succeeded')).toHaveLength(12);
      expect(byStatus.filter((s) => s === 'failed')).toHaveLength(12);
      const m = parsePrometheus(await (await fetch(`${g.url}/metrics`)).text());
      const queued = sampleValue(m, 'holon_queue_wait_seconds_count', { queue: RUN_QUEUE }) ?? 0;
      expect(queued).toBeGreaterThan(0);
      expect(queued).toBeLessThan(24);
      // The calls were carved from the lease (not reserved call by call), and each hold ended.
      const holds = await knex('holds').whereNotNull('lease_id').select('status');
      expect(holds.length).toBeGreaterThan(0);
      expect(holds.every((h) => h.status !== 'held')).toBe(true);
      expect((await g.get<{ budget: { spent: string; reserved: string } }>('/v0/mandates/alice/test')).body.budget).toMatchObject({
        spent: '0.24',
        reserved: '0.00',
      });
    });
  });
});
