/** Where the gateway keeps things: Postgres (or PGlite), Redis (or the in-process queue), uploaded files. */
import { inSection, ROLES, setting } from './declare.js';

/** One Redis server (`redis://`, `rediss://`) or a Redis Cluster: `redis+cluster://` (or `rediss+cluster://`) and its seed nodes. */
const REDIS_URL = /^(rediss?:\/\/|rediss?\+cluster:\/\/([^@/]*@)?[^/?#@,]+:[0-9]{1,5}(,[^/?#@,]+:[0-9]{1,5})*\/?$)/;
const REDIS_FORMS =
  'One server: `redis://…` or `rediss://…`; a Redis Cluster: `redis+cluster://[user:password@]host:port,host:port…` (seed nodes; `rediss+cluster://` for TLS)';

/** How a part's own Redis is written and when it applies. */
const OWN = '`REDIS_URL` (one server or a cluster); needs `REDIS_URL` set; every process of a deployment must agree (docs/operating.md, "Redis")';

/** A Redis URL, one server or a cluster; shown unset as `REDIS_URL` (the per-part ones fall back to it). */
function redisSetting(o: { env: string; doc: string; shown?: string; overrideWins?: boolean }) {
  return setting.string({
    ...o,
    pattern: REDIS_URL,
    mustBe: 'must be a redis:// or rediss:// URL, or redis+cluster://host:port,host:port… for a Redis Cluster',
    shown: o.shown ?? '`REDIS_URL`',
    roles: ROLES,
  });
}

export const STORAGE = inSection('gateway', {
  databaseUrl: setting.string({
    env: 'DATABASE_URL',
    pattern: /^postgres(ql)?:\/\//,
    mustBe: 'must be a postgres:// URL',
    overrideWins: true,
    shown: 'PGlite in `HOLON_DB`',
    doc: 'the Postgres (`postgres://…`): mandates, holds, journal, receipts, calls. Required by a single role and in production',
    roles: [...ROLES, 'backup, restore, audit'],
    production: { needs: '(a managed Postgres with backups)' },
  }),
  dbDir: setting.file({
    env: 'HOLON_DB',
    default: '.holon/db',
    doc: 'the embedded PGlite data directory (`--db`) when `DATABASE_URL` is not set; one process at a time',
    roles: ['serve', 'backup, restore, audit'],
  }),
  redisUrl: redisSetting({
    env: 'REDIS_URL',
    overrideWins: true,
    shown: 'the in-process queue',
    doc: `Redis (\`maxmemory-policy noeviction\`): queues, notifier, ephemeral store. ${REDIS_FORMS}. Required by a single role`,
  }),
  /** Parts of the messaging on a Redis of their own (shared/messaging/index.ts `RedisFor`); each needs REDIS_URL set (parse.ts). */
  redisFor: {
    run: redisSetting({ env: 'HOLON_REDIS_URL_RUN', doc: `the run queue's Redis (the API adds, runners take), as ${OWN}` }),
    settle: redisSetting({ env: 'HOLON_REDIS_URL_SETTLE', doc: `the settle queue's Redis (runners add, settlers take), as ${OWN}` }),
    queues: redisSetting({ env: 'HOLON_REDIS_URL_QUEUES', doc: `the other queues' Redis (callback, deliver, evaluate), as ${OWN}` }),
    store: redisSetting({ env: 'HOLON_REDIS_URL_STORE', doc: `the ephemeral store's Redis (calls' inputs, outputs, stream events, cancel marks), as ${OWN}` }),
    notifier: redisSetting({ env: 'HOLON_REDIS_URL_NOTIFIER', doc: `the notifier's Redis (pub/sub: calls done, cancels, stream events), as ${OWN}` }),
  },
  /** Every Redis name starts `<prefix>:` (shared/messaging/ephemeral.ts namespaceOf). */
  redisPrefix: setting.string({
    env: 'HOLON_REDIS_PREFIX',
    default: 'holon',
    pattern: /^[A-Za-z0-9_.-]{1,64}$/,
    mustBe: 'must be 1 to 64 of letters, digits, "_", "." and "-"',
    doc: 'key prefix in Redis, so two gateways can share one',
    roles: ROLES,
  }),
  dbPool: setting.int({ env: 'HOLON_DB_POOL', default: 10, min: 2, max: 500, doc: 'Postgres connections per process', roles: ROLES }),
  /** gateway.md §7; shared/files/store.ts checks it. */
  fileQuotaBytes: setting.int({
    env: 'HOLON_FILE_QUOTA_BYTES',
    default: 200 * 1_048_576,
    min: 1024,
    max: 1_000_000 * 1_048_576,
    unit: 'bytes',
    doc: 'bytes of live uploaded files per account',
    roles: ['api'],
  }),
});
