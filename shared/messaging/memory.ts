/**
 * The in-process twin of the BullMQ backend (the embedded default; not for production: a process that dies
 * loses its queue). Same semantics as far as one process can have them, checked by the shared contract test:
 *
 * - jobs are processed asynchronously, never inside `add`; jobs added before any worker wait for one;
 * - a worker runs at most `concurrency` handlers at once; several workers on one queue share its jobs;
 * - `delayMs` holds a job back; a handler that throws is retried after an exponential backoff
 *   (backoffMs · 2^(n-1)) while attempts remain, then dropped (BullMQ keeps it as failed for an hour);
 * - a `jobId` already waiting, delayed, running or awaiting a retry makes `add` a no-op;
 * - a handler that answers `{ postponeMs }` puts its job back, delayed, under its id, no attempt counted;
 * - data is JSON round-tripped (what BullMQ stores), so each delivery gets a fresh copy and a payload
 *   that would not survive Redis fails here too;
 * - `Worker.close()` stops taking jobs and waits for its running handlers; `close()` of the backend drops
 *   whatever is still queued or delayed and leaves no timer behind.
 */
import type { QueueLogger } from './bullmq.js';
import type { JobHandler, JobInfo, JobOptions, JobStartObserver, Queue, QueueBackend, QueueCounts, Worker } from './types.js';

export interface MemoryBackendOptions {
  logger?: QueueLogger;
  /** Told when a first delivery starts, with its wait since the job was due (types.ts). */
  onJobStart?: JobStartObserver;
}

export interface MemoryBackend extends QueueBackend {
  readonly kind: 'memory';
}

interface MemJob {
  id: string;
  /** Custom ids take part in deduplication; generated ones do not. */
  custom: boolean;
  json: string;
  attempts: number;
  backoffMs: number;
  attemptsMade: number;
  /** When the job was due (ms): added, plus its delay. */
  dueAt: number;
  /** Delivered before (a postponed job comes back): onJobStart is told once. */
  started?: boolean;
}

interface MemWorker {
  concurrency: number;
  running: Set<Promise<void>>;
  closing: boolean;
  run(job: MemJob): void;
}

interface QueueState {
  name: string;
  ready: MemJob[];
  /** Custom ids of jobs that exist: waiting, delayed, running or awaiting a retry. */
  ids: Set<string>;
  workers: MemWorker[];
  nextWorker: number;
  dispatchScheduled: boolean;
  /** Jobs held back by a delay or a retry's backoff, and jobs a handler runs: for `counts`. */
  delayed: number;
  active: number;
}

const noop = () => {};

function assertQueueName(name: string): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new TypeError(`invalid queue name ${JSON.stringify(name)}: letters, digits, _ . - only`);
}

function assertPositiveInt(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`${what} must be an integer ≥ 1, got ${value}`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function createMemoryBackend(options: MemoryBackendOptions = {}): MemoryBackend {
  const queues = new MemoryQueues(options.logger ?? { warn: noop, error: noop }, options.onJobStart);
  return {
    kind: 'memory',

    queue<T>(name: string): Queue<T> {
      queues.assertOpen();
      assertQueueName(name);
      return {
        pending: async (jobId: string) => queues.stateOf(name).ids.has(jobId),
        add: async (data: T, jobOptions: JobOptions = {}) => queues.add(name, data, jobOptions),
      };
    },

    worker<T>(name: string, handler: JobHandler<T>, workerOptions: { concurrency: number }): Worker {
      queues.assertOpen();
      assertQueueName(name);
      assertPositiveInt(workerOptions.concurrency, 'concurrency');
      return queues.startWorker(name, handler, workerOptions.concurrency);
    },

    async counts(name: string): Promise<QueueCounts> {
      assertQueueName(name);
      const s = queues.states.get(name);
      return s ? { waiting: s.ready.length, active: s.active, delayed: s.delayed } : { waiting: 0, active: 0, delayed: 0 };
    },

    close: () => queues.close(),
  };
}

/** The backend's queues, timers and workers: what every queue and worker of one backend shares. */
class MemoryQueues {
  readonly states = new Map<string, QueueState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly workers = new Set<{ close(): Promise<void> }>();
  private sequence = 0;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly logger: QueueLogger,
    private readonly onJobStart: JobStartObserver | undefined,
  ) {}

  assertOpen(): void {
    if (this.closing) throw new Error('queue backend is closed');
  }

  stateOf(name: string): QueueState {
    let s = this.states.get(name);
    if (!s) {
      s = { name, ready: [], ids: new Set(), workers: [], nextWorker: 0, dispatchScheduled: false, delayed: 0, active: 0 };
      this.states.set(name, s);
    }
    return s;
  }

  /** A queue's `add`: checked, JSON round-tripped, deduplicated by a custom jobId, then queued (after its delay). */
  add(name: string, data: unknown, jobOptions: JobOptions): void {
    this.assertOpen();
    const attempts = jobOptions.attempts ?? 1;
    assertPositiveInt(attempts, 'attempts');
    if (jobOptions.jobId !== undefined && (typeof jobOptions.jobId !== 'string' || jobOptions.jobId.length === 0)) {
      throw new TypeError('jobId must be a non-empty string');
    }
    const json = JSON.stringify(data);
    if (json === undefined) throw new TypeError('job data must be JSON-serialisable');
    const s = this.stateOf(name);
    const custom = jobOptions.jobId !== undefined;
    const id = custom ? jobOptions.jobId! : String(++this.sequence);
    if (custom) {
      if (s.ids.has(id)) return;
      s.ids.add(id);
    }
    const job: MemJob = {
      id,
      custom,
      json,
      attempts,
      backoffMs: Math.max(0, Math.round(jobOptions.backoffMs ?? 1000)),
      attemptsMade: 0,
      dueAt: Date.now() + Math.max(0, Math.round(jobOptions.delayMs ?? 0)),
    };
    this.enqueue(s, job, Math.max(0, Math.round(jobOptions.delayMs ?? 0)));
  }

  /** A worker on the queue `name`, taking its share of the jobs from the next turn of the event loop. */
  startWorker<T>(name: string, handler: JobHandler<T>, concurrency: number): Worker {
    const s = this.stateOf(name);
    const w: MemWorker = {
      concurrency,
      running: new Set(),
      closing: false,
      run: (job: MemJob) => this.runJob(s, w, job, handler as JobHandler<unknown>),
    };
    s.workers.push(w);
    this.scheduleDispatch(s);

    let closed: Promise<void> | undefined;
    const handle = {
      close: () => {
        closed ??= this.stopWorker(s, w, handle);
        return closed;
      },
    };
    this.workers.add(handle);
    return handle;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.clearTimers();
      await Promise.allSettled([...this.workers].map((w) => w.close()));
      this.clearTimers();
      this.states.clear();
    })();
    return this.closing;
  }

  /** One delivery of `job` by `w`: done, retried after its backoff while attempts remain, or dropped. */
  private runJob(s: QueueState, w: MemWorker, job: MemJob, handler: JobHandler<unknown>): void {
    const info: JobInfo = { id: job.id, attemptsMade: job.attemptsMade };
    if (job.attemptsMade === 0 && !job.started) this.onJobStart?.(s.name, Math.max(0, Date.now() - job.dueAt));
    job.started = true;
    s.active += 1;
    const p = (async () => {
      try {
        const result = await handler(JSON.parse(job.json), info);
        if (result?.postponeMs !== undefined && !this.closing) this.enqueue(s, job, Math.max(1, Math.round(result.postponeMs)));
        else if (job.custom) s.ids.delete(job.id);
      } catch (err) {
        this.jobFailed(s, job, err);
      }
    })().finally(() => {
      s.active -= 1;
      w.running.delete(p);
      this.scheduleDispatch(s);
    });
    w.running.add(p);
  }

  private jobFailed(s: QueueState, job: MemJob, err: unknown): void {
    job.attemptsMade += 1;
    if (job.attemptsMade < job.attempts && !this.closing) {
      this.logger.warn({ queue: s.name, jobId: job.id, attemptsMade: job.attemptsMade, err: errorMessage(err) }, 'job failed; will retry');
      this.enqueue(s, job, Math.round(job.backoffMs * 2 ** (job.attemptsMade - 1)));
    } else {
      if (job.custom) s.ids.delete(job.id);
      this.logger.warn({ queue: s.name, jobId: job.id, attemptsMade: job.attemptsMade, err: errorMessage(err) }, 'job failed');
    }
  }

  /** Stop `w` taking jobs and wait for its running handlers; other workers of the queue may take what it leaves. */
  private async stopWorker(s: QueueState, w: MemWorker, handle: { close(): Promise<void> }): Promise<void> {
    w.closing = true;
    s.workers = s.workers.filter((x) => x !== w);
    s.nextWorker = 0;
    await Promise.allSettled([...w.running]);
    this.workers.delete(handle);
    this.scheduleDispatch(s);
  }

  private enqueue(s: QueueState, job: MemJob, delayMs: number): void {
    if (delayMs > 0) {
      s.delayed += 1;
      this.later(delayMs, () => {
        s.delayed -= 1;
        s.ready.push(job);
        this.scheduleDispatch(s);
      });
    } else {
      s.ready.push(job);
      this.scheduleDispatch(s);
    }
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.closing) fn();
    }, ms);
    this.timers.add(t);
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Hands ready jobs to workers with free slots, on a later turn of the event loop. */
  private scheduleDispatch(s: QueueState): void {
    if (s.dispatchScheduled || this.closing) return;
    s.dispatchScheduled = true;
    setImmediate(() => {
      s.dispatchScheduled = false;
      if (!this.closing) this.dispatch(s);
    });
  }

  /** Each ready job to the next worker, round robin, that has a free slot; the rest wait for one. */
  private dispatch(s: QueueState): void {
    while (s.ready.length > 0) {
      const n = s.workers.length;
      let chosen: MemWorker | undefined;
      for (let i = 0; i < n; i++) {
        const w = s.workers[(s.nextWorker + i) % n]!;
        if (!w.closing && w.running.size < w.concurrency) {
          chosen = w;
          s.nextWorker = (s.nextWorker + i + 1) % n;
          break;
        }
      }
      if (!chosen) return;
      chosen.run(s.ready.shift()!);
    }
  }
}
