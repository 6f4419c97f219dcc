/**
 * Fan-out notifications ("call X finished") between processes.
 *
 * Redis: ONE subscriber connection per notifier (opened at the first subscribe), channel names prefixed
 * (`<prefix>:n:<channel>`), local fan-out: however many listeners a process has on a channel, Redis sees one
 * SUBSCRIBE, and an UNSUBSCRIBE when the last of them leaves. Publishing uses a separate connection (a
 * subscribed connection can do nothing else). `subscribe()` resolves once Redis has confirmed the
 * subscription, so a message published after it resolves is delivered.
 *
 * Memory: an EventEmitter; messages are delivered on a later turn of the event loop, as with Redis.
 *
 * Notifications are a hint, not a record: a message published while nobody listens is lost (the Postgres row
 * is the truth; waiters fall back to it).
 */
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { QueueLogger } from './bullmq.js';
import { namespaceOf } from './ephemeral.js';
import type { Notifier } from './types.js';
import { closeRedis } from './redis-close.js';

const noop = () => {};
const silent: QueueLogger = { warn: noop, error: noop };

/** The Redis channel a notifier with this prefix uses for `channel`. */
export function redisChannelName(prefix: string | undefined, channel: string): string {
  return `${namespaceOf(prefix)}n:${channel}`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function assertChannel(channel: string): void {
  if (typeof channel !== 'string' || channel.length === 0) throw new TypeError('channel must be a non-empty string');
}

interface Entry {
  listener: (message: string) => void;
}

function deliver(entries: Iterable<Entry>, message: string, logger: QueueLogger, channel: string): void {
  for (const e of [...entries]) {
    try {
      e.listener(message);
    } catch (err) {
      logger.error({ channel, err: errorMessage(err) }, 'notification listener threw');
    }
  }
}

export interface RedisNotifierOptions {
  logger?: QueueLogger;
}

export function createRedisNotifier(redisUrl: string, prefix?: string, options: RedisNotifierOptions = {}): Notifier {
  const logger = options.logger ?? silent;
  /** Full channel name → local listeners. */
  const listeners = new Map<string, Set<Entry>>();
  /** Channels Redis has confirmed (or is confirming) for the subscriber connection. */
  const subscribed = new Set<string>();
  /** Per channel, the tail of the chain of SUBSCRIBE/UNSUBSCRIBE operations (keeps them in order). */
  const ops = new Map<string, Promise<void>>();
  let subscriber: Redis | undefined;
  let publisher: Redis | undefined;
  let closed = false;

  const subscriberConnection = (): Redis => {
    if (!subscriber) {
      subscriber = new Redis(redisUrl, { connectionName: `${namespaceOf(prefix)}notifier` });
      subscriber.on('message', (channel: string, message: string) => {
        const set = listeners.get(channel);
        if (set) deliver(set, message, logger, channel);
      });
      subscriber.on('error', (err) => logger.error({ err: errorMessage(err) }, 'notifier subscriber connection error'));
    }
    return subscriber;
  };
  const publisherConnection = (): Redis => {
    if (!publisher) {
      publisher = new Redis(redisUrl, { connectionName: `${namespaceOf(prefix)}publisher` });
      publisher.on('error', (err) => logger.error({ err: errorMessage(err) }, 'notifier publisher connection error'));
    }
    return publisher;
  };

  /** Brings Redis in line with the local listeners of `full`, after any operation already under way. */
  const sync = (full: string): Promise<void> => {
    const previous = ops.get(full) ?? Promise.resolve();
    const next = previous.catch(noop).then(async () => {
      if (closed) return;
      const wanted = (listeners.get(full)?.size ?? 0) > 0;
      if (wanted && !subscribed.has(full)) {
        await subscriberConnection().subscribe(full);
        subscribed.add(full);
      } else if (!wanted && subscribed.has(full)) {
        subscribed.delete(full);
        await subscriberConnection().unsubscribe(full);
      }
    });
    ops.set(full, next);
    void next
      .finally(() => {
        if (ops.get(full) === next) ops.delete(full);
      })
      .catch(noop);
    return next;
  };

  return {
    async publish(channel: string, message: string): Promise<void> {
      if (closed) throw new Error('notifier is closed');
      assertChannel(channel);
      await publisherConnection().publish(redisChannelName(prefix, channel), message);
    },

    async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
      if (closed) throw new Error('notifier is closed');
      assertChannel(channel);
      const full = redisChannelName(prefix, channel);
      const entry: Entry = { listener };
      let set = listeners.get(full);
      if (!set) {
        set = new Set();
        listeners.set(full, set);
      }
      set.add(entry);

      const remove = () => {
        const s = listeners.get(full);
        if (!s) return false;
        const removed = s.delete(entry);
        if (s.size === 0) listeners.delete(full);
        return removed;
      };

      try {
        await sync(full);
      } catch (err) {
        if (remove()) await sync(full).catch(noop);
        throw err;
      }

      let active = true;
      return async () => {
        if (!active) return;
        active = false;
        if (remove()) await sync(full);
      };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      listeners.clear();
      await Promise.allSettled([...ops.values()]);
      subscribed.clear();
      await Promise.allSettled([closeRedis(subscriber), closeRedis(publisher)]);
    },
  };
}

export function createMemoryNotifier(options: { logger?: QueueLogger } = {}): Notifier {
  const logger = options.logger ?? silent;
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  let closed = false;

  return {
    async publish(channel: string, message: string): Promise<void> {
      if (closed) throw new Error('notifier is closed');
      assertChannel(channel);
      setImmediate(() => emitter.emit(channel, message));
    },

    async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
      if (closed) throw new Error('notifier is closed');
      assertChannel(channel);
      const wrapped = (message: string) => deliver([{ listener }], message, logger, channel);
      emitter.on(channel, wrapped);
      let active = true;
      return async () => {
        if (!active) return;
        active = false;
        emitter.off(channel, wrapped);
      };
    },

    async close(): Promise<void> {
      closed = true;
      emitter.removeAllListeners();
    },
  };
}
