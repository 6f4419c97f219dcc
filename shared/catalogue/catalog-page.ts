/**
 * The public catalogue (GET /v0/catalog, no key; gateway.md §6–§7): one entry per listed agent, sorted by id,
 * paginated by a cursor (the last id of the previous page).
 *
 *   declared  what the author's latest version says, as `agentView` shows it (catalogue.ts): summary,
 *             capabilities, pricing in its own currency, license (`proprietary: true` for a proprietary agent,
 *             labelled so everywhere it is listed), data policy (`attested: true`), runtime kind (remote runtimes
 *             attested), evaluation (`{status, suites}`: evaluations.ts; per version its standing).
 *   measured  the Agent Record of the agent as a whole (every version, yanked ones included), all time and last
 *             30 days, from `call_events`, counting only outcomes the agent caused (agent-record.ts): runs,
 *             success rate, p50/p95, cost per successful run.
 *   versions  every listed version, newest first, each with its own all-time record.
 *   sample    only with HOLON_RECORDS, and only while the agent has no measured run at all: the operator's
 *             sample record, labelled `source: "sample"` (sample-records.ts). Beside `measured`, never in it;
 *             absent otherwise, so without the setting the page is what it always was.
 * One Agent Record query per agent on the page (a page is at most MAX_LIMIT agents).
 */
import { HolonError } from '../core/errors.js';
import type { ServiceContext } from '../context.js';
import { loadAgentRecords, summarize } from './agent-record.js';
import { agentView } from './catalogue.js';
import { loadEvaluationSummaries, publishedOf } from './evaluations.js';
import { sampleFor } from './sample-records.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export interface CatalogPageQuery {
  /** 1..MAX_LIMIT, default DEFAULT_LIMIT. */
  limit?: string;
  /** The `next_cursor` of the previous page: entries after this agent id. */
  cursor?: string;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT))
    throw new HolonError('invalid_request', `limit is a whole number from 1 to ${MAX_LIMIT}`, [{ path: '$.limit', message: 'out of range' }]);
  return n;
}

export async function catalogPage(gateway: Pick<ServiceContext, 'db' | 'registry' | 'now' | 'settings'>, query: CatalogPageQuery) {
  const limit = parseLimit(query.limit);
  const cursor = query.cursor ?? '';
  const all = gateway.registry.search({});
  const after = cursor === '' ? all : all.filter((a) => a.manifest.id > cursor);
  const page = after.slice(0, limit);
  const now = gateway.now();
  const evaluations = await loadEvaluationSummaries(gateway.db, publishedOf(page.flatMap((a) => gateway.registry.versions(a.manifest.id))), false);
  const agents = await Promise.all(
    page.map(async (latest) => {
      const id = latest.manifest.id;
      const versions = gateway.registry.versions(id);
      const records = await loadAgentRecords(
        gateway.db,
        id,
        versions.map((v) => v.manifest.version),
        { now, rule: gateway.settings.payerRule },
      );
      const own = records.versions.get(latest.manifest.version)!;
      const sample = sampleFor(gateway.settings.sampleRecords, id, records.agent.all_time.runs);
      return {
        ...agentView(latest, summarize(own.all_time), evaluations(id, latest.manifest.version)),
        proprietary: latest.manifest.license === 'proprietary',
        latest_version: latest.manifest.version,
        measured: records.agent,
        ...(sample ? { sample } : {}),
        versions: versions.map((v) => ({
          version: v.manifest.version,
          record: summarize(records.versions.get(v.manifest.version)!.all_time),
          evaluation: evaluations(id, v.manifest.version).status,
        })),
      };
    }),
  );
  const more = after.length > page.length;
  return { agents, total: all.length, limit, next_cursor: more ? page[page.length - 1]!.manifest.id : null };
}
