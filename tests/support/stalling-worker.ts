/**
 * A BullMQ worker that takes one job and hangs forever: tests/processes/worker-redelivery.test.ts starts it in a child
 * process and kills it with SIGKILL once it holds the job, to check that the job is delivered again.
 *
 *   node --import tsx tests/support/stalling-worker.ts <redisUrl> <prefix> <queue> [lockDurationMs] [stalledIntervalMs]
 *
 * Prints one JSON line per job taken: {"event":"taken","id":…,"attemptsMade":…,"data":…}.
 */
import { createBullBackend } from '../../shared/messaging/bullmq.js';

const [redisUrl, prefix, queue, lockMs, stalledMs] = process.argv.slice(2);
if (!redisUrl || !prefix || !queue) {
  process.stderr.write('usage: stalling-worker.ts <redisUrl> <prefix> <queue> [lockDurationMs] [stalledIntervalMs]\n');
  process.exit(2);
}

const backend = createBullBackend({
  connection: redisUrl,
  prefix,
  worker: {
    ...(lockMs ? { lockDurationMs: Number(lockMs) } : {}),
    ...(stalledMs ? { stalledIntervalMs: Number(stalledMs) } : {}),
  },
});

backend.worker<unknown>(
  queue,
  async (data, job) => {
    process.stdout.write(`${JSON.stringify({ event: 'taken', id: job.id, attemptsMade: job.attemptsMade, data })}\n`);
    await new Promise<never>(() => {});
  },
  { concurrency: 1 },
);
process.stdout.write(`${JSON.stringify({ event: 'started' })}\n`);

// Never outlive the test: stop when the parent goes away, and after a minute in any case.
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
setTimeout(() => process.exit(1), 60_000).unref();
