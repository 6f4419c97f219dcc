/**
 * Budget leases (docs/ledger.md, "Budget leases"; shared/ledger/leases/): several API processes (lease managers, each
 * on its own pool) admit calls carved from slices of one mandate, through the real admission, run and settlement.
 * Whatever the budget, the balance, the slice, the order of calls, their charges and the processes that die without
 * returning their leases: never over budget or balance at any point, never a refusal while the mandate and the
 * balance (calls' holds only) could serve the call, and once everything settled and every lease came back (returned,
 * or expired and swept) nothing is reserved or held and the audit is clean. Postgres, not the manager's memory,
 * decides what a lease can carve (the CHECK `carved <= amount`); a revoked mandate's leases close with it.
 */
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { createCallEngine } from '../../shared/calls/engine.js';
import { settleBatch, settleCall } from '../../shared/calls/settle/settle.js';
import type { ServiceContext } from '../../shared/context.js';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { openDatabase, type Database } from '../../shared/db/connect.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { audit } from '../../shared/ledger/audit.js';
import { creditSignup } from '../../shared/ledger/demo-credit.js';
import { createLeaseManager, type LeaseManager } from '../../shared/ledger/leases/manager.js';
import { expireLeases } from '../../shared/ledger/leases/sql.js';
import { loadMandate, saveMandate } from '../../shared/mandates/store.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import type { RunResult } from '../../shared/runtimes/types.js';
import { generateSigningKey } from '../../shared/signing/keys.js';
import { row, world } from '../support/admitted-calls.js';
import { dbTest, type TestDatabase } from '../support/db.js';
import { buildManifest, buildMandate } from '../support/manifest-builder.js';
import { shippedAgentsContext } from '../support/service-context.js';

const test = dbTest('postgres', { poolMax: 10 });
const PRICES = [1n, 7n, 25n, 100n, 333n] as const;
const FAR = () => new Date(Date.now() + 10 * 365 * 86_400_000);

const big = (v: unknown) => BigInt(v as string);

/** The hot rows as they are: never over budget, never over balance. */
async function assertWithin(db: TestDatabase, mandateId: string, payer: string) {
  const m = await db.knex('mandates').where({ id: mandateId }).first('total', 'spent', 'reserved');
  expect(big(m.spent) + big(m.reserved)).toBeLessThanOrEqual(big(m.total));
  // A payer never credited and never admitted has no balance row yet: nothing held.
  const b = (await db.knex('account_balances').where({ account: payer, currency: 'EUR' }).first('balance', 'held')) ?? { balance: '0', held: '0' };
  expect(big(b.held)).toBeLessThanOrEqual(big(b.balance));
}

/** What calls' holds leave of the mandate and the balance: a refusal must be below one of them. */
async function couldServe(db: TestDatabase, mandateId: string, payer: string, worst: bigint): Promise<boolean> {
  const m = (await loadMandate(db.knex, mandateId))!;
  const b = await readBalance(db.knex, payer, 'EUR');
  return m.remaining >= worst && b.available >= worst;
}

interface Op {
  proc: number;
  price: number;
  billed: boolean;
  /** Settle now, or leave it to settle later (its lease may close meanwhile). */
  later: boolean;
  /** The process dies after this call: its memory is dropped, its leases stay until they expire. */
  crash: boolean;
}

const arbOp: fc.Arbitrary<Op> = fc.record({
  proc: fc.nat({ max: 2 }),
  price: fc.nat({ max: PRICES.length - 1 }),
  billed: fc.boolean(),
  later: fc.boolean(),
  crash: fc.nat({ max: 11 }).map((n) => n === 0),
});

const agentsFor = (ns: string): Manifest[] =>
  PRICES.map((amount, i) =>
    buildManifest({
      id: `${ns}/p${i}`,
      pricing: { model: 'per_run', currency: 'EUR', amount, chargeOn: 'success' },
      interface: { input: { type: 'object' }, output: { type: 'object' }, errors: {}, examples: [] },
    }),
  );

const RESULT = (billed: boolean): RunResult => (billed ? { kind: 'output', output: { ok: true } } : { kind: 'failure', code: 'timeout', message: 'slow' });

describe('budget leases (Postgres)', () => {
  test('random budgets, slices, calls, charges and crashes over three processes: within budget, no spurious refusal, every micro-unit back', async ({ db }) => {
    const messaging = await createMessaging();
    const log = createLogger('test', 'silent');
    const pools: Database[] = [];
    let run = 0;
    let carved = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: 0n, max: 3_000n }),
          fc.bigInt({ min: 0n, max: 3_000n }),
          fc.bigInt({ min: 1n, max: 800n }),
          fc.array(arbOp, { minLength: 1, maxLength: 16 }),
          async (budget, credit, slice, ops) => {
            run += 1;
            const payer = `lease-${run}`;
            const agents = agentsFor(`${payer}a`);
            const mandate = buildMandate({
              id: `${payer}/mm`,
              issuer: payer,
              grantee: `${payer}/assistant`,
              allow: { agents: [`${payer}a/*`] },
              budget: { total: budget },
            });
            await saveMandate(db.knex, mandate, generateSigningKey());
            await creditSignup(db.knex, payer, credit);
            const procs: Array<{ ctx: ServiceContext; leases: LeaseManager }> = [];
            const start = async (i: number) => {
              const pool = await openDatabase({ url: db.url!, migrate: false, poolMax: 3 });
              pools.push(pool);
              const ctx = shippedAgentsContext(pool.knex, agents, messaging, log);
              ctx.leases = createLeaseManager(pool.knex, { slice, idleMs: 60_000, ttlMs: 60_000 }, { timer: false });
              procs[i] = { ctx, leases: ctx.leases };
            };
            for (const i of [0, 1, 2]) await start(i);
            const pending: Array<{ ctx: ServiceContext; id: string }> = [];
            for (const op of ops) {
              const p = procs[op.proc]!;
              const worst = PRICES[op.price]!;
              const submitted = await createCallEngine(p.ctx).submit({ mandateId: mandate.id, agent: agents[op.price]!.id, input: {} });
              await p.leases.settled();
              await assertWithin(db, mandate.id, payer);
              if (submitted.kind === 'refused') {
                expect(submitted.code).toBe('denied');
                expect(await couldServe(db, mandate.id, payer, worst), `refused ${worst} while the budget could serve it`).toBe(false);
              } else {
                expect(submitted.kind).toBe('queued');
                const id = (submitted as { callId: string }).callId;
                await createCallEngine(p.ctx).run(id, { runtimes: { run: async () => RESULT(op.billed) } });
                if (op.later) pending.push({ ctx: p.ctx, id });
                else expect(await settleCall(p.ctx, id)).toBe('settled');
                await assertWithin(db, mandate.id, payer);
              }
              if (op.crash) await start(op.proc); // the old manager is dropped as it is: its leases stay open
              expect((await audit(db.knex)).problems).toEqual([]);
            }
            // The calls left for later settle together (one statement: holon_settle_batch), some against closed leases.
            if (pending.length > 0) {
              const results = await settleBatch(
                pending[0]!.ctx,
                pending.map((p) => p.id),
              );
              expect([...results.values()]).toEqual(pending.map(() => 'settled'));
            }
            for (const p of procs) await p.leases.close();
            // What crashed processes held comes back once it expired (the settler's sweeper).
            await expireLeases(db.knex, FAR());
            const m = await db.knex('mandates').where({ id: mandate.id }).first('reserved', 'spent');
            expect(big(m.reserved)).toBe(0n);
            expect((await db.knex('account_balances').where({ account: payer, currency: 'EUR' }).first('held'))?.held ?? 0n).toBe(0n);
            expect(await db.knex('budget_leases').where({ mandate_id: mandate.id }).whereNull('closed_at').count({ n: '*' })).toEqual([{ n: 0n }]);
            expect((await audit(db.knex)).problems).toEqual([]);
            carved += (await db.knex('holds').where({ mandate_id: mandate.id }).whereNotNull('lease_id').pluck('id')).length;
          },
        ),
        {
          numRuns: 12,
          // Always a run that carves: a lease taken by process 0's first call, then calls of process 0 carved from
          // it (one settled at once, one left for the batch). The random runs may all stay below what a lease takes.
          examples: [
            // A payer never credited, whose one call is refused: no balance row at all.
            [0n, 0n, 1n, [{ proc: 0, price: 0, billed: false, later: false, crash: true }]],
            [
              3_000n,
              3_000n,
              800n,
              [
                { proc: 0, price: 0, billed: true, later: false, crash: false },
                { proc: 0, price: 1, billed: true, later: false, crash: false },
                { proc: 0, price: 2, billed: false, later: true, crash: false },
              ],
            ],
          ],
        },
      );
      // The runs did carve calls from leases (not only the per-call path).
      expect(carved).toBeGreaterThan(0);
    } finally {
      for (const p of pools) await p.close();
      await messaging.close();
    }
  }, 300_000);

  test('parallel admissions of three processes racing on one small budget: exactly what it covers, leases or not', async ({ db }) => {
    const pools = await Promise.all([0, 1, 2].map(() => openDatabase({ url: db.url!, migrate: false, poolMax: 4 })));
    try {
      for (const round of [0, 1, 2, 3]) {
        const payer = `race${round}`;
        const mandateId = await world(db, payer, 500_000n, 10_000_000n);
        const managers = pools.map((p) => createLeaseManager(p.knex, { slice: 200_000n, idleMs: 60_000, ttlMs: 60_000 }, { timer: false }));
        // Each process holds a lease first (its first call takes it), then 40 calls of 0.10 race.
        await Promise.all(managers.map((m, i) => m.admit(row(`${payer}-w${i}`, mandateId, payer, 0n)).then(() => m.settled())));
        const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => managers[i % 3]!.admit(row(`${payer}-c${i}`, mandateId, payer, 100_000n))));
        expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(5);
        expect(outcomes.filter((o) => o !== 'reserved').every((o) => o === 'budget_short')).toBe(true);
        await assertWithin(db, mandateId, payer);
        for (const m of managers) await m.close();
        expect(big((await db.knex('mandates').where({ id: mandateId }).first('reserved')).reserved)).toBe(500_000n);
      }
    } finally {
      for (const p of pools) await p.close();
    }
  });

  test("Postgres, not the manager's memory, bounds a lease: a carve past its amount is refused", async ({ db }) => {
    const mandateId = await world(db, 'check-payer', 1_000_000n, 1_000_000n);
    const leases = createLeaseManager(db.knex, { slice: 100_000n, idleMs: 60_000, ttlMs: 60_000 }, { timer: false });
    expect(await leases.admit(row('check-0', mandateId, 'check-payer', 10n))).toBe('reserved');
    await leases.settled();
    expect(await leases.admit(row('check-0b', mandateId, 'check-payer', 10n))).toBe('reserved');
    const [lease] = leases.held();
    expect(lease).toBeDefined();
    expect(await db.knex('holds').where({ id: 'check-0b' }).first('lease_id')).toEqual({ lease_id: lease!.id });
    // The CHECK: no statement can carve past what the lease reserved.
    await expect(
      db
        .knex('budget_leases')
        .where({ id: lease!.id })
        .update({ carved: db.knex.raw('amount + 1') }),
    ).rejects.toThrow(/lease_carved_within_amount/);
    // A manager whose memory is wrong (it believes its lease is huge): the carve is refused by Postgres and the call
    // goes the per-call path; the lease never carves more than it holds.
    (lease as { amount: bigint }).amount = 10_000_000n;
    expect(await leases.admit(row('check-1', mandateId, 'check-payer', 99_995n))).toBe('reserved');
    const after = await db.knex('budget_leases').where({ id: lease!.id }).first('amount', 'carved');
    expect(big(after.carved)).toBeLessThanOrEqual(big(after.amount));
    expect(await db.knex('holds').where({ id: 'check-1' }).first('lease_id')).toEqual({ lease_id: null });
    await leases.close();
  });

  test("a revoked mandate's leases close with it; its next call is refused as revoked", async ({ db }) => {
    const mandateId = await world(db, 'rev-payer', 1_000_000n, 1_000_000n);
    const leases = createLeaseManager(db.knex, { slice: 100_000n, idleMs: 60_000, ttlMs: 60_000 }, { timer: false });
    await leases.admit(row('rev-0', mandateId, 'rev-payer', 10n));
    await leases.settled();
    expect(await leases.admit(row('rev-1', mandateId, 'rev-payer', 10n))).toBe('reserved');
    await db.knex('mandates').where({ id: mandateId }).update({ revoked_at: new Date() });
    expect(await db.knex('budget_leases').where({ mandate_id: mandateId }).whereNull('closed_at').count({ n: '*' })).toEqual([{ n: 0n }]);
    expect(big((await db.knex('mandates').where({ id: mandateId }).first('reserved')).reserved)).toBe(20n);
    expect(await leases.admit(row('rev-2', mandateId, 'rev-payer', 10n))).toBe('revoked');
    await leases.close();
  });
});
