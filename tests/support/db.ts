/**
 * Each test gets its own database: on Postgres a clone of the run's migrated template, on PGlite a fresh
 * in-memory instance loaded from a migrated data-directory image. After the test the ledger audit must pass.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import knexFactory from 'knex';
import ClientPGLite from 'knex-pglite';
import { expect, inject, test as base } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/connect.js';
import { audit } from '../../shared/ledger/audit.js';
import { createDatabase, databaseUrlFor, dropDatabase } from './postgres-admin.js';

export type Backend = 'postgres' | 'pglite';
export const BACKENDS: readonly Backend[] = ['postgres', 'pglite'];

export interface TestDatabase extends Database {
  backend: Backend;
  /** The Postgres URL of this test's database (postgres only): other processes may connect to it. */
  url?: string;
}

let pgliteImage: Promise<Blob> | undefined;

async function migratedPgliteImage(): Promise<Blob> {
  pgliteImage ??= (async () => {
    const db = await openDatabase({});
    const pglite = (db.knex.client as unknown as { pglite: PGlite }).pglite;
    const image = await pglite.dumpDataDir('none');
    await db.close();
    return image;
  })();
  return pgliteImage;
}

export async function createTestDatabase(backend: Backend, options: { poolMax?: number } = {}): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const pglite = new PGlite({ loadDataDir: await migratedPgliteImage() });
    await pglite.waitReady;
    const knex = knexFactory({ client: ClientPGLite as unknown as typeof knexFactory.Client, connection: { pglite } as never });
    return { backend, kind: 'pglite', knex, close: () => knex.destroy() };
  }
  const baseUrl = inject('databaseUrl');
  const name = `holon_t_${inject('testRunId')}_${randomBytes(5).toString('hex')}`;
  await createDatabase(baseUrl, name, inject('templateDatabase'));
  const url = databaseUrlFor(baseUrl, name);
  const db = await openDatabase({ url, migrate: false, ...(options.poolMax ? { poolMax: options.poolMax } : {}) });
  return {
    ...db,
    backend,
    url,
    close: async () => {
      await db.close();
      await dropDatabase(baseUrl, name);
    },
  };
}

/** `test` with a `db` fixture on the given backend; the ledger audit runs after each test. */
export function dbTest(backend: Backend, options: { poolMax?: number } = {}) {
  return base.extend<{ db: TestDatabase }>({
    // eslint-disable-next-line no-empty-pattern
    db: async ({}, use) => {
      const db = await createTestDatabase(backend, options);
      try {
        await use(db);
        const report = await audit(db.knex);
        expect(report.problems, 'ledger audit after the test').toEqual([]);
      } finally {
        await db.close();
      }
    },
  });
}
