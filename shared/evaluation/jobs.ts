/**
 * The evaluation queue (spec/evals.md): one job per evaluation row, added when the row is queued (at publish time, or
 * on an author's re-run) and again by the evaluator's recovery sweep for rows left unfinished. The payload names the
 * evaluation only; the job id is the evaluation id, so adding it twice while it waits is a no-op.
 */
import type { ServiceContext } from '../context.js';

export const EVALUATE_QUEUE = 'evaluate';

export interface EvaluationJob {
  evaluationId: string;
}

/** Deliveries of one job before it is given up (the row then ends `error`); a kill -9 is a stall, not an attempt. */
export const EVALUATION_ATTEMPTS = 3;

/** Hand evaluations to the evaluators. A failure is logged, not thrown: the row is the truth and the sweep re-adds it. */
export async function wakeEvaluators(ctx: Pick<ServiceContext, 'messaging' | 'log'>, ids: readonly string[]): Promise<void> {
  const queue = ctx.messaging.queues.queue<EvaluationJob>(EVALUATE_QUEUE);
  for (const id of ids) {
    try {
      await queue.add({ evaluationId: id }, { jobId: id, attempts: EVALUATION_ATTEMPTS, backoffMs: 2_000 });
    } catch (err) {
      ctx.log.error({ evaluation: id, err: { message: (err as Error)?.message } }, 'evaluation queued but not handed over: the recovery sweep will');
    }
  }
}
