/**
 * The gateway scaled out: api, runner and settler as separate OS processes (`holon api|runner|settler`) on one
 * Postgres database and one Redis prefix (DESIGN.md §1–§3). Nothing that matters lives in one process's
 * memory, so the invariants hold across processes and across crashes:
 *
 * 1. two APIs, two runners, one settler: no overspend under concurrent calls split across the APIs, every
 *    request one receipt, every settlement once, each admitted call run exactly once, both runners used; on one
 *    Redis, and again on a three-node Redis Cluster (tests/support/redis-cluster.ts);
 * 2. a runner killed with SIGKILL mid-call: the redelivered job closes the call failed / gateway_restarted,
 *    unbilled, its hold released, and the agent is never invoked a second time;
 * 3. a settler killed with SIGKILL mid-work: a second settler settles every call exactly once;
 * 4. SIGTERM to a runner with a call in flight: it finishes the call, then exits 0.
 *
 * The agent `fixtures/hang` (tests/fixtures/scale/hang) appends a line {call, pid} per invocation to the
 * file named by HOLON_TEST_INVOCATIONS, which tells how often, and in which runner process, a call ran.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, onTestFailed, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import type { TestDatabase } from '../support/db.js';
import { startTestCluster } from '../support/gateway.js';
import type { Cluster, ServiceProcess } from '../support/processes.js';
import { poll, sleep } from '../support/poll.js';
import { ensureRedisCluster } from '../support/redis-cluster.js';

const CENT = 10_000n;
const SIGNUP_CREDIT = 5_000_000n;

interface Bed {
  db: TestDatabase;
  cluster: Cluster;
  /** The invocation log of fixtures/hang. */
  invocationsFile: string;
  cleanup(): Promise<void>;
}

let bed: Bed | undefined;

/** `redisUrl`: another Redis than the run's (the test Redis Cluster). */
async function setUp(redisUrl?: string): Promise<Bed> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-scale-'));
  const invocationsFile = path.join(dir, 'invocations.jsonl');
  const { cluster, db, stop } = await startTestCluster({ env: { HOLON_TEST_INVOCATIONS: invocationsFile }, ...(redisUrl ? { redisUrl } : {}) });
  // A failing test shows what the services said (their warnings and errors, as JSON log lines).
  onTestFailed(() => {
    console.error(`service output:\n${cluster.describe()}`);
  });
  bed = {
    db,
    cluster,
    invocationsFile,
    cleanup: async () => {
      try {
        await stop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
  return bed;
}

afterEach(async () => {
  const b = bed;
  bed = undefined;
  await b?.cleanup();
});

// ---------------------------------------------------------------------------------------------------------

interface Reply {
  status: number;
  body: any;
}

async function request(api: ServiceProcess, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(api.url + urlPath, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

async function createMandate(api: ServiceProcess, doc: Record<string, unknown> = {}): Promise<string> {
  const r = await request(api, 'POST', '/v0/mandates', {
    id: 'alice/scale',
    issuer: 'alice',
    grantee: 'alice/assistant',
    allow: { agents: ['examples/*', 'fixtures/*'] },
    budget: { total: '5.00', currency: 'EUR' },
    ...doc,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.mandate.id as string;
}

async function submitAsync(api: ServiceProcess, mandate: string, agent: string, input: unknown, headers: Record<string, string> = {}): Promise<string> {
  const r = await request(api, 'POST', '/v0/calls', { mandate, agent, input }, { prefer: 'respond-async', ...headers });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.call.id as string;
}

/** Polls GET /v0/calls/{id} until the call has its receipt. */
async function receiptOf(b: Bed, api: ServiceProcess, id: string, timeoutMs = 60_000): Promise<any> {
  return poll(
    async () => {
      const r = await request(api, 'GET', `/v0/calls/${id}`);
      return r.status === 200 && r.body.receipt ? r.body.receipt : undefined;
    },
    { what: `the receipt of ${id}`, timeoutMs, intervalMs: 200, context: b.cluster.describe },
  );
}

async function callRow(b: Bed, id: string): Promise<any> {
  return b.db.knex('calls').where({ id }).first();
}

/** Waits until no call is queued, running or settling. */
async function quiescent(b: Bed, timeoutMs = 60_000): Promise<void> {
  await poll(
    async () => {
      const open = await b.db.knex('calls').whereIn('status', ['queued', 'running', 'settling']).count<{ n: string }[]>({ n: '*' });
      return Number(open[0]!.n) === 0;
    },
    { what: 'every call to be settled', timeoutMs, intervalMs: 200, context: b.cluster.describe },
  );
}

interface Invocation {
  call: string;
  pid: number;
}

async function invocations(b: Bed): Promise<Invocation[]> {
  let text = '';
  try {
    text = await readFile(b.invocationsFile, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Invocation);
}

async function mandateRow(b: Bed, id: string): Promise<{ total: bigint; spent: bigint; reserved: bigint }> {
  const m = await b.db.knex('mandates').where({ id }).first('total', 'spent', 'reserved');
  return { total: BigInt(m.total), spent: BigInt(m.spent), reserved: BigInt(m.reserved) };
}

/** The money invariants every test ends with (DESIGN.md §3.1, §3.2, §3.4, §3.5). */
async function expectSettledBooks(b: Bed, mandateId: string): Promise<{ billed: bigint }> {
  const { knex } = b.db;
  expect(await knex('holds').where({ status: 'held' }), 'no live hold').toEqual([]);
  expect(await knex('calls').whereIn('status', ['queued', 'running', 'settling']).select('id', 'status'), 'no open call').toEqual([]);
  // every call has exactly one receipt (receipts.id is the call id) and one call event
  expect(await knex('calls as c').leftJoin('receipts as r', 'r.id', 'c.id').whereNull('r.id').select('c.id'), 'calls without a receipt').toEqual([]);
  expect(
    await knex('calls as c').leftJoin('call_events as e', 'e.call_id', 'c.id').whereNull('e.call_id').select('c.id'),
    'calls without a call event',
  ).toEqual([]);
  // one settle entry per billed receipt, none for an unbilled one, never two for one call
  const dupes = await knex('journal_entries').where('key', 'like', 'settle:%').groupBy('key').havingRaw('count(*) > 1').select('key');
  expect(dupes, 'settle entries written twice').toEqual([]);
  const settleKeys = (await knex('journal_entries').where('key', 'like', 'settle:%').pluck('key')).sort();
  const billedIds = await knex('receipts').where({ billed: true }).pluck('id');
  expect(settleKeys).toEqual(billedIds.map((id: string) => `settle:${id}`).sort());
  const billedCalls = await knex('calls').whereIn('id', billedIds).count<{ n: string }[]>({ n: '*' });
  expect(Number(billedCalls[0]!.n), 'every billed receipt belongs to a call').toBe(billedIds.length);

  const billedSum = await knex('receipts').where({ mandate_id: mandateId }).sum<{ s: string | null }[]>({ s: 'cost_total' });
  const billed = BigInt(billedSum[0]!.s ?? 0);
  const m = await mandateRow(b, mandateId);
  expect(m.reserved).toBe(0n);
  expect(m.spent).toBe(billed);
  expect(m.spent).toBeLessThanOrEqual(m.total);
  const alice = await readBalance(knex, 'alice', 'EUR');
  expect(alice.balance).toBe(SIGNUP_CREDIT - billed);
  expect(alice.held).toBe(0n);
  const report = await audit(knex);
  expect(report.problems, 'ledger audit').toEqual([]);
  expect(report.ok).toBe(true);
  return { billed };
}

// ---------------------------------------------------------------------------------------------------------

/** 2 APIs, 2 runners, 1 settler: 120 concurrent calls on a budget for 50 never overspend; each runs once, settles once. */
async function raceForTheBudget(b: Bed): Promise<void> {
  // One process first (it opens the database and runs the migrations), then the rest at once.
  await b.cluster.start('settler');
  const [apiA, apiB, runnerA, runnerB] = await Promise.all([
    b.cluster.start('api'),
    b.cluster.start('api'),
    b.cluster.start('runner'),
    b.cluster.start('runner'),
  ]);
  expect(await b.cluster.connectedWorkers('run')).toBe(2);
  const mandate = await createMandate(apiA, { budget: { total: '0.50', currency: 'EUR' } });
  const apis = [apiA!, apiB!];
  // The race starts with both processes at the line: the mandate row is held here until each API has a reservation
  // waiting on it (admission groups the calls that arrive meanwhile behind that statement, holon_admit_batch), and
  // the burst has had time to arrive; then all go at once, two batches racing for the budget.
  const gate = await b.db.knex.transaction();
  await gate.raw('SELECT 1 FROM mandates WHERE id = ? FOR UPDATE', [mandate]);
  const burst = Promise.all(
    Array.from({ length: 120 }, async (_, i) => {
      const api = apis[i % 2]!;
      const r = await request(api, 'POST', '/v0/calls', { mandate, agent: 'fixtures/hang', input: { ms: 30 } });
      return { api: api.name, ...r };
    }),
  );
  try {
    await poll(
      async () => {
        const r = await b.db.knex.raw<{ rows: Array<{ n: string }> }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return Number(r.rows[0]!.n) >= 2 ? true : undefined;
      },
      { what: 'reservations of both APIs waiting on the mandate', timeoutMs: 20_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    await gate.commit();
  }
  const results = await burst;

  const unexpected = results.filter((r) => ![200, 202, 403].includes(r.status));
  expect(unexpected, 'every answer is 200, 202 or 403').toEqual([]);
  const idOf = (r: Reply) => (r.status === 202 ? r.body.call.id : r.body.receipt.id) as string;
  const ids = results.map(idOf);
  expect(new Set(ids).size).toBe(120);
  // A 202 (sync wait ran out) is acceptable only if the call is settled later.
  for (const r of results.filter((x) => x.status === 202)) {
    const receipt = await receiptOf(b, apiA!, r.body.call.id);
    expect(['succeeded', 'failed']).toContain(receipt.status);
  }
  await quiescent(b);

  const ok = results.filter((r) => r.status === 200);
  for (const r of ok) expect(r.body.receipt).toMatchObject({ status: 'succeeded', billed: true, cost: { own: '0.01' } });
  for (const r of results.filter((x) => x.status === 403)) expect(r.body.receipt.status).toBe('denied');
  expect(ok.length).toBeGreaterThan(0);
  expect(ok.length).toBeLessThanOrEqual(50);
  // both API processes admitted and answered calls
  expect(new Set(ok.map((r) => r.api))).toEqual(new Set([apiA!.name, apiB!.name]));

  // every request has exactly one receipt, denied ones included
  const receipts = await b.db.knex('receipts').whereIn('id', ids).select('id', 'status', 'billed', 'cost_total');
  expect(receipts).toHaveLength(120);
  const billedReceipts = receipts.filter((r) => r.billed);
  expect(billedReceipts.length).toBeLessThanOrEqual(50);
  expect(billedReceipts.length).toBeGreaterThanOrEqual(ok.length);

  const { billed } = await expectSettledBooks(b, mandate);
  expect(billed).toBe(BigInt(billedReceipts.length) * CENT);
  expect(billed).toBeLessThanOrEqual(50n * CENT);

  // each admitted call invoked the agent exactly once, and both runner processes ran calls
  const admitted = (await b.db.knex('calls').pluck('id')).sort();
  const runs = await invocations(b);
  expect(runs.map((r) => r.call).sort()).toEqual(admitted);
  const perRunner = [runnerA!, runnerB!].map((r) => runs.filter((x) => x.pid === r.pid).length);
  console.info(`[scale-out] ${ok.length} of 120 calls succeeded; runners ran ${perRunner.join(' + ')} calls`);
  expect(new Set(runs.map((r) => r.pid))).toEqual(new Set([runnerA!.pid, runnerB!.pid]));
}

describe('scale-out: services as separate processes on shared Postgres and Redis', () => {
  test('2 APIs, 2 runners, 1 settler: 120 concurrent calls on a budget for 50 never overspend; each runs once, settles once', async () => {
    await raceForTheBudget(await setUp());
  }, 150_000);

  test('the same on a three-node Redis Cluster: queues, store and notifier spread over its nodes', async () => {
    await raceForTheBudget(await setUp(await ensureRedisCluster()));
  }, 150_000);

  test('a runner killed with SIGKILL mid-call: the call closes failed / gateway_restarted, unbilled, and the agent ran once', async () => {
    const b = await setUp();
    await b.cluster.start('settler');
    const api = await b.cluster.start('api');
    const runnerA = await b.cluster.start('runner', { name: 'runner-A' });
    const mandate = await createMandate(api);

    const id = await submitAsync(api, mandate, 'fixtures/hang', { ms: 25_000 }, { 'idempotency-key': 'hang-1' });
    await poll(
      async () => {
        const row = await callRow(b, id);
        return row?.status === 'running' && (await invocations(b)).length === 1;
      },
      { what: 'the call to be running with its agent invoked', timeoutMs: 30_000, context: b.cluster.describe },
    );

    runnerA.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await runnerA.exit).toMatchObject({ signal: 'SIGKILL' });
    // the dead runner's connections are gone before the next one counts as ready
    await poll(async () => (await b.cluster.connectedWorkers('run')) === 0, { what: 'runner A to leave Redis', timeoutMs: 10_000 });
    const runnerB = await b.cluster.start('runner', { name: 'runner-B' });

    // BullMQ redelivers the stalled job (lock 10 s, stall check every 5 s) and runner B closes the call; failing
    // that, the sweeper closes it 30 s after its 30 s deadline. Either is correct; allow both.
    const receipt = await receiptOf(b, api, id, 90_000);
    const closedAfterMs = Date.now() - killedAt;
    expect(receipt).toMatchObject({ status: 'failed', error: 'gateway_restarted', billed: false, cost: { own: '0.00', total: '0.00' } });
    const row = await callRow(b, id);
    expect(row).toMatchObject({ status: 'failed', error_code: 'gateway_restarted' });
    // Which path closed it: runner B logs the stalled job it takes back; the sweeper only closes a call 30 s past
    // a deadline of started_at + 30 s.
    const closedMs = new Date(row.finished_at).getTime() - new Date(row.started_at).getTime();
    const redelivered = runnerB.output().includes('job stalled; redelivering');
    const closedBy = closedMs >= 60_000 ? 'the sweeper' : redelivered ? 'stall redelivery to runner B' : 'an unexpected path';
    console.info(`[scale-out] the killed runner's call was closed by ${closedBy}, ${closedAfterMs} ms after the kill`);
    expect(closedBy).not.toBe('an unexpected path');

    expect(await b.db.knex('holds').where({ call_id: id }).first('status')).toEqual({ status: 'released' });
    expect(await b.db.knex('journal_entries').where({ key: `settle:${id}` })).toEqual([]);
    await expectSettledBooks(b, mandate);
    expect((await readBalance(b.db.knex, 'alice', 'EUR')).balance).toBe(SIGNUP_CREDIT);
    // invoked once, by runner A; runner B never ran it (give a late duplicate a moment to show)
    await sleep(500);
    expect(await invocations(b)).toEqual([{ call: id, pid: runnerA.pid }]);
    expect(runnerB.exited()).toBeUndefined();
    // Its Idempotency-Key never runs it again: the outcome was interrupted, the caller checks its receipts.
    const again = await request(
      api,
      'POST',
      '/v0/calls',
      { mandate, agent: 'fixtures/hang', input: { ms: 25_000 } },
      { prefer: 'respond-async', 'idempotency-key': 'hang-1' },
    );
    expect([again.status, again.body.error?.code]).toEqual([409, 'idempotency_key_interrupted']);
  }, 150_000);

  test('a settler killed with SIGKILL mid-work: a second settler settles every call exactly once', async () => {
    const b = await setUp();
    const api = await b.cluster.start('api');
    await b.cluster.start('runner');
    const mandate = await createMandate(api);

    // The calls run while no settler is up, so they all wait in `settling`: S1 is then killed while it works.
    const ids = await Promise.all(Array.from({ length: 60 }, () => submitAsync(api, mandate, 'examples/echo-upper', { text: 'x' })));
    await poll(
      async () => {
        const rows = await b.db.knex('calls').whereIn('id', ids).where({ status: 'settling' }).count<{ n: string }[]>({ n: '*' });
        return Number(rows[0]!.n) === ids.length;
      },
      { what: 'every call to have run', timeoutMs: 60_000, intervalMs: 100, context: b.cluster.describe },
    );

    const s1 = await b.cluster.start('settler', { name: 'settler-S1', env: { HOLON_SETTLER_CONCURRENCY: '2' } });
    const before = await poll(
      async () => {
        const n = Number((await b.db.knex('receipts').count<{ n: string }[]>({ n: '*' }))[0]!.n);
        return n >= 1 ? n : undefined;
      },
      { what: 'S1 to settle some calls', timeoutMs: 30_000, intervalMs: 5, context: b.cluster.describe },
    );
    s1.kill('SIGKILL');
    expect(await s1.exit).toMatchObject({ signal: 'SIGKILL' });
    const atKill = Number((await b.db.knex('receipts').count<{ n: string }[]>({ n: '*' }))[0]!.n);
    const held = await b.cluster.activeJobs('settle');
    console.info(`[scale-out] settler S1 killed after ${before}…${atKill} of ${ids.length} settlements, holding ${held} settle job(s)`);
    expect(atKill, 'S1 was killed before it finished').toBeLessThan(ids.length);

    await poll(async () => (await b.cluster.connectedWorkers('settle')) === 0, { what: 'S1 to leave Redis', timeoutMs: 10_000 });
    const s2 = await b.cluster.start('settler', { name: 'settler-S2' });
    // Jobs S1 held come back after their lock expires (stall check); the sweeper re-enqueues anything left.
    await quiescent(b, 100_000);
    const recovered = s2.output().split('job stalled; redelivering').length - 1;
    console.info(`[scale-out] settler S2 took back ${recovered} stalled settle job(s) and settled the rest`);

    const receipts = await b.db.knex('receipts').whereIn('id', ids).select('id', 'status', 'billed', 'cost_total');
    expect(receipts).toHaveLength(ids.length);
    for (const r of receipts) expect(r).toMatchObject({ status: 'succeeded', billed: true });
    const events = await b.db.knex('call_events').whereIn('call_id', ids).count<{ n: string }[]>({ n: '*' });
    expect(Number(events[0]!.n)).toBe(ids.length);
    const { billed } = await expectSettledBooks(b, mandate);
    expect(billed).toBe(BigInt(ids.length) * CENT);
    expect(await mandateRow(b, mandate)).toMatchObject({ spent: BigInt(ids.length) * CENT, reserved: 0n });
    // every output is still there for pickup, and settled exactly once
    const sample = await request(api, 'GET', `/v0/calls/${ids[0]}`);
    expect(sample.body).toMatchObject({ call: { status: 'succeeded' }, output: { text: 'X' } });
  }, 150_000);

  test('SIGTERM to a runner with a call in flight: it finishes the call, then exits 0; nothing is left held', async () => {
    const b = await setUp();
    await b.cluster.start('settler');
    const api = await b.cluster.start('api');
    const runner = await b.cluster.start('runner');
    const mandate = await createMandate(api);

    const id = await submitAsync(api, mandate, 'fixtures/hang', { ms: 1_500 });
    await poll(async () => (await callRow(b, id))?.status === 'running', {
      what: 'the call to be running',
      timeoutMs: 30_000,
      intervalMs: 20,
      context: b.cluster.describe,
    });

    runner.kill('SIGTERM');
    const exit = await Promise.race([runner.exit, sleep(30_000).then(() => 'still running' as const)]);
    expect(exit, `the runner exits on SIGTERM\n${runner.output()}`).toEqual({ code: 0, signal: null });
    // the runner finished the call before it exited: the row has left `running`
    expect(['settling', 'succeeded']).toContain((await callRow(b, id)).status);

    const receipt = await receiptOf(b, api, id);
    expect(receipt).toMatchObject({ status: 'succeeded', billed: true, cost: { own: '0.01' } });
    expect(await invocations(b)).toEqual([{ call: id, pid: runner.pid }]);
    const { billed } = await expectSettledBooks(b, mandate);
    expect(billed).toBe(CENT);
  }, 120_000);
});
