/**
 * Evaluation results as the catalogue shows them (GET /v0/catalog, GET /v0/agents[/{id}], MCP search_agents /
 * get_agent, GET /v0/me/agents): `{status, suites}` per version, where `status` is the standing
 * (shared/evaluation/standing.ts) and `suites` one entry per capability's latest run. Shipped agents are not
 * evaluated (`none`). One query for any number of versions.
 */
import type { Db } from '../db/connect.js';
import { evaluationSummary } from '../evaluation/standing.js';
import { latestEvaluations } from '../evaluation/store.js';
import type { AgentVersion } from '../registry/agent-version.js';

export type EvaluationSummary = ReturnType<typeof evaluationSummary>;

export const NOT_EVALUATED: EvaluationSummary = Object.freeze({ status: 'none', suites: [] }) as EvaluationSummary;

const key = (id: string, version: string) => `${id}@${version}`;

/** Summaries by `id@version`; `withCases` adds each case (public detail, hidden pass/fail). */
export async function loadEvaluationSummaries(
  db: Db,
  versions: ReadonlyArray<{ id: string; version: string }>,
  withCases: boolean,
): Promise<(id: string, version: string) => EvaluationSummary> {
  const latest = await latestEvaluations(db, versions, withCases);
  return (id, version) => {
    const rows = latest.get(key(id, version));
    return rows ? evaluationSummary(rows, withCases) : NOT_EVALUATED;
  };
}

/** The published ones among `agents`, as `loadEvaluationSummaries` takes them. */
export function publishedOf(agents: readonly AgentVersion[]): Array<{ id: string; version: string }> {
  return agents.filter((a) => a.origin === 'published').map((a) => ({ id: a.manifest.id, version: a.manifest.version }));
}
