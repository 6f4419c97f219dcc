/**
 * The evaluator's metrics (shared/platform/metrics.ts, docs/operating.md "Metrics"; services/evaluator/): an
 * evaluation left queued without its job is handed over by the recovery sweep (holon_sweeper_actions_total,
 * `evaluations_requeued`), then run by the evaluator of a real gateway process: each judged case counts in
 * holon_evaluation_cases_total by outcome, and the evaluation's end in holon_evaluation_duration_seconds by status.
 * The agent is the shipped examples/echo-upper, judged by the repository's own text.transform suite, through the
 * node runtime; its version row is written directly, as publishing would have.
 */
import { expect, test } from 'vitest';
import { startEvaluationSweeper } from '../../services/evaluator/recovery.js';
import { ensureAccount } from '../../shared/ledger/accounts.js';
import { queueEvaluations } from '../../shared/evaluation/store.js';
import { loadSuites, suiteSummary } from '../../shared/evaluation/suites.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';

test('an evaluation handed over by the sweep, run: its cases by outcome, its duration by status', async () => {
  await useAudited(await startTestGateway({ roles: ['evaluator'] }), async (g) => {
    const ctx = g.gw.context;
    const knex = g.db.knex;
    const suites = await loadSuites({ publicDir: 'evals' }, ctx.log);
    const loaded = suites.get('text.transform')!;
    const agent = ctx.registry.get('examples/echo-upper', '1.0.0')!;
    await ensureAccount(knex, 'examples', 'user');
    await knex('published_versions').insert({ agent_id: agent.manifest.id, version: agent.manifest.version, author: 'examples', manifest: JSON.stringify({}) });
    // Queued, its job never sent (the API died after the commit).
    const [row] = await queueEvaluations(knex, { agentId: agent.manifest.id, version: agent.manifest.version }, [suiteSummary(loaded)]);

    // A sweep a minute later: past the queued grace, so it is handed to the evaluator.
    const stop = startEvaluationSweeper({ ...ctx, now: () => Date.now() + 60_000 }, 3_600_000, 30_000);
    const ended = await poll(
      async () => {
        const r = await knex('evaluations').where({ id: row!.id }).first('status', 'passed', 'total');
        return r && ['passed', 'failed', 'error'].includes(r.status) ? r : undefined;
      },
      { what: 'the evaluation to end', timeoutMs: 30_000 },
    );
    await stop();
    expect(ended).toEqual({ status: 'passed', passed: loaded.suite.cases.length, total: loaded.suite.cases.length });

    const m = parsePrometheus(await g.gw.metrics.text());
    expect(sampleValue(m, 'holon_sweeper_actions_total', { action: 'evaluations_requeued' })).toBe(1);
    expect(sampleValue(m, 'holon_evaluation_cases_total', { outcome: 'passed' })).toBe(loaded.suite.cases.length);
    expect(sampleValue(m, 'holon_evaluation_cases_total', { outcome: 'failed' }) ?? 0).toBe(0);
    expect(sampleValue(m, 'holon_evaluation_duration_seconds_count', { status: 'passed' })).toBe(1);
    expect(sampleValue(m, 'holon_evaluation_duration_seconds_bucket', { status: 'passed', le: '+Inf' })).toBe(1);
    // No label names the agent, the evaluation or a case.
    const labels = m.filter((s) => s.name.startsWith('holon_evaluation')).flatMap((s) => Object.values(s.labels));
    for (const secret of [agent.manifest.id, row!.id, ...loaded.suite.cases.map((c) => c.id)]) expect(labels).not.toContain(secret);
  });
});
