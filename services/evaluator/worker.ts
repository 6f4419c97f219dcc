/**
 * The evaluator service (`holon evaluator`, any number of them): takes `evaluate` jobs, one per newly listed
 * version, and finds the suites its capabilities claim (suites.ts). Evaluations are background work, never
 * billed, and run against the author's server. Running the cases and recording results is built on this entry
 * point; until then a job reports which suites apply and completes.
 */
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { EVALUATE_QUEUE, type EvaluationJob } from '../../shared/evaluation/jobs.js';
import { locateSuites, type SuiteDirs, type SuiteLocation } from './suites.js';

export interface EvaluatorOptions {
  concurrency: number;
  suites: SuiteDirs;
}

/** What one job found: the suites that apply to the version (empty when it is not listed or none apply). */
export async function evaluateVersion(ctx: ServiceContext, job: EvaluationJob, dirs: SuiteDirs): Promise<SuiteLocation[]> {
  const agent = ctx.registry.get(job.agentId, job.version);
  const log = ctx.log.child({ agent: `${job.agentId}@${job.version}` });
  if (!agent) {
    log.warn('evaluation skipped: the version is not listed');
    return [];
  }
  const suites = await locateSuites(agent.manifest.capabilities, dirs);
  log.info({ suites: suites.map((s) => s.capability) }, suites.length ? 'suites found for the version' : 'no suite applies to the version');
  return suites;
}

export function startEvaluator(ctx: ServiceContext, options: EvaluatorOptions): StartedRole {
  const worker = ctx.messaging.queues.worker<EvaluationJob>(
    EVALUATE_QUEUE,
    async (job) => {
      await evaluateVersion(ctx, job, options.suites);
    },
    { concurrency: options.concurrency },
  );
  return { stop: [], workers: [worker], release: [] };
}
