/**
 * The hot-row law behind the gateway's ceiling, measured in isolation: 64 concurrent callers each run a
 * transaction that locks ONE shared row (as every call locks its mandate row and its payer's balance row),
 * with n statements between the lock and the commit, through knex with a pool of 10 (the gateway's).
 * Throughput ≈ 1 / (time the row stays locked), and that time grows with every round trip made under the lock.
 * A scratch tool for docs/PERFORMANCE.md (not part of `npm run bench`).
 *
 *   node --import tsx bench/hot-row.ts
 */
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../shared/db/connect.js';
import { postgresDatabase } from './support.js';

const database = await postgresDatabase();
if (!database) throw new Error('needs Postgres');
const db = await openDatabase({ url: database.url, migrate: false, poolMax: 10 });
const k = db.knex;
try {
  await k.raw(`CREATE TABLE hot (id int PRIMARY KEY, n bigint NOT NULL)`);
  await k.raw(`CREATE TABLE side (id bigserial PRIMARY KEY, v bigint)`);
  await k.raw(`INSERT INTO hot VALUES (1, 0)`);
  const seconds = 4;
  const run = async (label: string, once: () => Promise<unknown>) => {
    let done = 0;
    const stopAt = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (performance.now() < stopAt) {
          await once();
          done++;
        }
      }),
    );
    console.log(`  ${label.padEnd(70)} ${(done / seconds).toFixed(0).padStart(6)} /s`);
  };
  console.log(`64 concurrent callers, one shared row, knex pool 10, ${seconds} s each`);
  for (const between of [0, 2, 7, 14]) {
    await run(`transaction: lock row, ${between} other statements, update row, commit`, () =>
      k.transaction(async (trx) => {
        await trx.raw(`SELECT n FROM hot WHERE id = 1 FOR UPDATE`);
        for (let i = 0; i < between; i++) await trx.raw(`INSERT INTO side (v) VALUES (?)`, [i]);
        await trx.raw(`UPDATE hot SET n = n + 1 WHERE id = 1`);
      }),
    );
  }
  await run('transaction: the same 14 inserts first, then lock + update last', () =>
    k.transaction(async (trx) => {
      for (let i = 0; i < 14; i++) await trx.raw(`INSERT INTO side (v) VALUES (?)`, [i]);
      await trx.raw(`UPDATE hot SET n = n + 1 WHERE id = 1`);
    }),
  );
  await run('one statement: CTE inserting 14 rows and updating the row (autocommit)', () =>
    k.raw(`WITH s AS (INSERT INTO side (v) SELECT g FROM generate_series(1, 14) g) UPDATE hot SET n = n + 1 WHERE id = 1`),
  );
} finally {
  await db.close();
  await database.drop();
}
