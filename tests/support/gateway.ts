/**
 * Starting a gateway for a test: the one way, in this process or as processes.
 *
 *   const g = await startTestGateway();                                      // every role, its own database and Redis prefix
 *   const g = await startTestGateway({ hosted: true, config: { … } });       // hosted mode: accounts, keys, ADMIN_KEY
 *   const g = await startTestGateway({ roles: ['api', 'settler'] });         // no runner: calls stay queued
 *   const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true }); // a second API process on g's data
 *   const c = await startTestCluster({ env: { … } });                        // services as OS processes (processes.ts)
 *   const agents = await loadTestRegistry();                                 // read once, for several gateways:
 *   const g = await startTestGateway({ registry: agents });                  // each lists them in a registry of its own
 *
 * `startTestGateway` runs the roles in this process (services/compose.ts `startGateway`) with the test settings (any
 * free port, the test registry, log level warn) under `config`, and answers a {@link TestGateway}: its URL, its
 * database, typed requests checked against the OpenAPI document (http.ts `send`, response-check.ts), and `stop()`.
 * Where its data lives (`TestDataOptions`): by default a new database cloned from the run's migrated template and a new
 * Redis key prefix, both removed by `stop()`; `beside: g` is another process of g's deployment (g's database and
 * prefix, kept); `databaseUrl` an existing database (a restored one) with a new prefix; `standalone` for scripts
 * outside vitest. Hand a gateway to `useAudited` (here) or use `gatewayTest` (gateway-fixture.ts): the ledger audit must
 * pass after the test.
 *
 * Nothing here imports vitest at load time (db.ts and redis.ts, which need vitest's provided context, are loaded when
 * a test database is made), so scripts that seed a gateway outside vitest (console-seed.ts) start theirs here too.
 */
import type { RailsInputs } from '../../shared/payments/rails.js';
import { generateKeyPairSync } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { ALL_ROLES, startGateway, type RunningGateway, type Role } from '../../services/compose.js';
import type { OutboundGuard } from '../../services/api/start.js';
import { audit } from '../../shared/ledger/audit.js';
import type { AgentVersion } from '../../shared/registry/agent-version.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import { createLogger } from '../../shared/platform/log.js';
import { openRedis } from '../../shared/messaging/redis-target.js';
import type { Config } from '../../shared/platform/config.js';
import type { TestDatabase } from './db.js';
import { ADMIN_KEY, send, type Reply, type Schema } from './http.js';
import { createDatabase, databaseUrlFor, dropDatabase } from './postgres-admin.js';
import { createCluster, type Cluster, type ClusterOptions } from './processes.js';
import { deleteKeysUnder } from './redis-keys.js';
import type { TestRedis } from './redis.js';

/** One signing key for the test gateways of this process (as HOLON_SIGNING_KEY: a private JWK), so none signs with a key of its own. */
const TEST_SIGNING_KEY = JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));

/** The shipped examples and the test fixtures' agents: every test gateway's registry unless `config` says otherwise. */
export const TEST_REGISTRY = ['examples', 'tests/fixtures/registry'];

/** Where a test gateway's data lives: its Postgres database and Redis key prefix. At most one of the first three. */
interface TestDataOptions {
  /** Another process of `g`'s deployment: g's database and Redis prefix, left as they are when this one stops. */
  beside?: TestGateway;
  /** An existing Postgres database (e.g. a restored one), kept; a new Redis prefix, removed by `stop()`. */
  databaseUrl?: string;
  /**
   * Outside vitest (scripts): a new empty database on DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres),
   * migrated by the gateway as it starts, and a Redis prefix on REDIS_URL (default redis://127.0.0.1:6379), named after
   * `name` (`holon_<name>_<id>`, `holon-<name>.<id>`), both removed by `stop()`.
   */
  standalone?: { name: string };
  /** With a new prefix: on this Redis instead of the run's (the test cluster: redis-cluster.ts). */
  redisUrl?: string;
}

export interface TestGatewayOptions extends TestDataOptions {
  /** The roles this process runs (default all four). */
  roles?: readonly Role[];
  /** Hosted mode with the test admin key (`hosted: true, adminKey: ADMIN_KEY`, under `config`). */
  hosted?: boolean;
  /** Settings over the test ones (port 0, TEST_REGISTRY, log level warn, the data's URLs and prefix). */
  config?: Partial<Config>;
  /**
   * The dev registry's agent versions, loaded already (loadTestRegistry), instead of the gateway reading TEST_REGISTRY
   * (or `config.registryDirs`) itself; its registry of its own lists them. Reading is cheap either way: a process
   * validates each manifest file once (shared/registry/manifest-files.ts).
   */
  registry?: readonly AgentVersion[];
  /** Schemes the payment rails offer beyond `exact` (an in-process `upto` test scheme: tests/support/x402-*.ts). */
  payments?: RailsInputs;
  /** The guarded client's resolver, route and CA for MCP clients' metadata documents (tests/support/mcp-clients.ts). */
  outboundGuard?: OutboundGuard;
}

export interface TestGateway {
  gw: RunningGateway;
  /** Its database; the test's own pool (20 connections) for a new test database, the gateway's otherwise. */
  db: TestDatabase;
  redisUrl: string;
  redisPrefix: string;
  /** http://127.0.0.1:<port> (meaningful when it runs the API). */
  url: string;
  /**
   * POST a JSON body; the answer's body is what the test says it expects (`post<Schema<'CallSucceeded'>>(…)`, http.ts),
   * `unknown` when it says nothing. `get` likewise.
   */
  post<T = unknown>(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  get<T = unknown>(path: string): Promise<Reply<T>>;
  /** Create a mandate (POST /v0/mandates) with defaults that tests override; its MandateView. */
  mandate(doc: Record<string, unknown>): Promise<Schema<'MandateView'>>;
  stop(): Promise<void>;
}

/** The settings hosted tests start with: hosted mode and the test admin key, then `extra`. */
export function hostedConfig(extra: Partial<Config> = {}): Partial<Config> {
  return { hosted: true, adminKey: ADMIN_KEY, ...extra };
}

interface TestData {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** The test's own connections to a new test database; undefined when the gateway's are used. */
  db?: TestDatabase;
  /** A client of a new test Redis prefix (keys under it), when one was made. */
  redis?: TestRedis;
  release(): Promise<void>;
}

const STANDALONE_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const STANDALONE_REDIS_URL = 'redis://127.0.0.1:6379';

/** The database and Redis prefix `options` ask for, made now when they are new. */
async function provideData(options: TestDataOptions, poolMax?: number): Promise<TestData> {
  if (options.beside) {
    const g = options.beside;
    return { databaseUrl: g.db.url!, redisUrl: g.redisUrl, redisPrefix: g.redisPrefix, db: g.db, release: async () => {} };
  }
  if (options.standalone) {
    const server = process.env.DATABASE_URL ?? STANDALONE_DATABASE_URL;
    const redisUrl = process.env.REDIS_URL ?? STANDALONE_REDIS_URL;
    const id = randomBytes(5).toString('hex');
    const database = `holon_${options.standalone.name}_${id}`;
    const redisPrefix = `holon-${options.standalone.name}.${id}`;
    await createDatabase(server, database);
    return {
      databaseUrl: databaseUrlFor(server, database),
      redisUrl,
      redisPrefix,
      release: async () => {
        await deleteKeysUnder(redisUrl, redisPrefix);
        await dropDatabase(server, database);
      },
    };
  }
  const { createTestRedis } = await import('./redis.js');
  if (options.databaseUrl) {
    const redis = await createTestRedis(options.redisUrl);
    return { databaseUrl: options.databaseUrl, redisUrl: redis.url, redisPrefix: redis.prefix, redis, release: () => redis.cleanup() };
  }
  const { createTestDatabase } = await import('./db.js');
  const db = await createTestDatabase('postgres', poolMax ? { poolMax } : {});
  const redis = await createTestRedis(options.redisUrl).catch(async (e) => {
    await db.close();
    throw e;
  });
  return {
    databaseUrl: db.url!,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    db,
    redis,
    release: async () => {
      await redis.cleanup();
      await db.close();
    },
  };
}

/**
 * The agent versions of `dirs` (default TEST_REGISTRY), for `startTestGateway({ registry })`: read once, frozen (a
 * gateway never changes a listed version, so several may list the same objects). Throws on a manifest it skips.
 */
export async function loadTestRegistry(dirs: readonly string[] = TEST_REGISTRY): Promise<readonly AgentVersion[]> {
  const { registry, problems } = await loadDevRegistry([...dirs], { log: createLogger('registry', 'warn') });
  if (problems.length) throw new Error(`the test registry has problems: ${JSON.stringify(problems)}`);
  return deepFreeze(registry.list());
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const data = await provideData(options, 20);
  let gw: RunningGateway;
  try {
    gw = await startGateway(
      options.roles ?? ALL_ROLES,
      {
        port: 0,
        databaseUrl: data.databaseUrl,
        redisUrl: data.redisUrl,
        redisPrefix: data.redisPrefix,
        registryDirs: TEST_REGISTRY,
        registryExplicit: true,
        logLevel: 'warn',
        signingKey: TEST_SIGNING_KEY,
        ...(options.hosted ? hostedConfig(options.config) : options.config),
      },
      {
        ...(options.registry ? { agents: options.registry } : {}),
        ...(options.payments ? { payments: options.payments } : {}),
        ...(options.outboundGuard ? { outboundGuard: options.outboundGuard } : {}),
      },
    );
  } catch (e) {
    await data.release();
    throw e;
  }
  const url = `http://127.0.0.1:${gw.port}`;
  const json = { 'content-type': 'application/json' };
  const post = <T = unknown>(path: string, body: unknown, headers: Record<string, string> = {}) =>
    send<T>(url, 'POST', path, { body, headers: { ...json, ...headers } });
  return {
    gw,
    db: data.db ?? { ...gw.db, backend: 'postgres', url: data.databaseUrl },
    redisUrl: data.redisUrl,
    redisPrefix: data.redisPrefix,
    url,
    post,
    get: (path) => send(url, 'GET', path, { headers: json }),
    mandate: async (doc) => {
      const r = await post<Schema<'MandateView'>>('/v0/mandates', {
        id: 'alice/test',
        issuer: 'alice',
        grantee: 'alice/assistant',
        allow: { agents: ['examples/*', 'fixtures/*'], capabilities: ['text.*', 'test.*'] },
        budget: { total: '5.00', currency: 'EUR' },
        ...doc,
      });
      if (r.status >= 300) throw new Error(`mandate refused: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    stop: async () => {
      try {
        await gw.stop();
      } finally {
        await data.release();
      }
    },
  };
}

/** Hand the gateway to a test, then require a clean ledger audit, and stop the gateway whatever happened. */
export async function useAudited(g: TestGateway, use: (g: TestGateway) => Promise<void>): Promise<void> {
  try {
    await use(g);
    const report = await audit(g.db.knex);
    if (!report.ok) throw new Error(`ledger audit after the test:\n${report.problems.join('\n')}`);
  } finally {
    await g.stop();
  }
}

/** A cluster on a new test database and Redis prefix, or `beside` a gateway of this process (on its data). */
export interface TestClusterOptions extends Pick<TestDataOptions, 'beside' | 'redisUrl'>, Pick<ClusterOptions, 'registry' | 'env'> {}

export interface TestCluster {
  cluster: Cluster;
  /** The database the processes share (the test's own connections, or `beside`'s). */
  db: TestDatabase;
  /** Their Redis, its prefix, and a client whose keys are under it. */
  redis: TestRedis;
  /** Stops every process, then removes the data made for it. */
  stop(): Promise<void>;
}

/**
 * Services as OS processes (`node bin/holon.mjs api|runner|settler|evaluator`, processes.ts), on the data the same
 * options as startTestGateway's describe: for what only separate processes show (kill -9, SIGSTOP, one process's own
 * environment and output). It cannot be folded into startTestGateway: a process takes its settings from its environment,
 * so `env` (HOLON_… variables) stands where `config` stands there, and nothing is started until `cluster.start(role)`.
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const data = await provideData(options);
  const redis = data.redis ?? {
    url: data.redisUrl,
    prefix: data.redisPrefix,
    client: openRedis(data.redisUrl, { keyPrefix: `${data.redisPrefix}:`, maxRetriesPerRequest: 2, lazyConnect: true }),
  };
  const cluster = createCluster({
    databaseUrl: data.databaseUrl,
    redisUrl: data.redisUrl,
    redisPrefix: data.redisPrefix,
    ...(options.registry !== undefined ? { registry: options.registry } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  return {
    cluster,
    db: data.db!,
    redis,
    stop: async () => {
      try {
        await cluster.stopAll();
      } finally {
        if (!data.redis) redis.client.disconnect();
        await data.release();
      }
    },
  };
}
