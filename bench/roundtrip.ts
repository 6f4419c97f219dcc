/**
 * What one round trip costs on this machine, one at a time: the unit the call path is made of.
 * A scratch tool for docs/PERFORMANCE.md (not part of `npm run bench`).
 *
 *   node --import tsx bench/roundtrip.ts
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { request } from 'undici';
import { openDatabase } from '../shared/db/connect.js';
import { keepAliveAgent, quantile, startNoopAgent } from './load.js';
import { postgresDatabase, redisTarget } from './support.js';

async function sample(label: string, n: number, op: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 200; i++) await op();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await op();
    ms.push(performance.now() - t);
  }
  console.log(`  ${label.padEnd(58)} p50 ${quantile(ms, 0.5).toFixed(3)} ms   p99 ${quantile(ms, 0.99).toFixed(3)} ms`);
}

const database = await postgresDatabase();
const redis = await redisTarget();
if (!database || !redis) throw new Error('needs Postgres and Redis');
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const db = await openDatabase({ url: database.url });
const r = new Redis(redis.url);
const agent = await startNoopAgent();
const dispatcher = keepAliveAgent(1);
try {
  await db.knex.raw(`INSERT INTO accounts (handle, kind) VALUES ('rt', 'user') ON CONFLICT DO NOTHING`);
  console.log('sequential round trips');
  await sample('pg: SELECT 1', 3000, () => client.query('SELECT 1'));
  await sample('knex: raw SELECT 1 (pool acquire + release)', 3000, () => db.knex.raw('SELECT 1'));
  await sample('knex: builder select by primary key', 3000, () => db.knex('accounts').where({ handle: 'rt' }).first());
  await sample('knex: transaction with one UPDATE (BEGIN/UPDATE/COMMIT)', 1000, () =>
    db.knex.transaction(async (trx) => {
      await trx.raw(`UPDATE accounts SET kind = kind WHERE handle = 'rt'`);
    }),
  );
  await sample('ioredis: PING', 3000, () => r.ping());
  await sample('ioredis: SET EX', 3000, () => r.set(`${redis.prefix}:rt`, 'x', 'EX', 10));
  await sample('undici → node:http no-op agent (POST, keep-alive)', 3000, async () => {
    const res = await request(`http://127.0.0.1:${agent.port}/`, { method: 'POST', body: '{}', dispatcher });
    await res.body.text();
  });
} finally {
  await client.end();
  await db.close();
  r.disconnect();
  await dispatcher.close();
  await agent.close();
  await database.drop();
  await redis.cleanup();
}
