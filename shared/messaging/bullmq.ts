/**
 * The Redis implementation of QueueBackend, on BullMQ. This is the ONLY file in the project that imports
 * `bullmq`; everything else sees the interfaces of ./types.ts.
 *
 * Keys: every queue lives under `<prefix>:q:<queue name>:…` (prefix from HOLON_REDIS_PREFIX),
 * so two gateways with different prefixes on one Redis never see each other's jobs. On a Redis Cluster each queue's
 * BullMQ prefix is a hash tag of its own (`{<prefix>:q:<queue name>}`, `bullQueuePrefix`): every BullMQ script touches
 * the keys of one queue, which are then in one slot, and the queues spread over the nodes.
 *
 * A queue may be on a Redis of its own (`queueConnections`, one server or a cluster); the queues on one Redis share
 * its connections.
 *
 * Connections: one shared ioredis connection for all producers (Queue instances), one shared connection for
 * the workers' ordinary commands (BullMQ requires `maxRetriesPerRequest: null` there so a Redis blip makes a
 * worker wait rather than fail a job mid-flight), and one blocking connection per worker, which BullMQ
 * duplicates from the shared one and owns. All are opened lazily: a process that only produces never opens
 * the worker connection.
 *
 * Delivery is at least once. A worker killed with `kill -9` leaves its job `active` with a lock that stops
 * being renewed; once the lock expires (lockDuration) another worker's stalled checker (every
 * stalledInterval) moves the job back to `wait` and it is delivered again — `attemptsMade` then counts the
 * lost delivery. A job that stalls more than `maxStalledCount` times is failed: Postgres is the truth and a
 * sweeper closes whatever is left.
 *
 * A handler that answers `{ postponeMs }` moves its job back to `delayed` (Job.moveToDelayed with the worker's
 * lock token, then BullMQ's DelayedError): the same id, no attempt counted, pending all along.
 *
 * Tracing (`tracing: true`, set when an OTLP endpoint is configured: shared/platform/tracing.ts): every Queue and
 * Worker gets bullmq-otel's telemetry, so adding a job carries the active trace context in the job's options and the
 * worker's `process` span continues it: one trace from the API through the run and settle queues. Spans name queues
 * and job ids (call ids), never job data.
 */
import { DelayedError, Queue as BullQueue, Worker as BullWorker, type Job, type JobsOptions } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import { namespaceOf } from './ephemeral.js';
import type { JobHandler, JobInfo, JobOptions, JobStartObserver, Queue, QueueBackend, QueueCounts, Worker } from './types.js';
import { closeRedis } from './redis-close.js';
import { isClusterUrl, openRedis, type RedisClient } from './redis-target.js';

/** Enough of a pino logger for the queue adapters. */
export interface QueueLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: QueueLogger = { warn: () => {}, error: () => {} };

export interface StallSettings {
  /** How often a worker looks for jobs whose lock has expired (ms). */
  stalledIntervalMs: number;
  /** How long a job's lock lives without renewal (ms). Renewed every lockDuration/2 while the handler runs. */
  lockDurationMs: number;
  /** How many times a job may be recovered from a stall; one more stall fails it. */
  maxStalledCount: number;
}

/** At-least-once with fast recovery after a `kill -9`: a dead worker's job is redelivered within ~10–20 s. */
const DEFAULT_STALL_SETTINGS: Readonly<StallSettings> = Object.freeze({
  stalledIntervalMs: 5_000,
  lockDurationMs: 10_000,
  maxStalledCount: 1,
});

export interface BullBackendOptions {
  /** Redis URL (`redis://…`, `rediss://…`, or a cluster's `redis+cluster://…`). */
  connection: string;
  /** Queues on a Redis of their own: a queue's name → its URL (the others are on `connection`). */
  queueConnections?: Readonly<Record<string, string | undefined>>;
  /** Key prefix (HOLON_REDIS_PREFIX). */
  prefix?: string;
  /** Stall/lock settings for every worker of this backend (per-worker options override them). */
  worker?: Partial<StallSettings>;
  logger?: QueueLogger;
  /** Told when a first delivery starts, with its wait since the job was due (types.ts). */
  onJobStart?: JobStartObserver;
  /** Propagate the trace context through jobs (bullmq-otel); off = no telemetry at all. */
  tracing?: boolean;
}

interface BullWorkerOptions extends Partial<StallSettings> {
  concurrency: number;
}

type BullJobState = 'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'prioritized' | 'waiting-children' | 'unknown';

export interface BullBackend extends QueueBackend {
  readonly kind: 'redis';
  worker<T>(name: string, handler: JobHandler<T>, options: BullWorkerOptions): Worker;
  /** Where a job is (for operations and tests); `unknown` once it is gone. */
  jobState(name: string, jobId: string): Promise<BullJobState>;
}

/** The BullMQ `prefix` option for a Holon prefix: keys become `<prefix>:q:<queue>:…`. */
export function bullPrefixOf(prefix: string | undefined): string {
  return `${namespaceOf(prefix)}q`;
}

/** The BullMQ `prefix` of one queue: `bullPrefixOf`'s, and on a cluster a hash tag of the queue's own (`{<prefix>:q:<queue>}`). */
export function bullQueuePrefix(prefix: string | undefined, queue: string, cluster: boolean): string {
  return cluster ? `{${bullPrefixOf(prefix)}:${queue}}` : bullPrefixOf(prefix);
}

/*
 * BullMQ refuses custom job ids that look like integers or contain ':' (it uses both itself). Callers may use
 * any non-empty string (e.g. `settle:rcpt_…`), so custom ids are stored encoded: `j-` + the id with '%' and ':'
 * percent-encoded. Auto-generated ids are integers and never start with `j-`, so decoding is unambiguous.
 */
const CUSTOM_ID = 'j-';

export function encodeJobId(id: string): string {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('jobId must be a non-empty string');
  return CUSTOM_ID + id.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

function decodeJobId(id: string): string {
  if (!id.startsWith(CUSTOM_ID)) return id;
  return id.slice(CUSTOM_ID.length).replace(/%(25|3A)/g, (_m, code: string) => (code === '25' ? '%' : ':'));
}

function assertQueueName(name: string): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new TypeError(`invalid queue name ${JSON.stringify(name)}: letters, digits, _ . - only`);
}

function assertPositiveInt(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`${what} must be an integer ≥ 1, got ${value}`);
}

/** Maps the interface's JobOptions to BullMQ's. Shared semantics with the memory twin. */
function toBullJobOptions(options: JobOptions = {}): JobsOptions {
  const opts: JobsOptions = { removeOnComplete: true, removeOnFail: { age: 3600 } };
  if (options.jobId !== undefined) opts.jobId = encodeJobId(options.jobId);
  if (options.delayMs !== undefined && options.delayMs > 0) opts.delay = Math.round(options.delayMs);
  const attempts = options.attempts ?? 1;
  assertPositiveInt(attempts, 'attempts');
  if (attempts > 1) {
    opts.attempts = attempts;
    opts.backoff = { type: 'exponential', delay: Math.max(0, Math.round(options.backoffMs ?? 1000)) };
  }
  return opts;
}

/**
 * Deliveries before this one. BullMQ's `attemptsMade` counts failures only; a delivery lost to a crash shows in
 * `attemptsStarted` (incremented each time the job becomes active), so the larger of the two is reported.
 */
function jobInfo(job: Job): JobInfo {
  const started = typeof job.attemptsStarted === 'number' ? job.attemptsStarted : 1;
  return { id: decodeJobId(String(job.id)), attemptsMade: Math.max(job.attemptsMade ?? 0, started - 1) };
}

/** How long a job waited from when it was due (added, plus its delay) to when a worker took it; 0 if clocks disagree. */
function waitedMs(job: Job): number {
  return Math.max(0, (job.processedOn ?? Date.now()) - (job.timestamp + (job.opts.delay ?? 0)));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function createBullBackend(options: BullBackendOptions): BullBackend {
  const bull = new BullConnections(options);
  return {
    kind: 'redis',

    queue<T>(name: string): Queue<T> {
      bull.assertOpen();
      assertQueueName(name);
      return {
        add: async (data: T, jobOptions?: JobOptions) => {
          bull.assertOpen();
          const opts = toBullJobOptions(jobOptions);
          await bull.queue(name).add(name, data, opts);
        },
        pending: async (jobId: string) => {
          bull.assertOpen();
          const state = await bull.queue(name).getJobState(encodeJobId(jobId));
          return !['completed', 'failed', 'unknown'].includes(state);
        },
      };
    },

    worker<T>(name: string, handler: JobHandler<T>, workerOptions: BullWorkerOptions): Worker {
      bull.assertOpen();
      assertQueueName(name);
      assertPositiveInt(workerOptions.concurrency, 'concurrency');
      const { concurrency, ...overrides } = workerOptions;
      return bull.startWorker(name, handler, { concurrency, ...stallSettingsOf(bull.stallDefaults, overrides) });
    },

    async counts(name: string): Promise<QueueCounts> {
      bull.assertOpen();
      assertQueueName(name);
      const c = await bull.queue(name).getJobCounts('waiting', 'prioritized', 'active', 'delayed');
      return { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0 };
    },

    async jobState(name: string, jobId: string): Promise<BullJobState> {
      bull.assertOpen();
      return (await bull.queue(name).getJobState(encodeJobId(jobId))) as BullJobState;
    },

    close: () => bull.close(),
  };
}

/** A worker's stall settings: the backend's, overridden by the worker's own; checked. */
function stallSettingsOf(defaults: StallSettings, overrides: Partial<StallSettings>): StallSettings {
  const stall: StallSettings = { ...defaults, ...definedOnly(overrides) };
  assertPositiveInt(stall.stalledIntervalMs, 'stalledIntervalMs');
  assertPositiveInt(stall.lockDurationMs, 'lockDurationMs');
  if (!Number.isInteger(stall.maxStalledCount) || stall.maxStalledCount < 0) throw new TypeError('maxStalledCount must be an integer ≥ 0');
  return stall;
}

/** A Redis's two shared connections (opened lazily): the producers', and the workers' ordinary commands. */
interface RedisPair {
  producer?: RedisClient;
  consumer?: RedisClient;
}

/** One backend's Redis connections (opened lazily, per Redis), its BullMQ queues and workers, and its closing. */
class BullConnections {
  readonly stallDefaults: StallSettings;
  private readonly prefix: string | undefined;
  private readonly connectionOf: (queue: string) => string;
  private readonly logger: QueueLogger;
  private readonly onJobStart: JobStartObserver | undefined;
  private readonly telemetry: { telemetry?: BullMQOtel };
  /** By Redis URL. */
  private readonly redises = new Map<string, RedisPair>();
  private readonly queues = new Map<string, BullQueue>();
  private readonly workers = new Set<BullWorker>();
  private closing: Promise<void> | undefined;

  constructor(options: BullBackendOptions) {
    this.prefix = options.prefix;
    const own = options.queueConnections ?? {};
    this.connectionOf = (queue) => own[queue] ?? options.connection;
    this.logger = options.logger ?? silentLogger;
    this.onJobStart = options.onJobStart;
    this.stallDefaults = { ...DEFAULT_STALL_SETTINGS, ...definedOnly(options.worker ?? {}) };
    this.telemetry = options.tracing ? { telemetry: new BullMQOtel({ tracerName: 'holon-bullmq' }) } : {};
  }

  assertOpen(): void {
    if (this.closing) throw new Error('queue backend is closed');
  }

  /** The BullMQ queue of `name`, made on first use, on the shared producer connection of its Redis. */
  queue(name: string): BullQueue {
    let q = this.queues.get(name);
    if (!q) {
      const url = this.connectionOf(name);
      q = new BullQueue(name, { connection: this.producerConnection(url), prefix: this.prefixOf(name, url), ...this.telemetry });
      q.on('error', (err) => this.logger.error({ queue: name, err: errorMessage(err) }, 'queue error'));
      this.queues.set(name, q);
    }
    return q;
  }

  /** A BullMQ worker on `name` (its blocking connection duplicated from the shared consumer one), its events logged. */
  startWorker<T>(name: string, handler: JobHandler<T>, settings: StallSettings & { concurrency: number }): Worker {
    const url = this.connectionOf(name);
    const worker = new BullWorker(
      name,
      async (job: Job, token?: string) => {
        const info = jobInfo(job);
        if (info.attemptsMade === 0) this.onJobStart?.(name, waitedMs(job));
        const result = await handler(job.data as T, info);
        if (result?.postponeMs !== undefined) {
          // Back to `delayed` under its own id, no attempt counted (BullMQ's DelayedError: the job was moved).
          await job.moveToDelayed(Date.now() + Math.max(1, Math.round(result.postponeMs)), token);
          throw new DelayedError();
        }
      },
      {
        connection: this.consumerConnection(url),
        prefix: this.prefixOf(name, url),
        concurrency: settings.concurrency,
        stalledInterval: settings.stalledIntervalMs,
        lockDuration: settings.lockDurationMs,
        maxStalledCount: settings.maxStalledCount,
        ...this.telemetry,
      },
    );
    this.logWorkerEvents(name, worker);
    this.workers.add(worker);

    let closed: Promise<void> | undefined;
    return {
      close: () => {
        // BullMQ's close() stops fetching, waits for the running handlers, then closes the blocking connection.
        closed ??= worker.close().finally(() => this.workers.delete(worker));
        return closed;
      },
    };
  }

  /** Workers first, then queues, then the shared connections; the first error is thrown once all are closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const errors: unknown[] = [];
      const settle = async (ps: Promise<unknown>[]) => {
        for (const r of await Promise.allSettled(ps)) if (r.status === 'rejected') errors.push(r.reason);
      };
      await settle([...this.workers].map((w) => w.close()));
      await settle([...this.queues.values()].map((q) => q.close()));
      await settle([...this.redises.values()].flatMap((r) => [closeRedis(r.producer), closeRedis(r.consumer)]));
      this.workers.clear();
      this.queues.clear();
      this.redises.clear();
      if (errors.length) throw errors[0];
    })();
    return this.closing;
  }

  private logWorkerEvents(name: string, worker: BullWorker): void {
    const { logger } = this;
    worker.on('error', (err) => logger.error({ queue: name, err: errorMessage(err) }, 'queue worker error'));
    worker.on('failed', (job, err) => {
      logger.warn(
        { queue: name, jobId: job?.id === undefined ? undefined : decodeJobId(String(job.id)), attemptsMade: job?.attemptsMade, err: errorMessage(err) },
        'job failed',
      );
    });
    worker.on('stalled', (jobId) => logger.warn({ queue: name, jobId: decodeJobId(jobId) }, 'job stalled; redelivering'));
  }

  private prefixOf(queue: string, url: string): string {
    return bullQueuePrefix(this.prefix, queue, isClusterUrl(url));
  }

  private redis(url: string): RedisPair {
    let pair = this.redises.get(url);
    if (!pair) {
      pair = {};
      this.redises.set(url, pair);
    }
    return pair;
  }

  private producerConnection(url: string): RedisClient {
    const pair = this.redis(url);
    if (!pair.producer) {
      // Producers fail a command after ioredis' default retries rather than hang an API request forever.
      pair.producer = openRedis(url, { connectionName: `${bullPrefixOf(this.prefix)}:producer` });
      pair.producer.on('error', (err) => this.logger.error({ err: errorMessage(err) }, 'queue producer connection error'));
    }
    return pair.producer;
  }

  private consumerConnection(url: string): RedisClient {
    const pair = this.redis(url);
    if (!pair.consumer) {
      pair.consumer = openRedis(url, { maxRetriesPerRequest: null, connectionName: `${bullPrefixOf(this.prefix)}:worker` });
      pair.consumer.on('error', (err) => this.logger.error({ err: errorMessage(err) }, 'queue worker connection error'));
    }
    return pair.consumer;
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
