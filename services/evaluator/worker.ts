/**
 * The evaluator service (`holon evaluator`, any number of them; `holon serve` runs one in process): takes `evaluate`
 * jobs — one per evaluation row, queued when a version is published or an author asks for a re-run — and runs each
 * (run-evaluation.ts) through the same runtimes as a call, unbilled. A recovery sweep (recovery.ts) hands over the
 * evaluations left unfinished. The suites are loaded once at start-up (shared/evaluation/suites.ts).
 */
import type { ServiceContext, StartedRole } from '../../shared/context.js';
import { EVALUATE_QUEUE, EVALUATION_ATTEMPTS, type EvaluationJob } from '../../shared/evaluation/jobs.js';
import { claimEvaluation, finishEvaluation } from '../../shared/evaluation/store.js';
import type { SuiteCatalog } from '../../shared/evaluation/suites.js';
import type { FileLinkSigner } from '../../shared/files/access.js';
import { watchCredentials, type CredentialLookup } from '../../shared/publishing/credentials.js';
import { createGatewayRuntimes, type GatewayRuntimesOptions } from '../../shared/runtimes/gateway-runtimes.js';
import { createEndpointLimit } from './endpoint-limit.js';
import { startEvaluationSweeper } from './recovery.js';
import { runEvaluation, type EvaluatorContext } from './run-evaluation.js';

export interface EvaluatorOptions extends GatewayRuntimesOptions {
  /** Evaluations one evaluator runs at once (HOLON_EVALUATOR_CONCURRENCY). */
  concurrency: number;
  suites: SuiteCatalog;
  /** Signs the links of evaluation fixtures (shared/files/links.ts). */
  fileLinks: FileLinkSigner;
  credentials?: CredentialLookup;
  /** Cases at once against one endpoint, in this process (default 2). */
  perEndpoint?: number;
  /** A claim's lease (default 15 s), the sweep's period (default 10 s) and how long a queued row waits for its job first (30 s). */
  leaseMs?: number;
  sweepEveryMs?: number;
  queuedGraceMs?: number;
}

export async function startEvaluator(ctx: ServiceContext, options: EvaluatorOptions): Promise<StartedRole> {
  const unwatch = options.credentials ? await watchCredentials(ctx.messaging.notifier, options.credentials) : undefined;
  const runtimes = createGatewayRuntimes(ctx.log, options);
  // Fires at the stop grace: the evaluations still running are handed to another evaluator (run-evaluation.ts).
  const handBack = new AbortController();
  const ec: EvaluatorContext = {
    ...ctx,
    suites: options.suites,
    runtimes,
    fileLinks: options.fileLinks,
    endpoints: createEndpointLimit(options.perEndpoint ?? 2),
    leaseMs: options.leaseMs ?? 15_000,
    handBack: handBack.signal,
  };
  const worker = ctx.messaging.queues.worker<EvaluationJob>(
    EVALUATE_QUEUE,
    async (job, info) => {
      try {
        // Handed back: queued again at once (a fresh job id), for an evaluator still running to resume it.
        if ((await runEvaluation(ec, job.evaluationId)) === 'handed-back') await handOver(ec, job.evaluationId);
      } catch (err) {
        ctx.log.error({ evaluation: job.evaluationId, err: { message: (err as Error)?.message } }, 'the evaluation failed on the gateway side');
        if (info.attemptsMade + 1 < EVALUATION_ATTEMPTS) throw err;
        // The last attempt: the evaluation ends `error` rather than waiting for a sweep that would fail the same way.
        await giveUp(ec, job.evaluationId).catch(() => undefined);
      }
    },
    { concurrency: options.concurrency },
  );
  const stopSweeper = startEvaluationSweeper(ctx, options.sweepEveryMs ?? 10_000, options.queuedGraceMs ?? 30_000);
  return {
    // The sweep stops first: it hands work to evaluators, and this one is leaving.
    stop: [stopSweeper],
    workers: [worker],
    release: [...(unwatch ? [unwatch] : []), async () => runtimes.close()],
    handBack: [() => handBack.abort()],
  };
}

async function handOver(ec: EvaluatorContext, id: string): Promise<void> {
  const queue = ec.messaging.queues.queue<EvaluationJob>(EVALUATE_QUEUE);
  await queue.add({ evaluationId: id }, { jobId: `${id}~${ec.now()}`, attempts: EVALUATION_ATTEMPTS, backoffMs: 2_000 });
}

async function giveUp(ec: EvaluatorContext, id: string): Promise<void> {
  const holder = 'h_give_up';
  if (!(await claimEvaluation(ec.db, { id, holder, now: ec.now(), leaseMs: ec.leaseMs }))) return;
  await finishEvaluation(ec.db, { id, holder, now: ec.now() }, { status: 'error', passed: 0, reason: 'the evaluator failed (its log says why)' });
}
