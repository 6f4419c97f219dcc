/**
 * Admission (`holon_admit_one`, shared/calls/sql/): a call's row and its reservation in one statement. Admitted, it writes exactly
 * what the transaction did (the `queued` row, the hold, the mandate's `reserved`, the payer's `held`); short, it
 * leaves nothing behind — not the row, not the mandate's reservation taken before the balance was found short —
 * on Postgres and on PGlite; under contention a budget admits exactly what it covers. Calls admitted together go in
 * one statement (`holon_admit_batch`) with exactly the outcomes they would have alone, in arrival
 * order, and batches of two processes never deadlock; a revoked mandate's row refuses the reservation.
 */
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { readBalance } from '../../shared/ledger/accounts.js';
import { admitCall } from '../../shared/ledger/money-functions.js';
import { row, world } from '../support/admitted-calls.js';
import { openDatabase } from '../../shared/db/connect.js';
import { BACKENDS, dbTest, type TestDatabase } from '../support/db.js';

const reservedOf = async (db: TestDatabase, id: string) => BigInt((await db.knex('mandates').where({ id }).first('reserved')).reserved);

const count = async (db: TestDatabase, table: string, where: Record<string, unknown>) => Number((await db.knex(table).where(where).count({ n: '*' }))[0]!.n);

for (const backend of BACKENDS) {
  const test = dbTest(backend);
  describe(`admission (holon_admit_one) on ${backend}`, () => {
    test('any sequence of calls: each is admitted exactly when budget and balance cover it, and a refusal leaves nothing', async ({ db }) => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: 0n, max: 3_000_000n }),
          fc.bigInt({ min: 0n, max: 3_000_000n }),
          fc.array(fc.bigInt({ min: 0n, max: 1_500_000n }), { minLength: 1, maxLength: 8 }),
          async (budget, credit, amounts) => {
            const payer = `payer-${n++}`;
            const mandateId = await world(db, payer, budget, credit);
            let reserved = 0n;
            for (const [i, amount] of amounts.entries()) {
              const id = `${payer}-c${i}`;
              const expected = budget - reserved < amount ? 'budget_short' : credit - reserved < amount ? 'balance_short' : 'reserved';
              expect(await admitCall(db.knex, row(id, mandateId, payer, amount))).toBe(expected);
              if (expected === 'reserved') reserved += amount;
              expect(await count(db, 'calls', { id, status: 'queued' })).toBe(expected === 'reserved' ? 1 : 0);
              expect(await count(db, 'holds', { id, status: 'held' })).toBe(expected === 'reserved' ? 1 : 0);
            }
            expect(await reservedOf(db, mandateId)).toBe(reserved);
            expect((await readBalance(db.knex, payer, 'EUR')).held).toBe(reserved);
          },
        ),
        { numRuns: backend === 'pglite' ? 15 : 30 },
      );
    });

    test('calls admitted together (one statement, holon_admit_batch) get exactly what each would alone, in arrival order', async ({ db }) => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ budget: fc.bigInt({ min: 0n, max: 2_000_000n }), credit: fc.bigInt({ min: 0n, max: 2_000_000n }) }), {
            minLength: 1,
            maxLength: 3,
          }),
          fc.array(fc.record({ who: fc.nat(), amount: fc.bigInt({ min: 0n, max: 900_000n }) }), { minLength: 3, maxLength: 24 }),
          async (payers, calls) => {
            const run = n++;
            const worlds: Array<{ payer: string; mandateId: string; budget: bigint; credit: bigint; reserved: bigint }> = [];
            for (const [i, p] of payers.entries()) {
              const payer = `batch-${run}-${i}`;
              worlds.push({ payer, mandateId: await world(db, payer, p.budget, p.credit), budget: p.budget, credit: p.credit, reserved: 0n });
            }
            // Sent at once: the first goes alone, the others wait for it and go together in one statement.
            const sent = calls.map((c, i) => ({ id: `batch-${run}-c${i}`, w: worlds[c.who % worlds.length]!, amount: c.amount }));
            let batches = 0;
            const seen = (q: { sql: string }) => {
              if (q.sql.includes('holon_admit_batch')) batches++;
            };
            db.knex.on('query', seen);
            const outcomes = await Promise.all(sent.map((c) => admitCall(db.knex, row(c.id, c.w.mandateId, c.w.payer, c.amount))));
            db.knex.off('query', seen);
            expect(batches).toBeGreaterThan(0);
            // The model: each call on its own, in arrival order.
            for (const [i, c] of sent.entries()) {
              const expected = c.w.budget - c.w.reserved < c.amount ? 'budget_short' : c.w.credit - c.w.reserved < c.amount ? 'balance_short' : 'reserved';
              expect(outcomes[i]).toBe(expected);
              if (expected === 'reserved') c.w.reserved += c.amount;
              expect(await count(db, 'calls', { id: c.id, status: 'queued' })).toBe(expected === 'reserved' ? 1 : 0);
              expect(await count(db, 'holds', { id: c.id, status: 'held' })).toBe(expected === 'reserved' ? 1 : 0);
            }
            for (const w of worlds) {
              expect(await reservedOf(db, w.mandateId)).toBe(w.reserved);
              expect((await readBalance(db.knex, w.payer, 'EUR')).held).toBe(w.reserved);
            }
          },
        ),
        { numRuns: backend === 'pglite' ? 10 : 25 },
      );
    });

    test('a mandate revoked on its row is refused by the reservation itself (revoked), nothing written', async ({ db }) => {
      const mandateId = await world(db, 'revoked-payer', 1_000_000n, 1_000_000n);
      await db.knex('mandates').where({ id: mandateId }).update({ revoked_at: new Date() });
      expect(await admitCall(db.knex, row('revoked-1', mandateId, 'revoked-payer', 10n))).toBe('revoked');
      const together = await Promise.all([1, 2, 3].map((i) => admitCall(db.knex, row(`revoked-b${i}`, mandateId, 'revoked-payer', 10n))));
      expect(together).toEqual(['revoked', 'revoked', 'revoked']);
      expect(await count(db, 'calls', { mandate_id: mandateId })).toBe(0);
      expect(await count(db, 'holds', { mandate_id: mandateId })).toBe(0);
      expect(await reservedOf(db, mandateId)).toBe(0n);
      expect((await readBalance(db.knex, 'revoked-payer', 'EUR')).held).toBe(0n);
    });

    test('the same call admitted twice is reserved once; another call under a taken id is an error, not a shortfall', async ({ db }) => {
      const mandateId = await world(db, 'dupe-payer', 1_000_000n, 1_000_000n);
      expect(await admitCall(db.knex, row('dupe-1', mandateId, 'dupe-payer', 10n))).toBe('reserved');
      // Idempotent by call id (holon_admit_batch): the repeat finds its row and reserves nothing more.
      expect(await admitCall(db.knex, row('dupe-1', mandateId, 'dupe-payer', 10n))).toBe('reserved');
      await expect(admitCall(db.knex, row('dupe-1', mandateId, 'dupe-payer', 20n))).rejects.toThrow(/duplicate key|calls_pkey|another call/);
      expect(await reservedOf(db, mandateId)).toBe(10n);
    });
  });
}

describe('admission under contention (Postgres)', () => {
  const test = dbTest('postgres', { poolMax: 10 });
  test('40 concurrent calls of 0.10 on a 0.50 budget: exactly 5 admitted, the rest short, nothing stray', async ({ db }) => {
    const mandateId = await world(db, 'race-payer', 500_000n, 5_000_000n);
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => admitCall(db.knex, row(`race-${i}`, mandateId, 'race-payer', 100_000n))));
    expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'budget_short')).toHaveLength(35);
    expect(await count(db, 'calls', { mandate_id: mandateId })).toBe(5);
    expect(await count(db, 'holds', { mandate_id: mandateId, status: 'held' })).toBe(5);
    expect(await reservedOf(db, mandateId)).toBe(500_000n);
  });

  test('two processes admitting batches over the same mandates and payers in opposite orders never deadlock', async ({ db }) => {
    const other = await openDatabase({ url: db.url!, migrate: false, poolMax: 4 });
    try {
      const ids: Array<{ payer: string; mandateId: string }> = [];
      for (const i of [0, 1, 2, 3]) ids.push({ payer: `lock-${i}`, mandateId: await world(db, `lock-${i}`, 1_000_000_000n, 1_000_000_000n) });
      const batch = (tag: string, order: typeof ids) =>
        JSON.stringify(Array.from({ length: 64 }, (_, k) => row(`${tag}-${k}`, order[k % order.length]!.mandateId, order[k % order.length]!.payer, 1n)));
      // Straight to the SQL function (no one-by-one fallback that would hide a deadlock): each round, three batches
      // from each process at once, one process going through the mandates one way, the other the other way.
      const sql = `SELECT holon_admit_batch(?::jsonb) AS outcomes`;
      const rounds = 10;
      for (let r = 0; r < rounds; r++) {
        await Promise.all(
          [0, 1, 2].flatMap((j) => [db.knex.raw(sql, [batch(`a${r}-${j}`, ids)]), other.knex.raw(sql, [batch(`b${r}-${j}`, [...ids].reverse())])]),
        );
      }
      const perMandate = BigInt((rounds * 6 * 64) / 4);
      expect(await count(db, 'calls', {})).toBe(rounds * 6 * 64);
      for (const { mandateId, payer } of ids) {
        expect(await reservedOf(db, mandateId)).toBe(perMandate);
        expect((await readBalance(db.knex, payer, 'EUR')).held).toBe(perMandate);
      }
    } finally {
      await other.close();
    }
  });
});
