/**
 * `holon_admit` (migration 017): a call's row and its reservation in one statement. Admitted, it writes exactly
 * what the transaction did (the `queued` row, the hold, the mandate's `reserved`, the payer's `held`); short, it
 * leaves nothing behind — not the row, not the mandate's reservation taken before the balance was found short —
 * on Postgres and on PGlite; under contention a budget admits exactly what it covers.
 */
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { readBalance } from '../../shared/ledger/accounts.js';
import { admitShared } from '../../shared/ledger/money-functions.js';
import { row, world } from '../support/admitted-calls.js';
import { BACKENDS, dbTest, type TestDatabase } from '../support/db.js';

const reservedOf = async (db: TestDatabase, id: string) => BigInt((await db.knex('mandates').where({ id }).first('reserved')).reserved);

const count = async (db: TestDatabase, table: string, where: Record<string, unknown>) => Number((await db.knex(table).where(where).count({ n: '*' }))[0]!.n);

for (const backend of BACKENDS) {
  const test = dbTest(backend);
  describe(`holon_admit on ${backend}`, () => {
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
              expect(await admitShared(db.knex, row(id, mandateId, payer, amount))).toBe(expected);
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

    test('an error that is not a shortfall is not answered as one (a second row with the same id)', async ({ db }) => {
      const mandateId = await world(db, 'dupe-payer', 1_000_000n, 1_000_000n);
      expect(await admitShared(db.knex, row('dupe-1', mandateId, 'dupe-payer', 10n))).toBe('reserved');
      await expect(admitShared(db.knex, row('dupe-1', mandateId, 'dupe-payer', 10n))).rejects.toThrow(/duplicate key|calls_pkey/);
      expect(await reservedOf(db, mandateId)).toBe(10n);
    });
  });
}

describe('holon_admit under contention (Postgres)', () => {
  const test = dbTest('postgres', { poolMax: 10 });
  test('40 concurrent calls of 0.10 on a 0.50 budget: exactly 5 admitted, the rest short, nothing stray', async ({ db }) => {
    const mandateId = await world(db, 'race-payer', 500_000n, 5_000_000n);
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => admitShared(db.knex, row(`race-${i}`, mandateId, 'race-payer', 100_000n))));
    expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'budget_short')).toHaveLength(35);
    expect(await count(db, 'calls', { mandate_id: mandateId })).toBe(5);
    expect(await count(db, 'holds', { mandate_id: mandateId, status: 'held' })).toBe(5);
    expect(await reservedOf(db, mandateId)).toBe(500_000n);
  });
});
