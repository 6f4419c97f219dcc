/**
 * Runs once per `npm test`: finds (or starts) Postgres and Redis, builds one migrated template database
 * that every test clones, and removes this run's databases at the end.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../shared/db/connect.js';
import { startServices } from './services.js';
import { createDatabase, databaseUrlFor, dropDatabase, dropDatabasesLike } from './postgres-admin.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    templateDatabase: string;
    testRunId: string;
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await startServices();
  const runId = randomBytes(4).toString('hex');
  const template = `holon_tpl_${runId}`;
  await createDatabase(services.databaseUrl, template);
  const db = await openDatabase({ url: databaseUrlFor(services.databaseUrl, template) });
  await db.close();

  project.provide('databaseUrl', services.databaseUrl);
  project.provide('templateDatabase', template);
  project.provide('testRunId', runId);
  project.provide('redisUrl', services.redisUrl);

  return async () => {
    await dropDatabasesLike(services.databaseUrl, `holon_t_${runId}_`);
    await dropDatabase(services.databaseUrl, template);
    await services.stop();
  };
}
