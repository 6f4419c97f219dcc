/**
 * Short-lived values: a call's input on its way to the runner, a finished call's output awaiting its consumers.
 * Every value has a TTL; `take` reads and deletes in one step, so a value is delivered at most once.
 *
 * A value kept for consumers (a call's output: its synchronous answer, its webhook) has two companions: the list of
 * consumers still due (`<key>:due`, written by `keepFor`) and, once the last of them had it, the note that it was
 * collected (`<key>:gone`). `handOver` reads the value, strikes the consumer off and, when nobody is left, writes the
 * note and deletes the value — in one step, so two consumers handing over at once (two processes) never both think
 * the other still needs it, nor both miss it.
 *
 * Redis: keys `<prefix>:e:<key>`; put = SET … EX ttl, take = GETDEL (Redis ≥ 6.2), peek = GET, delete = DEL;
 * keepFor = SADD + EXPIRE (one MULTI), handOver = one Lua script, peekKept = GET + EXISTS (one MULTI). On a Redis
 * Cluster the key is a hash tag (`<prefix>:e:{<key>}`, its companions `<prefix>:e:{<key>}:due` and `…:gone`): the
 * script and the MULTIs touch one value and its companions only, so each runs on one slot. The keys of a call
 * (`input:<call id>`, `output:<call id>`, …) are spread over the slots by call id.
 * Memory: a Map with expiry timestamps; expired entries are invisible at once and purged lazily on access and
 * by an unref'd timer.
 *
 * TTLs are whole seconds (Redis EX); a fractional TTL is rounded up.
 */
import { DEFAULT_REDIS_PREFIX } from '../platform/config.js';
import type { EphemeralStore, Kept } from './types.js';
import { lazyRedis } from './redis-close.js';
import { isClusterUrl, openRedis, type RedisClient } from './redis-target.js';

/** The consumers a kept value still waits for, and the note left once they all had it (store keys, see above). */
const dueKey = (key: string): string => `${key}:due`;
const goneKey = (key: string): string => `${key}:gone`;
const COLLECTED = 'collected';

/** KEYS: value, due, gone · ARGV: consumer, ttl (s). Returns {'kept', value} | {'collected'} | {'absent'}. */
const HAND_OVER = `
local v = redis.call('GET', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if v then
  if redis.call('SCARD', KEYS[2]) == 0 then
    redis.call('SET', KEYS[3], '${COLLECTED}', 'EX', ARGV[2])
    redis.call('DEL', KEYS[1])
  end
  return {'kept', v}
end
if redis.call('EXISTS', KEYS[3]) == 1 then return {'collected'} end
return {'absent'}
`;

type StoreRedis = RedisClient & {
  handOverKept(value: string, due: string, gone: string, consumer: string, ttlSeconds: number): Promise<[string, string?]>;
};

function keptOf(reply: [string, string?]): Kept {
  if (reply[0] === 'kept') return { kind: 'kept', value: reply[1]! };
  return reply[0] === 'collected' ? { kind: 'collected' } : { kind: 'absent' };
}

/** The replies of a MULTI, or its first error thrown (ioredis resolves a transaction whose commands failed). */
function replied(replies: Array<[Error | null, unknown]> | null): unknown[] {
  const failed = replies?.find(([err]) => err);
  if (!replies || failed) throw failed?.[0] ?? new Error('the ephemeral store did not answer');
  return replies.map(([, value]) => value);
}

function assertConsumer(consumer: string): void {
  if (typeof consumer !== 'string' || consumer.length === 0) throw new TypeError('consumer must be a non-empty string');
}

/**
 * Every Redis name Holon uses starts with this: `holon` → `holon:`; a prefix already ending in ':' (the test
 * bed's `holon-test:<run>:<id>:`) is used as it is. Queues, store and notifier each add their own letter
 * (`q:`, `e:`, `n:`) so they can never collide.
 */
export function namespaceOf(prefix: string | undefined): string {
  const p = prefix && prefix.length > 0 ? prefix : DEFAULT_REDIS_PREFIX;
  return p.endsWith(':') ? p : `${p}:`;
}

/**
 * The Redis key a store with this prefix uses for `key`; its companions append to it (`dueKey`, `goneKey`). On a
 * cluster `key` is the hash tag, so a value and its companions are in one slot.
 */
export function redisStoreKey(prefix: string | undefined, key: string, cluster: boolean): string {
  return cluster ? `${namespaceOf(prefix)}e:{${key}}` : `${namespaceOf(prefix)}e:${key}`;
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

const MINIMUM_REDIS_VERSION = '6.2.0';

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
  const cluster = isClusterUrl(redisUrl);
  const redis = lazyRedis('ephemeral store', () => {
    const client = openRedis(redisUrl, { connectionName: `${namespaceOf(prefix)}store`, enableAutoPipelining: true }) as StoreRedis;
    client.defineCommand('handOverKept', { numberOfKeys: 3, lua: HAND_OVER });
    return client;
  });
  const connection = redis.connection;
  const k = (key: string) => {
    assertKey(key);
    return redisStoreKey(prefix, key, cluster);
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
    async keepFor(key: string, consumers: readonly string[], ttlSeconds: number): Promise<void> {
      consumers.forEach(assertConsumer);
      const ttl = ttlOf(ttlSeconds);
      if (consumers.length === 0) return;
      const due = dueKey(k(key));
      replied(
        await connection()
          .multi()
          .sadd(due, ...consumers)
          .expire(due, ttl)
          .exec(),
      );
    },
    async handOver(key: string, consumer: string, ttlSeconds: number): Promise<Kept> {
      assertConsumer(consumer);
      const value = k(key);
      return keptOf(await connection().handOverKept(value, dueKey(value), goneKey(value), consumer, ttlOf(ttlSeconds)));
    },
    async peekKept(key: string): Promise<Kept> {
      const [value, collected] = replied(
        await connection()
          .multi()
          .get(k(key))
          .exists(goneKey(k(key)))
          .exec(),
      ) as [string | null, number];
      if (value !== null) return { kind: 'kept', value };
      return collected === 1 ? { kind: 'collected' } : { kind: 'absent' };
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
  const memory = new MemoryEntries(options.now ?? Date.now);
  const timer = setInterval(() => memory.purge(), options.purgeIntervalMs ?? 60_000);
  timer.unref();
  let closed = false;
  /** Every operation checks the store is open and the key is usable, as Redis would refuse them. */
  const usable = (key: string) => {
    if (closed) throw new Error('ephemeral store is closed');
    assertKey(key);
  };

  return {
    async put(key: string, value: string, ttlSeconds: number): Promise<void> {
      usable(key);
      assertValue(value);
      memory.set(key, value, ttlOf(ttlSeconds));
    },
    async take(key: string): Promise<string | undefined> {
      usable(key);
      const e = memory.live(key);
      if (!e) return undefined;
      memory.entries.delete(key);
      return e.value;
    },
    async peek(key: string): Promise<string | undefined> {
      usable(key);
      return memory.live(key)?.value;
    },
    async delete(key: string): Promise<void> {
      usable(key);
      memory.entries.delete(key);
    },
    async keepFor(key: string, consumers: readonly string[], ttlSeconds: number): Promise<void> {
      usable(key);
      consumers.forEach(assertConsumer);
      const ttl = ttlOf(ttlSeconds);
      if (consumers.length > 0) memory.keepFor(key, consumers, ttl);
    },
    async handOver(key: string, consumer: string, ttlSeconds: number): Promise<Kept> {
      usable(key);
      assertConsumer(consumer);
      return memory.handOver(key, consumer, ttlOf(ttlSeconds));
    },
    async peekKept(key: string): Promise<Kept> {
      usable(key);
      const e = memory.live(key);
      if (e) return { kind: 'kept', value: e.value };
      return memory.collectedOrAbsent(key);
    },
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      memory.clear();
    },
  };
}

/** The memory store's values and due lists, with their expiry: expired ones are invisible at once, purged lazily. */
class MemoryEntries {
  readonly entries = new Map<string, { value: string; expiresAt: number }>();
  /** The consumers a kept value still waits for (Redis: a set at `<key>:due`), by the value's key. */
  private readonly dues = new Map<string, { consumers: Set<string>; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  set(key: string, value: string, ttl: number): void {
    this.entries.set(key, { value, expiresAt: this.now() + ttl * 1000 });
  }

  live(key: string): { value: string; expiresAt: number } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  keepFor(key: string, consumers: readonly string[], ttl: number): void {
    const due = this.liveDue(key)?.consumers ?? new Set<string>();
    for (const c of consumers) due.add(c);
    this.dues.set(key, { consumers: due, expiresAt: this.now() + ttl * 1000 });
  }

  /** As the Lua script does in Redis, in one step (no await): strike `consumer` off; the last one collects the value. */
  handOver(key: string, consumer: string, ttl: number): Kept {
    const e = this.live(key);
    const due = this.liveDue(key);
    due?.consumers.delete(consumer);
    if (due && due.consumers.size === 0) this.dues.delete(key);
    if (e) {
      if (!due || due.consumers.size === 0) {
        this.set(goneKey(key), COLLECTED, ttl);
        this.entries.delete(key);
      }
      return { kind: 'kept', value: e.value };
    }
    return this.collectedOrAbsent(key);
  }

  /** A kept value that is not there: collected (the note is there), or absent. */
  collectedOrAbsent(key: string): Kept {
    return this.live(goneKey(key)) ? { kind: 'collected' } : { kind: 'absent' };
  }

  purge(): void {
    const t = this.now();
    for (const [key, e] of this.entries) if (e.expiresAt <= t) this.entries.delete(key);
    for (const [key, d] of this.dues) if (d.expiresAt <= t) this.dues.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.dues.clear();
  }

  private liveDue(key: string): { consumers: Set<string>; expiresAt: number } | undefined {
    const d = this.dues.get(key);
    if (d && d.expiresAt <= this.now()) {
      this.dues.delete(key);
      return undefined;
    }
    return d;
  }
}
