/**
 * An author's re-run of a version's evaluation (`POST /v0/agents/{ns}/{name}@{version}/evaluate`, human key): e.g.
 * for a version evaluated before a suite changed. A new run per capability that has a suite now; the latest run is
 * what the views show and `require.evaluated` reads. Refused (409) while one is still queued or running, for a
 * yanked version, or when no suite applies; a version of another author is a 404, as if it did not exist.
 */
import type { ServiceContext } from '../context.js';
import { HolonError } from '../core/errors.js';
import { wakeEvaluators } from './jobs.js';
import { evaluationView } from './standing.js';
import { latestEvaluations, queueEvaluations, type SuiteSummary } from './store.js';

/** The version to evaluate again, and who asks (its author, or the answer is a 404). */
interface RerunRequest {
  author: string;
  agentId: string;
  version: string;
}

export async function rerunEvaluation(
  ctx: Pick<ServiceContext, 'db' | 'messaging' | 'log'>,
  suitesFor: (capabilities: readonly string[]) => SuiteSummary[],
  request: RerunRequest,
) {
  const { author, agentId, version } = request;
  const label = `${agentId.slice(0, 200)}@${version.slice(0, 100)}`;
  const row = (await ctx
    .db('published_versions as p')
    .leftJoin('yanked_versions as y', function () {
      this.on('y.agent_id', '=', 'p.agent_id').andOn('y.version', '=', 'p.version');
    })
    .where({ 'p.agent_id': agentId, 'p.version': version })
    .first('p.author', 'p.manifest', 'y.created_at as yanked_at')) as { author: string; manifest: unknown; yanked_at: Date | null } | undefined;
  if (!row || row.author !== author) throw new HolonError('not_found', `you have not published ${label}`);
  if (row.yanked_at) throw new HolonError('yanked', `${label} is yanked: it is no longer evaluated`);
  const doc = (typeof row.manifest === 'string' ? JSON.parse(row.manifest) : row.manifest) as { capabilities?: unknown };
  const capabilities = Array.isArray(doc.capabilities) ? doc.capabilities.filter((c): c is string => typeof c === 'string') : [];
  const suites = suitesFor(capabilities);
  if (suites.length === 0) throw new HolonError('no_suite', `no evaluation suite applies to the capabilities of ${label} (${capabilities.join(', ')})`);

  const queued = await ctx.db.transaction(async (trx) => {
    // One re-run at a time per version: the row lock serialises two requests racing here.
    await trx('published_versions').where({ agent_id: agentId, version }).forUpdate().first('agent_id');
    const unfinished = (await trx('evaluations')
      .where({ agent_id: agentId, version })
      .whereIn('status', ['queued', 'running'])
      .first('capability', 'status')) as { capability: string; status: string } | undefined;
    if (unfinished) throw new HolonError('evaluation_running', `the evaluation of ${label} on ${unfinished.capability} is still ${unfinished.status}`);
    return queueEvaluations(trx, { agentId, version, requestedBy: author }, suites);
  });
  await wakeEvaluators(
    ctx,
    queued.map((e) => e.id),
  );
  const latest = await latestEvaluations(ctx.db, [{ id: agentId, version }], false);
  return {
    agent: agentId,
    version,
    evaluation: { status: 'pending' as const, suites: (latest.get(`${agentId}@${version}`) ?? []).map((e) => evaluationView(e, false)) },
  };
}
