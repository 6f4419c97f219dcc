/**
 * Short-lived values: a call's input on its way to the runner, an async result awaiting pickup. Every value
 * has a TTL; `take` reads and deletes in one step, so a value is delivered at most once.
 *
 * Redis: keys `<prefix>:e:<key>`; put = SET … EX ttl, take = GETDEL (Redis ≥ 6.2), peek = GET, delete = DEL.
 * Memory: a Map with expiry timestamps; expired entries are invisible at once and purged lazily on access and
 * by an unref'd timer.
 *
 * TTLs are whole seconds (Redis EX); a fractional TTL is rounded up.
 */
import { Redis } from 'ioredis';
import type { EphemeralStore } from './types.js';
import { lazyRedis } from './redis-close.js';

export const DEFAULT_REDIS_PREFIX = 'holon';

/**
 * Every Redis name Holon uses starts with this: `holon` → `holon:`; a prefix already ending in ':' (the test
 * bed's `holon-test:<run>:<id>:`) is used as it is. Queues, store and notifier each add their own letter
 * (`q:`, `e:`, `n:`) so they can never collide.
 */
export function namespaceOf(prefix: string | undefined): string {
  const p = prefix && prefix.length > 0 ? prefix : DEFAULT_REDIS_PREFIX;
  return p.endsWith(':') ? p : `${p}:`;
}

/** The Redis key a store with this prefix uses for `key`. */
export function redisStoreKey(prefix: string | undefined, key: string): string {
  return `${namespaceOf(prefix)}e:${key}`;
}

function ttlOf(ttlSeconds: number): number {
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new TypeError(`ttlSeconds must be a positive number, got ${ttlSeconds}`);
  }
  return Math.ceil(ttlSeconds);
}

function assertKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError('key must be a non-empty string');
}

function assertValue(value: string): void {
  if (typeof value !== 'string') throw new TypeError('value must be a string');
}

export const MINIMUM_REDIS_VERSION = '6.2.0';

function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.split('.').map((n) => parseInt(n, 10) || 0);
  const b = minimum.split('.').map((n) => parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

export interface RedisEphemeralStore extends EphemeralStore {
  /** Connects and checks the server supports GETDEL (Redis ≥ 6.2); throws a plain-words error otherwise. */
  ready(): Promise<void>;
}

export function createRedisStore(redisUrl: string, prefix?: string): RedisEphemeralStore {
  const redis = lazyRedis('ephemeral store', () => new Redis(redisUrl, { connectionName: `${namespaceOf(prefix)}store` }));
  const connection = redis.connection;
  const k = (key: string) => {
    assertKey(key);
    return redisStoreKey(prefix, key);
  };

  return {
    async ready(): Promise<void> {
      const info = await connection().info('server');
      const version = /^redis_version:(\S+)/m.exec(info)?.[1];
      if (version && !versionAtLeast(version, MINIMUM_REDIS_VERSION)) {
        throw new Error(`Redis ${MINIMUM_REDIS_VERSION} or newer is required (GETDEL); this server runs ${version}`);
      }
    },
    async put(key: string, value: string, ttlSeconds: number): Promise<void> {
      assertValue(value);
      await connection().set(k(key), value, 'EX', ttlOf(ttlSeconds));
    },
    async take(key: string): Promise<string | undefined> {
      return (await connection().getdel(k(key))) ?? undefined;
    },
    async peek(key: string): Promise<string | undefined> {
      return (await connection().get(k(key))) ?? undefined;
    },
    async delete(key: string): Promise<void> {
      await connection().del(k(key));
    },
    close: redis.close,
  };
}

export interface MemoryStoreOptions {
  /** How often expired entries are purged in the background (ms); default 60 s. */
  purgeIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export function createMemoryStore(options: MemoryStoreOptions = {}): EphemeralStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: string; expiresAt: number }>();
  let closed = false;

  const live = (key: string) => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return e;
  };
  const purge = () => {
    const t = now();
    for (const [key, e] of entries) if (e.expiresAt <= t) entries.delete(key);
  };
  const timer = setInterval(purge, options.purgeIntervalMs ?? 60_000);
  timer.unref();

  const assertOpen = () => {
    if (closed) throw new Error('ephemeral store is closed');
  };

  return {
    async put(key: string, value: string, ttlSeconds: number): Promise<void> {
      assertOpen();
      assertKey(key);
      assertValue(value);
      entries.set(key, { value, expiresAt: now() + ttlOf(ttlSeconds) * 1000 });
    },
    async take(key: string): Promise<string | undefined> {
      assertOpen();
      assertKey(key);
      const e = live(key);
      if (!e) return undefined;
      entries.delete(key);
      return e.value;
    },
    async peek(key: string): Promise<string | undefined> {
      assertOpen();
      assertKey(key);
      return live(key)?.value;
    },
    async delete(key: string): Promise<void> {
      assertOpen();
      assertKey(key);
      entries.delete(key);
    },
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      entries.clear();
    },
  };
}
