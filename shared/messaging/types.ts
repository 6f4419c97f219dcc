/**
 * The messaging seams between services. Each has two implementations behind the same interface:
 * Redis (BullMQ / ioredis) when REDIS_URL is set, in-process otherwise (the embedded default, not for
 * production). One contract test runs against both.
 *
 * Nothing sensitive goes into a queue payload: jobs carry ids only. Inputs and outputs travel through the
 * EphemeralStore, taken once and bounded in time.
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

export type JobHandler<T> = (data: T, job: JobInfo) => Promise<void>;

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

/** Short-lived values (a call's input on its way to the runner; an async result awaiting pickup). */
export interface EphemeralStore {
  put(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Read and delete in one step: a value is delivered at most once. */
  take(key: string): Promise<string | undefined>;
  /** Read without deleting. */
  peek(key: string): Promise<string | undefined>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface Messaging {
  queues: QueueBackend;
  notifier: Notifier;
  store: EphemeralStore;
  kind: 'redis' | 'memory';
  close(): Promise<void>;
}
