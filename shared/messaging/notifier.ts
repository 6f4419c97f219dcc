/**
 * Fan-out notifications ("call X finished") between processes.
 *
 * Redis: ONE subscriber connection per notifier (opened at the first subscribe), channel names prefixed
 * (`<prefix>:n:<channel>`), local fan-out: however many listeners a process has on a channel, Redis sees one
 * SUBSCRIBE, and an UNSUBSCRIBE when the last of them leaves. Publishing uses a separate connection (a
 * subscribed connection can do nothing else). `subscribe()` resolves once Redis has confirmed the
 * subscription, so a message published after it resolves is delivered. On a Redis Cluster the subscriber is one
 * node's connection (ioredis' Cluster picks it, and subscribes again elsewhere when it goes); a PUBLISH to any node
 * reaches every node's subscribers.
 *
 * Memory: an EventEmitter; messages are delivered on a later turn of the event loop, as with Redis.
 *
 * Notifications are a hint, not a record: a message published while nobody listens is lost (the Postgres row
 * is the truth; waiters fall back to it).
 */
import { EventEmitter } from 'node:events';
import type { QueueLogger } from './bullmq.js';
import { namespaceOf } from './ephemeral.js';
import type { Notifier } from './types.js';
import { closeRedis } from './redis-close.js';
import { openRedis, type RedisClient } from './redis-target.js';

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
  const channels = new RedisChannels(redisUrl, prefix, options.logger ?? silent);
  return {
    async publish(channel: string, message: string): Promise<void> {
      if (channels.closed) throw new Error('notifier is closed');
      assertChannel(channel);
      await channels.publisherConnection().publish(redisChannelName(prefix, channel), message);
    },

    async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
      if (channels.closed) throw new Error('notifier is closed');
      assertChannel(channel);
      const full = redisChannelName(prefix, channel);
      const entry: Entry = { listener };
      channels.listen(full, entry);
      try {
        await channels.sync(full);
      } catch (err) {
        if (channels.unlisten(full, entry)) await channels.sync(full).catch(noop);
        throw err;
      }

      let active = true;
      return async () => {
        if (!active) return;
        active = false;
        if (channels.unlisten(full, entry)) await channels.sync(full);
      };
    },

    close: () => channels.close(),
  };
}

/**
 * One Redis notifier's connections and channels: the local listeners of each (full) channel name, and the
 * SUBSCRIBE/UNSUBSCRIBE operations that keep Redis in line with them, in order per channel.
 */
class RedisChannels {
  private isClosed = false;
  /** Full channel name → local listeners. */
  private readonly listeners = new Map<string, Set<Entry>>();
  /** Channels Redis has confirmed (or is confirming) for the subscriber connection. */
  private readonly subscribed = new Set<string>();
  /** Per channel, the tail of the chain of SUBSCRIBE/UNSUBSCRIBE operations (keeps them in order). */
  private readonly ops = new Map<string, Promise<void>>();
  private subscriber: RedisClient | undefined;
  private publisher: RedisClient | undefined;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string | undefined,
    private readonly logger: QueueLogger,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  listen(full: string, entry: Entry): void {
    let set = this.listeners.get(full);
    if (!set) {
      set = new Set();
      this.listeners.set(full, set);
    }
    set.add(entry);
  }

  /** Whether `entry` was listening (and is no longer). */
  unlisten(full: string, entry: Entry): boolean {
    const s = this.listeners.get(full);
    if (!s) return false;
    const removed = s.delete(entry);
    if (s.size === 0) this.listeners.delete(full);
    return removed;
  }

  /** Brings Redis in line with the local listeners of `full`, after any operation already under way. */
  sync(full: string): Promise<void> {
    const previous = this.ops.get(full) ?? Promise.resolve();
    const next = previous.catch(noop).then(async () => {
      if (this.isClosed) return;
      const wanted = (this.listeners.get(full)?.size ?? 0) > 0;
      if (wanted && !this.subscribed.has(full)) {
        await this.subscriberConnection().subscribe(full);
        this.subscribed.add(full);
      } else if (!wanted && this.subscribed.has(full)) {
        this.subscribed.delete(full);
        await this.subscriberConnection().unsubscribe(full);
      }
    });
    this.ops.set(full, next);
    void next
      .finally(() => {
        if (this.ops.get(full) === next) this.ops.delete(full);
      })
      .catch(noop);
    return next;
  }

  publisherConnection(): RedisClient {
    if (!this.publisher) {
      // One tick's PUBLISHes in one write (on one server: openRedis says why not on a cluster).
      this.publisher = openRedis(this.redisUrl, { connectionName: `${namespaceOf(this.prefix)}publisher`, enableAutoPipelining: true });
      this.publisher.on('error', (err) => this.logger.error({ err: errorMessage(err) }, 'notifier publisher connection error'));
    }
    return this.publisher;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.listeners.clear();
    await Promise.allSettled([...this.ops.values()]);
    this.subscribed.clear();
    await Promise.allSettled([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }

  private subscriberConnection(): RedisClient {
    if (!this.subscriber) {
      this.subscriber = openRedis(this.redisUrl, { connectionName: `${namespaceOf(this.prefix)}notifier` });
      this.subscriber.on('message', (channel: string, message: string) => {
        const set = this.listeners.get(channel);
        if (set) deliver(set, message, this.logger, channel);
      });
      this.subscriber.on('error', (err) => this.logger.error({ err: errorMessage(err) }, 'notifier subscriber connection error'));
    }
    return this.subscriber;
  }
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
