/**
 * The messaging seams between services. Each has two implementations behind the same interface:
 * Redis (BullMQ / ioredis) when REDIS_URL is set, in-process otherwise (the embedded default, not for
 * production). One contract test runs against both.
 *
 * Nothing sensitive goes into a queue payload: jobs carry ids only. Inputs and outputs travel through the
 * EphemeralStore, bounded in time: an input is taken once; an output is kept for the consumers named for it.
 */

export interface JobOptions {
  /** Deduplication: adding a job whose id is already queued or running is a no-op. */
  jobId?: string;
  delayMs?: number;
  /** Total attempts including the first (default 1). */
  attempts?: number;
  /** Exponential backoff base between attempts (default 1000 ms). */
  backoffMs?: number;
}

export interface JobInfo {
  id: string;
  /** Attempts already made before this one (0 on first delivery). */
  attemptsMade: number;
}

export interface Queue<T> {
  add(data: T, options?: JobOptions): Promise<void>;
  /** Whether the job with this custom id is still to be done: waiting, delayed, running or awaiting a retry. */
  pending(jobId: string): Promise<boolean>;
}

/** How many jobs of a queue are where, right now (read-only; for metrics and operations). */
export interface QueueCounts {
  /** Ready to be taken by a worker. */
  waiting: number;
  /** Taken by a worker, not finished. */
  active: number;
  /** Held back by `delayMs` or waiting for a retry's backoff. */
  delayed: number;
}

/**
 * Told when a handler starts a job's first delivery, with how long the job waited since it was due (added, plus its
 * `delayMs`). Called synchronously before the handler; it must not throw or wait (a counter, a histogram).
 */
export type JobStartObserver = (queue: string, waitMs: number) => void;

export interface Worker {
  /** Stop taking jobs; wait for running handlers to finish (or hand them back) and close connections. */
  close(): Promise<void>;
}

/**
 * What a handler answers: nothing (the job is done), or `{ postponeMs }`: the job goes back to the queue as it is,
 * under its own id, due again after `postponeMs` (delayed; pending meanwhile). A postponement is not a failure: it
 * does not count against the job's attempts, and its payload is not re-validated or changed.
 */
export type JobResult = undefined | { postponeMs: number };

// biome-ignore lint/suspicious/noConfusingVoidType: a handler that answers nothing is the common case.
export type JobHandler<T> = (data: T, job: JobInfo) => Promise<void | JobResult>;

export interface QueueBackend {
  queue<T>(name: string): Queue<T>;
  /**
   * Process jobs of `name`. Delivery is at least once: a handler may see a job again after a crash or stall,
   * so handlers must be idempotent (the Postgres rows decide). A handler that throws is retried while
   * attempts remain.
   */
  worker<T>(name: string, handler: JobHandler<T>, options: { concurrency: number }): Worker;
  /** Jobs of `name` waiting, running and delayed (a queue never used counts zeros). */
  counts(name: string): Promise<QueueCounts>;
  close(): Promise<void>;
}

/** Fan-out notifications (e.g. "call X finished"), one subscription per process, not per listener. */
export interface Notifier {
  publish(channel: string, message: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * A value kept for its consumers (`EphemeralStore.keepFor` / `handOver` / `peekKept`): there, or gone because every
 * consumer named for it had it (`collected`), or not there for another reason (`absent`: its TTL ended, never put).
 */
export type Kept = { kind: 'kept'; value: string } | { kind: 'collected' } | { kind: 'absent' };

/** Short-lived values (a call's input on its way to the runner; a finished call's output awaiting its consumers). */
export interface EphemeralStore {
  put(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Read and delete in one step: a value is delivered at most once. */
  take(key: string): Promise<string | undefined>;
  /** Read without deleting. */
  peek(key: string): Promise<string | undefined>;
  delete(key: string): Promise<void>;
  /**
   * Names consumers the value of `key` (put now or later with `put`) is kept for: `handOver` deletes it only once
   * each of them has had it. The list lives ttlSeconds (a consumer left on it when it ends no longer holds the value).
   */
  keepFor(key: string, consumers: readonly string[], ttlSeconds: number): Promise<void>;
  /**
   * `consumer` has the value of `key`, read and handed over in one step (what it finds, as `peekKept`). It is no
   * longer kept for `consumer`; when no consumer named by `keepFor` is left (or none was), the value is deleted and
   * that it was collected is remembered for ttlSeconds. Handing over a value that is not there changes nothing.
   */
  handOver(key: string, consumer: string, ttlSeconds: number): Promise<Kept>;
  /** The value of `key`, read without handing it to anyone; or why it is not there. */
  peekKept(key: string): Promise<Kept>;
  close(): Promise<void>;
}

export interface Messaging {
  queues: QueueBackend;
  notifier: Notifier;
  store: EphemeralStore;
  kind: 'redis' | 'memory';
  close(): Promise<void>;
}
