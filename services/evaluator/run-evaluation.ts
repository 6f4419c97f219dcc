/**
 * One evaluation, end to end (spec/evals.md; the rows are shared/evaluation/store.ts):
 *   1. claim the row under a lease (queued, or running with a lapsed lease: its evaluator died); renew it while
 *      running; a delivery that finds it held elsewhere or ended does nothing;
 *   2. find the version (read from Postgres when this process has not heard of its publish yet; a manifest that no longer validates → `error`) and the capability's suite (gone → `error`; changed since it
 *      was queued → the evaluation follows the new suite and forgets cases judged under the old one);
 *   3. run the cases not judged yet (a resumed evaluation skips the others), bounded per endpoint; record each as it
 *      is judged — public ones with their detail, hidden ones as pass/fail only;
 *   4. end it: `passed` when passed/total reaches the threshold, else `failed`; `error` when the agent's endpoint
 *      could not be reached in any case. Counts come from the case rows, so nothing is counted twice.
 * Nothing of a hidden case (input, expectation, output, reasons) is logged or stored. Measured: each case recorded in
 * `holon_evaluation_cases_total` by outcome, each evaluation that ends in `holon_evaluation_duration_seconds` by status.
 */
import { randomBytes } from 'node:crypto';
import { suiteStatus } from '../../shared/core/evals/index.js';
import type { ServiceContext } from '../../shared/context.js';
import type { FileLinkSigner } from '../../shared/files/access.js';
import {
  adoptSuite,
  claimEvaluation,
  finishEvaluation,
  judgedCases,
  passedCount,
  recordCase,
  releaseLease,
  renewLease,
  type EvaluationRow,
} from '../../shared/evaluation/store.js';
import { suiteSummary, type SuiteCatalog } from '../../shared/evaluation/suites.js';
import { knownVersion } from '../../shared/registry/published.js';
import type { Runtime } from '../../shared/runtimes/types.js';
import type { EndpointLimit } from './endpoint-limit.js';
import { caseDetail, caseOutcome, runCase } from './run-case.js';

export interface EvaluatorContext extends ServiceContext {
  suites: SuiteCatalog;
  runtimes: Runtime;
  fileLinks: FileLinkSigner;
  endpoints: EndpointLimit;
  /** How long a claim holds without renewal; renewed every third of it. */
  leaseMs: number;
  /**
   * Fires when the evaluator stops and its grace has passed: no case starts any more, the one running ends unrecorded,
   * and the evaluation is handed back (its lease released) for another evaluator to resume.
   */
  handBack?: AbortSignal;
}

export type EvaluationEnd = 'ended' | 'held-elsewhere' | 'lost-lease' | 'handed-back';

export async function runEvaluation(ctx: EvaluatorContext, id: string): Promise<EvaluationEnd> {
  const holder = `h_${randomBytes(8).toString('hex')}`;
  const row = await claimEvaluation(ctx.db, { id, holder, now: ctx.now(), leaseMs: ctx.leaseMs });
  if (!row) return 'held-elsewhere';
  const log = ctx.log.child({ evaluation: id, agent: `${row.agent_id}@${row.version}`, capability: row.capability });
  let lost = false;
  const renew = setInterval(
    () => {
      renewLease(ctx.db, { id, holder, now: ctx.now(), leaseMs: ctx.leaseMs }).then(
        (held) => {
          if (!held) lost = true;
        },
        (err) => log.warn({ err: { message: (err as Error)?.message } }, 'could not renew the evaluation lease'),
      );
    },
    Math.max(50, Math.floor(ctx.leaseMs / 3)),
  );
  try {
    const ended = await evaluate(ctx, { row, holder, lost: () => lost || ctx.handBack?.aborted === true, log });
    if (ended === 'lost-lease' && !lost && ctx.handBack?.aborted) {
      await releaseLease(ctx.db, id, holder);
      log.info('evaluation handed back: the evaluator is stopping');
      return 'handed-back';
    }
    return ended;
  } catch (err) {
    // Let another delivery (a retry here, or another evaluator) claim it at once instead of waiting for the lease.
    await releaseLease(ctx.db, id, holder).catch(() => undefined);
    throw err;
  } finally {
    clearInterval(renew);
  }
}

/** The evaluation this evaluator holds: its row, the holder's name, whether the lease was lost, its log. */
interface HeldEvaluation {
  row: EvaluationRow;
  holder: string;
  lost: () => boolean;
  log: ServiceContext['log'];
}

async function evaluate(ctx: EvaluatorContext, held: HeldEvaluation): Promise<EvaluationEnd> {
  const { row, holder, lost, log } = held;
  const end = async (status: 'passed' | 'failed' | 'error', passed: number, reason?: string): Promise<EvaluationEnd> => {
    const done = await finishEvaluation(ctx.db, { id: row.id, holder, now: ctx.now() }, { status, passed, ...(reason ? { reason } : {}) });
    if (!done) return 'lost-lease';
    if (done.duration_ms !== null) ctx.metrics?.evaluationSeconds.observe({ status }, done.duration_ms / 1000);
    log.info({ status, passed, total: done.total, suite_version: done.suite_version, duration_ms: done.duration_ms }, 'evaluation ended');
    return 'ended';
  };

  // A version published a moment ago may not have reached this process's registry yet: read from Postgres then.
  const agent = await knownVersion(ctx, row.agent_id, row.version);
  if (!agent) return end('error', 0, "the version's manifest could not be read");
  const loaded = ctx.suites.get(row.capability);
  if (!loaded) return end('error', 0, `this evaluator has no suite for ${row.capability}`);
  const summary = suiteSummary(loaded);
  if (summary.version !== row.suite_version || summary.hidden !== row.hidden || summary.cases !== row.total || summary.threshold !== row.threshold) {
    await adoptSuite(ctx.db, row.id, summary);
  }

  const done = await judgedCases(ctx.db, row.id);
  const cases = loaded.suite.cases.map((c, ordinal) => ({ c, ordinal })).filter(({ c }) => !done.has(c.id));
  if (done.size > 0) log.info({ judged: done.size, remaining: cases.length }, 'evaluation resumed');
  const endpoint = agent.manifest.runtime.endpoint ?? `local:${agent.manifest.id}`;
  const failures: string[] = [];
  await Promise.all(
    cases.map(({ c, ordinal }) =>
      ctx.endpoints.run(endpoint, async () => {
        if (lost()) return;
        const run = await runCase(
          { runtimes: ctx.runtimes, signer: ctx.fileLinks, now: ctx.now, ...(ctx.handBack ? { handBack: ctx.handBack } : {}) },
          { agent, suite: loaded, case: c, callId: `${row.id}.${ordinal + 1}` },
        );
        if (run.failure) failures.push(run.failure);
        if (lost()) return;
        await recordCase(ctx.db, {
          evaluation_id: row.id,
          case_id: c.id,
          ordinal,
          passed: run.judgement.passed,
          duration_ms: run.durationMs,
          detail: loaded.hidden ? null : caseDetail(c, run),
        });
        ctx.metrics?.evaluationCases.inc({ outcome: caseOutcome(run) });
      }),
    ),
  );
  if (lost()) {
    if (!ctx.handBack?.aborted) log.warn('the evaluation lease was lost: another evaluator holds it now');
    return 'lost-lease';
  }
  const { passed, judged } = await passedCount(ctx.db, row.id);
  if (judged < summary.cases) throw new Error(`only ${judged} of ${summary.cases} cases were recorded`);
  // Not one case could reach the agent (and this run tried them all): the evaluation says so, rather than "failed".
  if (cases.length === summary.cases && failures.length === cases.length && failures.every((f) => f === 'runtime_unavailable')) {
    return end('error', passed, "the agent's endpoint could not be reached in any case");
  }
  return end(suiteStatus(passed, summary.cases, loaded.suite.threshold) === 'passed' ? 'passed' : 'failed', passed);
}
