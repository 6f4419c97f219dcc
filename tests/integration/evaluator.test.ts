/**
 * `holon evaluator` is a role of its own: a separate process that takes `evaluate` jobs from Redis and finds the
 * suites each version's capabilities claim (services/evaluator/worker.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, onTestFailed, test } from 'vitest';
import { createMessaging } from '../../shared/messaging/index.js';
import { EVALUATE_QUEUE, type EvaluationJob } from '../../shared/evaluation/jobs.js';
import { createTestDatabase } from '../support/db.js';
import { createTestRedis } from '../support/redis.js';
import { createCluster, waitFor } from '../support/processes.js';

test('holon evaluator takes evaluate jobs from Redis: suites found, none applying, a version not listed', async () => {
  const db = await createTestDatabase('postgres');
  const redis = await createTestRedis();
  const evals = await mkdtemp(path.join(tmpdir(), 'holon-evals-'));
  await mkdir(path.join(evals, 'text.count'), { recursive: true });
  await writeFile(path.join(evals, 'text.count', 'suite.yaml'), 'capability: text.count\nversion: 1\ncases: []\n');
  const prefix = redis.prefix;
  const cluster = createCluster({ databaseUrl: db.url!, redisUrl: redis.url, redisPrefix: prefix, env: { HOLON_EVALS: evals, LOG_LEVEL: 'info' } });
  const messaging = await createMessaging({ redisUrl: redis.url, prefix });
  onTestFailed(() => console.error(cluster.describe()));
  try {
    const evaluator = await cluster.start('evaluator');
    const queue = messaging.queues.queue<EvaluationJob>(EVALUATE_QUEUE);
    await queue.add({ agentId: 'examples/word-count', version: '1.0.0' });
    await queue.add({ agentId: 'examples/echo-upper', version: '1.0.0' });
    await queue.add({ agentId: 'examples/nobody', version: '9.9.9' });
    const lines = await waitFor(
      'three evaluations',
      () => {
        const out = evaluator
          .output()
          .split('\n')
          .filter((l) => l.includes('"agent":'));
        return out.length >= 3 ? out.map((l) => JSON.parse(l) as Record<string, unknown>) : undefined;
      },
      { timeoutMs: 30_000, context: cluster.describe },
    );
    const byAgent = Object.fromEntries(lines.map((l) => [l.agent, l]));
    expect(byAgent['examples/word-count@1.0.0']).toMatchObject({ suites: ['text.count'], msg: 'suites found for the version' });
    expect(byAgent['examples/echo-upper@1.0.0']).toMatchObject({ suites: [], msg: 'no suite applies to the version' });
    expect(byAgent['examples/nobody@9.9.9']).toMatchObject({ msg: 'evaluation skipped: the version is not listed' });
    // Stopping is graceful: the worker closes and the process exits 0.
    expect((await evaluator.stop()).code).toBe(0);
  } finally {
    await cluster.stopAll();
    await messaging.close();
    await rm(evals, { recursive: true, force: true });
    await redis.cleanup();
    await db.close();
  }
});
