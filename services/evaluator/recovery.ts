/**
 * The evaluator's recovery sweep, at start-up and then every `everyMs`: an evaluation queued for longer than
 * `graceMs` (its job was lost: an API died after the commit, or Redis lost it) or running with a lapsed lease (its
 * evaluator died) is handed to an evaluator again — unless its job is still waiting or running. The claim decides
 * who runs it (shared/evaluation/store.ts), so a sweep that hands one over twice costs a no-op delivery. Each one
 * handed over counts in `holon_sweeper_actions_total{action="evaluations_requeued"}`.
 */
import type { ServiceContext } from '../../shared/context.js';
import { EVALUATE_QUEUE, EVALUATION_ATTEMPTS, type EvaluationJob } from '../../shared/evaluation/jobs.js';
import { strandedEvaluations } from '../../shared/evaluation/store.js';
import { countSweep } from '../../shared/platform/metrics.js';
import { startPeriodic } from '../../shared/platform/periodic.js';

type SweepContext = Pick<ServiceContext, 'db' | 'messaging' | 'log' | 'now' | 'metrics'>;

async function sweepEvaluations(ctx: SweepContext, graceMs: number): Promise<number> {
  const now = ctx.now();
  const stranded = await strandedEvaluations(ctx.db, now, now - graceMs);
  const queue = ctx.messaging.queues.queue<EvaluationJob>(EVALUATE_QUEUE);
  let handed = 0;
  for (const { id } of stranded) {
    if (await queue.pending(id)) continue;
    // A fresh job id: the first one may sit in the failed set (kept an hour), where re-adding it would be a no-op.
    await queue.add({ evaluationId: id }, { jobId: `${id}~${now}`, attempts: EVALUATION_ATTEMPTS, backoffMs: 2_000 });
    handed++;
  }
  if (handed) ctx.log.info({ handed }, 'unfinished evaluations handed to an evaluator again');
  countSweep(ctx.metrics, 'evaluations_requeued', handed);
  return handed;
}

/** Sweep now, then every `everyMs` (unref'd); returns the stop function. A failed sweep is logged and tried again. */
export function startEvaluationSweeper(ctx: SweepContext, everyMs: number, graceMs: number): () => Promise<void> {
  const sweeps = startPeriodic(ctx.log, () => sweepEvaluations(ctx, graceMs), { everyMs, atStart: true, failure: 'the evaluation sweep failed' });
  return () => sweeps.stop();
}
