/**
 * `holon serve`: every service in one process, on the embedded defaults (PGlite in --db DIR) unless
 * DATABASE_URL is set. Stops gracefully on SIGTERM / SIGINT.
 */
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../../shared/config.js';
import { openDatabase, type Database } from '../../shared/db/connect.js';
import { ensureAccount, PLATFORM_ACCOUNT } from '../../shared/ledger/accounts.js';
import { createLogger } from '../../shared/log.js';
import { createApp } from '../api/app.js';

export interface RunningGateway {
  config: Config;
  db: Database;
  server: Server;
  port: number;
  stop(): Promise<void>;
}

export async function startGateway(overrides: Partial<Config> = {}): Promise<RunningGateway> {
  const config = loadConfig(process.env, overrides);
  const log = createLogger('gateway', config.logLevel);
  const db = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dir: config.dbDir });
  await ensureAccount(db.knex, PLATFORM_ACCOUNT, 'platform');
  const app = createApp({ db: db.knex, log });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port, database: db.kind, ...(db.kind === 'pglite' ? { dir: config.dbDir } : {}) }, 'holon gateway listening');
  if (db.kind === 'pglite') log.warn('embedded database (PGlite): for trying Holon out, not for production');
  return {
    config,
    db,
    server,
    port,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
    },
  };
}

export async function serveCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { port: { type: 'string' }, db: { type: 'string' } } }));
  } catch (e) {
    process.stderr.write(`holon serve: ${(e as Error).message}\n`);
    return 2;
  }
  const overrides: Partial<Config> = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`holon serve: --port must be a port number\n`);
      return 2;
    }
    overrides.port = port;
  }
  if (values.db) overrides.dbDir = values.db;
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(overrides);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  }
  await new Promise<void>((resolve) => {
    const shutdown = () => {
      process.off('SIGTERM', shutdown);
      process.off('SIGINT', shutdown);
      void gateway.stop().then(resolve);
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  });
  return 0;
}
