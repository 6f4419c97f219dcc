/** Where the gateway keeps things: Postgres (or PGlite), Redis (or the in-process queue), uploaded files. */
import { inSection, ROLES, setting } from './declare.js';

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
  redisUrl: setting.string({
    env: 'REDIS_URL',
    pattern: /^rediss?:\/\//,
    mustBe: 'must be a redis:// URL',
    overrideWins: true,
    shown: 'the in-process queue',
    doc: 'Redis (`redis://…`, `maxmemory-policy noeviction`): queues, notifier, ephemeral store. Required by a single role',
    roles: ROLES,
  }),
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
