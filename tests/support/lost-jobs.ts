/**
 * A context whose jobs of one queue never arrive: the process that adds them dies right there (`throw`: the add
 * fails, as the code after a commit sees a crash) or the job is lost on the way (`drop`: the add answers, nothing is
 * queued, and no job of that queue is ever pending). Every other queue, and everything else of the context, is the
 * gateway's own: the database and Redis stay real.
 */
import type { ServiceContext } from '../../shared/context.js';
import type { QueueBackend } from '../../shared/messaging/types.js';

export function losingJobs(ctx: ServiceContext, queue: string, how: 'throw' | 'drop'): ServiceContext {
  const queues = ctx.messaging.queues;
  const lost: QueueBackend = {
    queue: <T>(name: string) =>
      name === queue
        ? {
            add: async () => {
              if (how === 'throw') throw new Error(`the process died before its ${queue} job was queued`);
            },
            pending: async () => false,
          }
        : queues.queue<T>(name),
    worker: (name, handler, options) => queues.worker(name, handler, options),
    counts: (name) => queues.counts(name),
    close: () => queues.close(),
  };
  return { ...ctx, messaging: { ...ctx.messaging, queues: lost } };
}
