/**
 * Migrations, one command, one lock (shared/db/migrate.ts, services/cli/migrate.ts):
 *
 * 1. Five roles (`holon api` twice, `runner`, `settler`, `evaluator`) started at the same instant on an empty
 *    Postgres database, a fresh database each time: every one comes up (the APIs answer /healthz, the
 *    workers' queues show their connection in Redis), and the knex migrations table has each migration exactly once.
 *    Without the advisory lock the losers fail creating knex's own tables ("relation knex_migrations already exists",
 *    a duplicate pg_type key) or, once two lock rows were inserted, on "Migration table is already locked".
 *
 *    "The same instant" is made exact: the processes reach Postgres through a proxy of this test that holds every
 *    connection until all five processes have opened one (or 60 s pass), then lets them through together. Loading a
 *    role takes a second or more and varies by hundreds of milliseconds, while knex creates its tables in a few
 *    milliseconds: started bare, the processes would mostly arrive one after the other and the race would not be
 *    run at all.
 * 2. `holon migrate`: applies every migration to an empty database and says which; a second run applies nothing;
 *    `--json`; an unreachable or malformed DATABASE_URL is exit 1 with one sentence; misuse is exit 2; a PGlite
 *    directory (`--db`) is created and migrated.
 *
 *    Ten races of five processes take some 100 s of two cores (a role process spends seconds of CPU loading the
 *    gateway before it touches the database), so CI runs two of them, and the ten races in-process: the five roles
 *    started by the composition root in this process in one tick, each with its own pool, so its own Postgres
 *    sessions — what the lock serialises is the same. MIGRATE_RACE_PROCESS_RUNS (default 2) and MIGRATE_RACE_RUNS
 *    (default 10) set how many of each are run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, onTestFailed, test } from 'vitest';
import { MIGRATIONS } from '../../shared/db/migrate.js';
import { holonCli } from '../support/backup-checks.js';
import { createDatabase, databaseUrlFor, dropDatabase } from '../support/postgres-admin.js';
import { createCluster, type Cluster, type ServiceRole } from '../support/processes.js';
import { poll } from '../support/poll.js';
import { createTestRedis } from '../support/redis.js';
import { startGateway, type RunningGateway } from '../../services/compose.js';

/** Races of role processes: each costs some 10 s of two cores (five Node processes loading the gateway). */
const PROCESS_RUNS = Number(process.env.MIGRATE_RACE_PROCESS_RUNS ?? 2);
/** Races of the same five roles started in this process: each with its own pool, so its own Postgres sessions. */
const RUNS = Number(process.env.MIGRATE_RACE_RUNS ?? 10);
const ROLES: readonly ServiceRole[] = ['api', 'api', 'runner', 'settler', 'evaluator'];
const NAMES = MIGRATIONS.map((m) => m.name);

let serial = 0;
/** A new, empty database (no template: nothing migrated), dropped by the run's teardown if a test leaves it. */
async function emptyDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const base = inject('databaseUrl');
  const name = `holon_t_${inject('testRunId')}_race_${process.pid}_${serial++}`;
  await createDatabase(base, name);
  return { name, url: databaseUrlFor(base, name), drop: () => dropDatabase(base, name) };
}

/**
 * A TCP proxy to Postgres that holds every connection until `release()` (or `holdMs` after it started), then passes
 * the held ones through together, and any later one at once.
 */
async function holdingProxy(upstream: URL, holdMs: number) {
  const held: net.Socket[] = [];
  const sockets = new Set<net.Socket>();
  let released = false;
  const pass = (client: net.Socket): void => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(server);
    const end = () => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.pipe(server);
    server.pipe(client);
    client.resume();
  };
  const proxy = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    if (released) pass(client);
    else held.push(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as net.AddressInfo).port;
  const release = () => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    for (const c of held.splice(0)) pass(c);
  };
  const timer = setTimeout(release, holdMs);
  return {
    url: (database: string) => `postgres://${upstream.username}${upstream.password ? `:${upstream.password}` : ''}@127.0.0.1:${port}/${database}`,
    held: () => held.length,
    release,
    close: async () => {
      release();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** Each migration's name and how many rows the knex migrations table has for it; and the lock table's rows. */
async function migrationRows(url: string): Promise<{ names: Array<{ name: string; n: number }>; locks: Array<{ is_locked: number }> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const names = (await client.query<{ name: string; n: number }>('SELECT name, count(*)::int AS n FROM knex_migrations GROUP BY name ORDER BY name')).rows;
    const locks = (await client.query<{ is_locked: number }>('SELECT is_locked FROM knex_migrations_lock')).rows;
    return { names, locks };
  } finally {
    await client.end();
  }
}

/** Error- or fatal-level pino lines (level ≥ 50) in what a process printed. */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    const m = /"level":(\d+)/.exec(line);
    return m !== null && Number(m[1]) >= 50;
  });
}

/** What the knex tables must say after any race: each migration once, one free lock row. */
async function expectMigratedOnce(url: string): Promise<void> {
  const { names, locks } = await migrationRows(url);
  expect(names, 'each migration exactly once').toEqual(NAMES.map((name) => ({ name, n: 1 })).sort((a, b) => a.name.localeCompare(b.name)));
  expect(locks, 'one lock row, free').toEqual([{ is_locked: 0 }]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('migrations: one lock for every role, and `holon migrate`', () => {
  const figures: Record<'processes' | 'in-process', number[]> = { processes: [], 'in-process': [] };
  afterAll(() => {
    for (const [kind, ms] of Object.entries(figures)) {
      if (!ms.length) continue;
      console.log(
        `[migrate-race] ${kind}: ${ms.length} runs of ${ROLES.length} roles on an empty database, all healthy every time; ` +
          `time to all healthy min ${Math.min(...ms)} ms, median ${median(ms)} ms, max ${Math.max(...ms)} ms`,
      );
    }
  });

  test(
    `${ROLES.length} role processes started at the same instant on an empty database, ${PROCESS_RUNS} times: all come up, each migration applied once`,
    async () => {
      const upstream = new URL(inject('databaseUrl'));
      for (let run = 1; run <= PROCESS_RUNS; run++) {
        const db = await emptyDatabase();
        const redis = await createTestRedis();
        const proxy = await holdingProxy(upstream, 60_000);
        let cluster: Cluster | undefined;
        try {
          cluster = createCluster({ databaseUrl: proxy.url(db.name), redisUrl: redis.url, redisPrefix: redis.prefix, env: { LOG_LEVEL: 'warn' } });
          const c = cluster;
          onTestFailed(() => console.error(`[migrate-race] run ${run}:\n${c.describe()}`));
          const t0 = Date.now();
          const starting = ROLES.map((role) => c.start(role, { readyTimeoutMs: 90_000 }));
          // Every process has reached Postgres and waits there: let them all in at once.
          await poll(() => proxy.held() >= ROLES.length, { what: 'every process to open its first database connection', timeoutMs: 60_000, orUndefined: true });
          const heldConnections = proxy.held();
          proxy.release();
          const started = await Promise.all(starting);
          figures.processes.push(Date.now() - t0);

          expect(heldConnections, 'the processes reached Postgres together').toBeGreaterThanOrEqual(ROLES.length);
          for (const p of started) expect(p.exited(), `${p.name} is running`).toBeUndefined();
          await expectMigratedOnce(db.url);
          for (const p of started) expect(errorLines(p.output()), `${p.name} logged no error`).toEqual([]);
        } finally {
          await cluster?.stopAll(10_000);
          await proxy.close();
          await redis.cleanup();
          await db.drop();
        }
      }
    },
    PROCESS_RUNS * 120_000 + 30_000,
  );

  // The same five roles, each started by the composition root in this process (services/compose.ts), all in one tick:
  // each has its own knex pool, hence its own Postgres sessions, exactly as separate processes do; only the module
  // loading is shared, which is what made the process races slow. Each run is a fresh empty database.
  test(
    `${ROLES.length} roles started in-process at the same instant on an empty database, ${RUNS} times: all come up, each migration applied once`,
    async () => {
      for (let run = 1; run <= RUNS; run++) {
        const db = await emptyDatabase();
        const redis = await createTestRedis();
        const gateways: RunningGateway[] = [];
        try {
          const t0 = Date.now();
          const results = await Promise.allSettled(
            ROLES.map((role) =>
              startGateway([role], {
                port: 0,
                databaseUrl: db.url,
                redisUrl: redis.url,
                redisPrefix: redis.prefix,
                // No agents: what is raced is the start-up up to the roles running, not the registry.
                registryDirs: [],
                registryExplicit: true,
                logLevel: 'silent',
                dbPool: 2,
              }).then((g) => {
                gateways.push(g);
                return g;
              }),
            ),
          );
          figures['in-process'].push(Date.now() - t0);
          const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`${ROLES[i]}: ${(r.reason as Error).message}`] : []));
          expect(failures, `run ${run}: every role started`).toEqual([]);
          for (const g of gateways.filter((x) => x.port !== undefined)) expect((await fetch(`http://127.0.0.1:${g.port}/healthz`)).status).toBe(200);
          await expectMigratedOnce(db.url);
        } finally {
          await Promise.all(gateways.map((g) => g.stop()));
          await redis.cleanup();
          await db.drop();
        }
      }
    },
    RUNS * 20_000 + 30_000,
  );

  test('holon migrate: applies, a second run is a no-op, --json; exit 1 with a sentence when it cannot; exit 2 on misuse', async () => {
    const db = await emptyDatabase();
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-migrate-'));
    try {
      const first = await holonCli(['migrate'], { DATABASE_URL: db.url });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`migrate: Postgres 127.0.0.1:${new URL(db.url).port}/${db.name}: applied ${NAMES.length} migrations`);
      for (const name of NAMES) expect(first.stdout).toContain(`  ${name}\n`);
      expect(first.stdout).toContain(`schema ${NAMES.at(-1)} (${NAMES.length} migrations)`);
      expect((await migrationRows(db.url)).names.map((r) => r.name)).toEqual([...NAMES].sort());

      const again = await holonCli(['migrate'], { DATABASE_URL: db.url });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/is up to date: schema \S+ \(\d+ migrations\), nothing applied/);
      const json = await holonCli(['migrate', '--json'], { DATABASE_URL: db.url });
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        database: `Postgres 127.0.0.1:${new URL(db.url).port}/${db.name}`,
        applied: [],
        schema: NAMES.at(-1),
        migrations: NAMES.length,
      });
      expect((await migrationRows(db.url)).names.every((r) => r.n === 1)).toBe(true);

      // Failures: one sentence on stderr, exit 1, no stack.
      const refused = await holonCli(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^holon migrate: cannot connect to Postgres 127\.0\.0\.1:1\/none: .*ECONNREFUSED.*\n$/);
      const malformed = await holonCli(['migrate'], { DATABASE_URL: 'not a url' });
      expect(malformed.code).toBe(1);
      expect(malformed.stderr).toBe(
        'holon migrate: DATABASE_URL is not a Postgres URL: it must start with postgres:// (postgres://USER:PASSWORD@HOST:PORT/DATABASE)\n',
      );
      const noDatabase = await holonCli(['migrate'], { DATABASE_URL: databaseUrlFor(inject('databaseUrl'), 'holon_no_such_database') });
      expect(noDatabase.code).toBe(1);
      expect(noDatabase.stderr).toMatch(/^holon migrate: cannot connect to .*holon_no_such_database.*does not exist\n$/);

      // Misuse: exit 2 with the usage.
      for (const args of [
        ['migrate', '--nope'],
        ['migrate', 'extra'],
        ['migrate', '--db', dir],
      ]) {
        const r = await holonCli(args, { DATABASE_URL: db.url });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toContain('usage: holon migrate [--db DIR] [--json]');
      }

      // A PGlite directory: created and migrated, then up to date.
      const pglite = path.join(dir, 'nested', 'db');
      const made = await holonCli(['migrate', '--db', pglite, '--json'], { DATABASE_URL: undefined });
      expect(made.code, made.stderr).toBe(0);
      expect(JSON.parse(made.stdout)).toMatchObject({ database: `PGlite ${pglite}`, applied: NAMES, schema: NAMES.at(-1) });
      const noop = await holonCli(['migrate', '--db', pglite], { DATABASE_URL: undefined });
      expect(noop.code, noop.stderr).toBe(0);
      expect(noop.stdout).toContain('nothing applied');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await db.drop();
    }
  }, 120_000);
});
