/**
 * The in-process twin of the BullMQ backend (the embedded default; not for production: a process that dies
 * loses its queue). Same semantics as far as one process can have them, checked by the shared contract test:
 *
 * - jobs are processed asynchronously, never inside `add`; jobs added before any worker wait for one;
 * - a worker runs at most `concurrency` handlers at once; several workers on one queue share its jobs;
 * - `delayMs` holds a job back; a handler that throws is retried after an exponential backoff
 *   (backoffMs · 2^(n-1)) while attempts remain, then dropped (BullMQ keeps it as failed for an hour);
 * - a `jobId` already waiting, delayed, running or awaiting a retry makes `add` a no-op;
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
  const logger: QueueLogger = options.logger ?? { warn: noop, error: noop };
  const states = new Map<string, QueueState>();
  const timers = new Set<NodeJS.Timeout>();
  const allWorkers = new Set<{ close(): Promise<void> }>();
  let sequence = 0;
  let closing: Promise<void> | undefined;

  const assertOpen = () => {
    if (closing) throw new Error('queue backend is closed');
  };

  const stateOf = (name: string): QueueState => {
    let s = states.get(name);
    if (!s) {
      s = { name, ready: [], ids: new Set(), workers: [], nextWorker: 0, dispatchScheduled: false, delayed: 0, active: 0 };
      states.set(name, s);
    }
    return s;
  };

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!closing) fn();
    }, ms);
    timers.add(t);
  };

  /** Hands ready jobs to workers with free slots, on a later turn of the event loop. */
  const scheduleDispatch = (s: QueueState) => {
    if (s.dispatchScheduled || closing) return;
    s.dispatchScheduled = true;
    setImmediate(() => {
      s.dispatchScheduled = false;
      if (!closing) dispatch(s);
    });
  };

  const dispatch = (s: QueueState) => {
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
  };

  const enqueue = (s: QueueState, job: MemJob, delayMs: number) => {
    if (delayMs > 0) {
      s.delayed += 1;
      later(delayMs, () => {
        s.delayed -= 1;
        s.ready.push(job);
        scheduleDispatch(s);
      });
    } else {
      s.ready.push(job);
      scheduleDispatch(s);
    }
  };

  return {
    kind: 'memory',

    queue<T>(name: string): Queue<T> {
      assertOpen();
      assertQueueName(name);
      return {
        pending: async (jobId: string) => stateOf(name).ids.has(jobId),
        add: async (data: T, jobOptions: JobOptions = {}) => {
          assertOpen();
          const attempts = jobOptions.attempts ?? 1;
          assertPositiveInt(attempts, 'attempts');
          if (jobOptions.jobId !== undefined && (typeof jobOptions.jobId !== 'string' || jobOptions.jobId.length === 0)) {
            throw new TypeError('jobId must be a non-empty string');
          }
          const json = JSON.stringify(data);
          if (json === undefined) throw new TypeError('job data must be JSON-serialisable');
          const s = stateOf(name);
          const custom = jobOptions.jobId !== undefined;
          const id = custom ? jobOptions.jobId! : String(++sequence);
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
          enqueue(s, job, Math.max(0, Math.round(jobOptions.delayMs ?? 0)));
        },
      };
    },

    worker<T>(name: string, handler: JobHandler<T>, workerOptions: { concurrency: number }): Worker {
      assertOpen();
      assertQueueName(name);
      assertPositiveInt(workerOptions.concurrency, 'concurrency');
      const s = stateOf(name);

      const w: MemWorker = {
        concurrency: workerOptions.concurrency,
        running: new Set(),
        closing: false,
        run(job: MemJob) {
          const info: JobInfo = { id: job.id, attemptsMade: job.attemptsMade };
          if (job.attemptsMade === 0) options.onJobStart?.(name, Math.max(0, Date.now() - job.dueAt));
          s.active += 1;
          const p = (async () => {
            try {
              await handler(JSON.parse(job.json) as T, info);
              if (job.custom) s.ids.delete(job.id);
            } catch (err) {
              job.attemptsMade += 1;
              if (job.attemptsMade < job.attempts && !closing) {
                logger.warn({ queue: name, jobId: job.id, attemptsMade: job.attemptsMade, err: errorMessage(err) }, 'job failed; will retry');
                enqueue(s, job, Math.round(job.backoffMs * 2 ** (job.attemptsMade - 1)));
              } else {
                if (job.custom) s.ids.delete(job.id);
                logger.warn({ queue: name, jobId: job.id, attemptsMade: job.attemptsMade, err: errorMessage(err) }, 'job failed');
              }
            }
          })().finally(() => {
            s.active -= 1;
            w.running.delete(p);
            scheduleDispatch(s);
          });
          w.running.add(p);
        },
      };
      s.workers.push(w);
      scheduleDispatch(s);

      let closed: Promise<void> | undefined;
      const handle = {
        close: () => {
          closed ??= (async () => {
            w.closing = true;
            s.workers = s.workers.filter((x) => x !== w);
            s.nextWorker = 0;
            await Promise.allSettled([...w.running]);
            allWorkers.delete(handle);
            // Other workers of this queue may take what this one leaves.
            scheduleDispatch(s);
          })();
          return closed;
        },
      };
      allWorkers.add(handle);
      return handle;
    },

    async counts(name: string): Promise<QueueCounts> {
      assertQueueName(name);
      const s = states.get(name);
      return s ? { waiting: s.ready.length, active: s.active, delayed: s.delayed } : { waiting: 0, active: 0, delayed: 0 };
    },

    close(): Promise<void> {
      closing ??= (async () => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        await Promise.allSettled([...allWorkers].map((w) => w.close()));
        for (const t of timers) clearTimeout(t);
        timers.clear();
        states.clear();
      })();
      return closing;
    },
  };
}
