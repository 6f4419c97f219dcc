/**
 * Throw-away infrastructure for the benches: a Postgres database created and dropped per run, and a Redis
 * key prefix whose keys are deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import pg from 'pg';

async function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export interface ThrowAwayDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on DATABASE_URL's server (else 127.0.0.1:5432), or null when none answers. */
export async function postgresDatabase(): Promise<ThrowAwayDatabase | null> {
  const base = process.env.DATABASE_URL ?? ((await answers('127.0.0.1', 5432)) ? 'postgres://postgres@127.0.0.1:5432/postgres' : null);
  if (!base) return null;
  const name = `holon_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface ThrowAwayRedis {
  url: string;
  /** A HOLON_REDIS_PREFIX (no ':'); every key the gateway writes starts with `<prefix>:`. */
  prefix: string;
  /** Delete every key under the prefix; returns how many. */
  cleanup(): Promise<number>;
}

/** REDIS_URL (else 127.0.0.1:6379) with a unique prefix, or null when no Redis answers. */
export async function redisTarget(): Promise<ThrowAwayRedis | null> {
  const url = process.env.REDIS_URL ?? ((await answers('127.0.0.1', 6379)) ? 'redis://127.0.0.1:6379' : null);
  if (!url) return null;
  const prefix = `holon-bench-${randomBytes(5).toString('hex')}`;
  return {
    url,
    prefix,
    cleanup: async () => {
      const raw = new Redis(url, { maxRetriesPerRequest: 2 });
      let deleted = 0;
      try {
        let cursor = '0';
        do {
          const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          if (keys.length) deleted += await raw.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        raw.disconnect();
      }
      return deleted;
    },
  };
}

/** Calls not in a final state. */
export async function openCalls(db: Knex): Promise<number> {
  const r = await db('calls').whereNotIn('status', ['succeeded', 'failed']).count<{ n: string }[]>('* as n');
  return Number(r[0]!.n);
}

/** Waits (at most ~10 s) until every call is final; answers how many are still open. */
export async function untilNoneOpen(db: Knex): Promise<number> {
  for (let i = 0; i < 100; i++) {
    if ((await openCalls(db)) === 0) return 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return openCalls(db);
}

/**
 * Whether the server runs autovacuum. This machine's Postgres has it off (its CI configuration); a deployment has it
 * on, and without it the rows every settlement updates (the mandate's, the balances) pile up dead versions round after
 * round: Holon's rate fell by half over a minute of load in one run.
 */
export async function autovacuumOff(db: Knex): Promise<boolean> {
  const r = await db.raw<{ rows: Array<{ autovacuum: string }> }>('SHOW autovacuum');
  return r.rows[0]?.autovacuum === 'off';
}

/** What autovacuum would have done between two phases of a bench: the database vacuumed (outside every measured window). */
export async function vacuumBetweenPhases(db: Knex): Promise<void> {
  await db.raw('VACUUM (ANALYZE)');
}

/** A section of bench/results.json as last written, or undefined (no file, no such section). */
export function readResultSection(name: string): Record<string, unknown> | undefined {
  const file = new URL('./results.json', import.meta.url);
  if (!existsSync(file)) return undefined;
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { results?: Record<string, unknown> };
  const section = doc.results?.[name];
  return section && typeof section === 'object' ? (section as Record<string, unknown>) : undefined;
}

/**
 * Write these sections of bench/results.json, keeping every other section as it is (`npm run bench` writes its own,
 * `bench:peer` and `bench:scale` theirs, in any order).
 */
export function writeResultSections(sections: Record<string, unknown>): void {
  const file = new URL('./results.json', import.meta.url);
  const doc = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as { at?: string; node?: string; results?: Record<string, unknown> };
  const next = { at: new Date().toISOString(), node: process.version, results: { ...doc.results, ...sections } };
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
}
