/**
 * Rate limits shared by every API process (gateway.md §7, "Limits and platform rules").
 *
 * Algorithm: a FIXED WINDOW anchored at the first hit. The first hit on a key starts a window of `windowMs`;
 * every hit in it counts; the first `limit` are admitted, the rest refused until the window ends. Refused
 * hits do not extend the window. Known trade-off: a client can get up to 2 × limit through in a short span
 * straddling the end of one window and the start of the next. That is acceptable for abuse limits (per
 * address, per account, sign-ups) and keeps each bucket to one integer key, whatever the limit.
 *
 * Redis: key `<prefix>:r:<key>` (the project's namespace, see `namespaceOf`; `r:` keeps these apart from the
 * queues `q:`, the store `e:` and the notifier `n:`). One Lua script per hit, so concurrent hits from any
 * number of processes are counted exactly: INCR; PEXPIRE on the first hit; PTTL. A key that somehow has no
 * TTL gets one again, so keys always expire and never accumulate.
 * The connection fails fast when Redis is unreachable (short command timeout, one retry) so a caller can fail
 * open instead of queueing every request behind a dead connection; see services/api/rate-limit.ts.
 *
 * Memory: the same semantics in a Map for the embedded mode (one process, no Redis). Expired windows are
 * dropped on access and by an unref'd timer.
 */
import { namespaceOf } from '../messaging/ephemeral.js';
import { lazyRedis } from '../messaging/redis-close.js';
import { openRedis, type RedisClient } from '../messaging/redis-target.js';

export interface RateRule {
  /** Hits admitted per window (≥ 1). */
  limit: number;
  /** Window length in milliseconds (≥ 1). */
  windowMs: number;
}

export interface RateDecision {
  ok: boolean;
  /** Hits still admitted in the current window (0 when refused). */
  remaining: number;
  /** When refused: whole seconds until the window frees a slot (≥ 1). 0 when admitted. */
  retryAfterS: number;
}

export interface RateLimiter {
  /** Counts one hit on `key` under `rule`. Use one rule per key: the window is set by the hit that opens it. */
  hit(key: string, rule: RateRule): Promise<RateDecision>;
  close(): Promise<void>;
}

/** The Redis key a limiter with this prefix uses for `key`. */
export function redisRateKey(prefix: string | undefined, key: string): string {
  return `${namespaceOf(prefix)}r:${key}`;
}

function assertKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError('rate limit key must be a non-empty string');
}

function assertRule(rule: RateRule): void {
  if (!Number.isSafeInteger(rule?.limit) || rule.limit < 1) throw new TypeError(`rate limit must be a positive integer, got ${rule?.limit}`);
  if (!Number.isSafeInteger(rule.windowMs) || rule.windowMs < 1) {
    throw new TypeError(`rate window must be a positive integer of milliseconds, got ${rule.windowMs}`);
  }
}

function decide(count: number, msLeft: number, rule: RateRule): RateDecision {
  if (count <= rule.limit) return { ok: true, remaining: rule.limit - count, retryAfterS: 0 };
  return { ok: false, remaining: 0, retryAfterS: Math.max(1, Math.ceil(msLeft / 1000)) };
}

/** KEYS[1] = bucket, ARGV[1] = window ms. Returns {count in this window, ms until the window ends}. */
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {n, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

type WithHit = RedisClient & { holonRateHit(key: string, windowMs: number): Promise<[number, number]> };

export interface RedisRateLimiterOptions {
  /** How long one hit may wait for Redis before it fails (ms); default 1000. */
  commandTimeoutMs?: number;
  /** Where connection errors go; default nowhere (failed hits reject, and the caller reports them). */
  onConnectionError?: (err: Error) => void;
}

export function createRedisRateLimiter(redisUrl: string, prefix?: string, options: RedisRateLimiterOptions = {}): RateLimiter {
  const redis = lazyRedis('rate limiter', () => {
    const c = openRedis(redisUrl, {
      connectionName: `${namespaceOf(prefix)}ratelimit`,
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? 1000,
    });
    c.on('error', (err: Error) => options.onConnectionError?.(err));
    c.defineCommand('holonRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    return c as WithHit;
  });
  const connection = redis.connection;

  return {
    async hit(key: string, rule: RateRule): Promise<RateDecision> {
      assertKey(key);
      assertRule(rule);
      const [count, msLeft] = await connection().holonRateHit(redisRateKey(prefix, key), rule.windowMs);
      return decide(Number(count), Number(msLeft), rule);
    },
    close: redis.close,
  };
}

export interface MemoryRateLimiterOptions {
  /** How often expired windows are dropped in the background (ms); default 60 s. */
  purgeIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface MemoryRateLimiter extends RateLimiter {
  /** Windows held (after dropping the expired ones). */
  size(): number;
}

export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { count: number; endsAt: number }>();
  let closed = false;
  const purge = () => {
    const t = now();
    for (const [key, w] of windows) if (w.endsAt <= t) windows.delete(key);
  };
  const timer = setInterval(purge, options.purgeIntervalMs ?? 60_000);
  timer.unref();

  return {
    async hit(key: string, rule: RateRule): Promise<RateDecision> {
      if (closed) throw new Error('rate limiter is closed');
      assertKey(key);
      assertRule(rule);
      const t = now();
      let w = windows.get(key);
      if (!w || w.endsAt <= t) {
        w = { count: 0, endsAt: t + rule.windowMs };
        windows.set(key, w);
      }
      w.count += 1;
      return decide(w.count, w.endsAt - t, rule);
    },
    size(): number {
      purge();
      return windows.size;
    },
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      windows.clear();
    },
  };
}
