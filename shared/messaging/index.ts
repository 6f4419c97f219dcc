/**
 * The messaging bundle every service gets: queues, notifier, ephemeral store. Redis (BullMQ / ioredis) when a
 * Redis URL is configured; in-process twins otherwise (the embedded default, not for production). Each part may be
 * on a Redis of its own (`redisFor`), each one server or a Redis Cluster (redis-target.ts).
 */
import type { QueueLogger, StallSettings } from './bullmq.js';
import { DEFAULT_REDIS_PREFIX } from '../platform/config.js';
import { createMemoryStore, createRedisStore } from './ephemeral.js';
import { createMemoryBackend } from './memory.js';
import { createMemoryNotifier, createRedisNotifier } from './notifier.js';
import type { EphemeralStore, JobStartObserver, Messaging, Notifier, QueueBackend } from './types.js';

export type * from './types.js';

/** Redis of their own for parts of the messaging, each a URL as REDIS_URL's; unset = REDIS_URL. */
export interface RedisFor {
  /** Queues on a Redis of their own, by name (the run queue, the settle queue). */
  queue?: Readonly<Record<string, string | undefined>>;
  /** Every other queue. */
  queues?: string;
  store?: string;
  notifier?: string;
}

export interface MessagingOptions {
  /** REDIS_URL; absent = in-process implementations. */
  redisUrl?: string;
  /** The parts on a Redis of their own (ignored without `redisUrl`). */
  redisFor?: RedisFor;
  /** HOLON_REDIS_PREFIX (default DEFAULT_REDIS_PREFIX). Ignored without Redis. */
  prefix?: string;
  /** Stall/lock settings for BullMQ workers (defaults: DEFAULT_STALL_SETTINGS in ./bullmq.ts). */
  worker?: Partial<StallSettings>;
  /** Where job failures and connection errors are reported; default: nowhere. */
  logger?: QueueLogger;
  /** Told when a job's first delivery starts, with its wait (the queue-wait metric). */
  onJobStart?: JobStartObserver;
  /** Carry the trace context through jobs (BullMQ only; the in-process queue keeps the context itself). */
  tracing?: boolean;
}

export async function createMessaging(options: MessagingOptions = {}): Promise<Messaging> {
  if (!options.redisUrl) {
    const backend = createMemoryBackend({ logger: options.logger, ...(options.onJobStart ? { onJobStart: options.onJobStart } : {}) });
    return bundle('memory', backend, createMemoryNotifier({ logger: options.logger }), createMemoryStore());
  }
  const prefix = options.prefix || DEFAULT_REDIS_PREFIX;
  // Loaded only when Redis is configured: the embedded default never loads BullMQ.
  const { createBullBackend } = await import('./bullmq.js');
  const redisUrl = options.redisUrl;
  const { queue = {}, queues: otherQueues = redisUrl, store: storeUrl = redisUrl, notifier: notifierUrl = redisUrl } = options.redisFor ?? {};
  const store = createRedisStore(storeUrl, prefix);
  const queues = createBullBackend({
    connection: otherQueues,
    queueConnections: queue,
    prefix,
    worker: options.worker,
    logger: options.logger,
    ...(options.onJobStart ? { onJobStart: options.onJobStart } : {}),
    tracing: options.tracing ?? false,
  });
  const notifier = createRedisNotifier(notifierUrl, prefix, { logger: options.logger });
  const messaging = bundle('redis', queues, notifier, store);
  try {
    // Fail at start-up, in plain words, rather than on the first call.
    await store.ready();
  } catch (err) {
    await messaging.close().catch(() => {});
    throw err;
  }
  return messaging;
}

function bundle(kind: Messaging['kind'], queues: QueueBackend, notifier: Notifier, store: EphemeralStore): Messaging {
  let closing: Promise<void> | undefined;
  return {
    kind,
    queues,
    notifier,
    store,
    close: () => {
      // Workers first (they may still publish or touch the store while finishing), then the rest.
      closing ??= (async () => {
        const results = [await Promise.allSettled([queues.close()]), await Promise.allSettled([notifier.close(), store.close()])].flat();
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      })();
      return closing;
    },
  };
}
