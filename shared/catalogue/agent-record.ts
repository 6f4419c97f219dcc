/**
 * Measured records of agent versions, computed from `call_events` (what the platform observed; gateway.md §7).
 *
 * Two readers:
 *   - `loadRecords`: the ranking facts, all-time runs / successes / billed per version of the payers that count, to rank
 *     a capability and check `require.min_success_rate` (shared/calls/submit/resolve.ts).
 *   - The Agent Record shown on `GET /v0/agents…`: `loadAgentRecords` (one agent: per version and for the agent
 *     as a whole, last 30 days and all time) and `loadRecordSummaries` (search: a compact all-time record per
 *     listed version). Each is one query over the events, whatever the number of versions (GROUPING SETS), and the
 *     counted payers' (counted-payers.ts: one over the events per payer, two over what vouches for those payers).
 *
 * Definitions (every window, every scope):
 *   - runs: finished runs (succeeded or failed) that the agent answered or failed itself, delegated ones included;
 *     what the agent did not cause — a gateway error, a restart, a cancellation (NOT_THE_AGENTS_DOING) — is
 *     recorded in `call_events` but never counted; successes: status `succeeded`;
 *   - runs its author paid for are never counted: a call whose payer, or the payer of its delegation tree's root,
 *     is the account owning the agent's namespace (its author) is billed and has its receipt like any other, but
 *     enters no record, no ranking and no `min_success_rate` check (docs/publishing.md, "What the Agent Record
 *     counts");
 *   - payers: the distinct accounts that paid for the counted runs (the payer of each delegation tree's root: whose
 *     money started it). Ranking reads a measured success rate only from `HOLON_RANKING_MIN_PAYERS` of them
 *     (shared/core/resolution.ts `rankingRecord`);
 *   - counted_payers: those of the payers that count (shared/core/counted-payer.ts: on a hosted gateway, linked to
 *     GitHub or funded from outside the platform beyond sign-up credit; on a dev gateway, all). Only their runs are
 *     ranking facts (`loadRecords`); the record shown counts every payer's runs and says how many payers count. A
 *     payer counts for a version by what it spent on that version (all time); for the agent, when it counts for a
 *     version it paid for; in the last 30 days, when it also paid for a run of that version in the window.
 *     success_rate: successes / runs rounded to 4 decimals, null without runs.
 *   - latency: `percentile_disc` (nearest rank: the smallest observed latency whose cumulative share is ≥ p,
 *     i.e. the ceil(p·n)-th smallest), so p50/p95 are latencies that really happened, in whole ms — never an
 *     interpolation between two runs (`percentile_cont` would be). Null without runs.
 *   - errors: count of runs per `error_code` (runs without a code are not listed).
 *   - the agent as a whole counts every event under the agent's id, including versions that are no longer
 *     listed (yanked): they were run under that name. Its latencies are percentiles over all those runs, not
 *     an average of per-version figures.
 *   - last_30_days: `created_at >= now − 30 days`, `now` given by the caller (the gateway's clock). No upper
 *     bound, so a run the database stamped a few ms "after" the application's clock is never hidden.
 *
 * Currency. `call_events.currency` is the settlement currency (the root mandate's), not the agent's pricing
 * currency: a USD-priced agent called under EUR mandates has EUR events only. So money is reported in the
 * events' currency, never converted and never summed across currencies:
 *   - `currency` is the currency of the window's runs; when runs were settled in several currencies, it is the
 *     one with the most runs (ties: alphabetical), and `by_currency` lists each currency on its own;
 *   - `billed_total` is the sum billed in `currency` (micro-units, formatAmount); `cost_per_successful_run` is
 *     that total ÷ the successes settled in `currency`, rounded UP to the micro-unit, null without successes.
 *     Billed failures (declared errors billed under `charge_on: attempt`) count in the total: that is what
 *     one success cost the callers.
 *   - without runs: `currency` null, `billed_total` "0.00".
 */
import type { DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { divRound, formatAmount, type Micros } from '../core/money.js';
import { NOT_THE_AGENTS_DOING } from '../calls/call-outcome.js';
import type { PayerRule } from '../core/counted-payer.js';
import { countedPayers, payerKey } from './counted-payers.js';

/**
 * The call events an agent's record counts, one rule for every reader (ranking, the record, search): what the agent
 * caused, paid by someone other than its author. A subquery with `root_payer` (who paid for the tree's root); its one
 * binding is `notTheAgents`.
 */
const COUNTED_EVENTS = `(SELECT e.*, r.payer AS root_payer
     FROM call_events e JOIN calls c ON c.id = e.call_id JOIN calls r ON r.id = c.root_id
    WHERE NOT (coalesce(e.error_code, '') = ANY(?::text[]))
      AND split_part(e.agent_id, '/', 1) <> c.payer AND split_part(e.agent_id, '/', 1) <> r.payer)`;
const notTheAgents = [...NOT_THE_AGENTS_DOING];

export interface MeasuredRecord {
  runs: number;
  successes: number;
  /** Distinct accounts that paid for those runs: the payers that count. */
  payers: number;
  /** Total billed over those runs (in each event's currency; the dev gateway settles in the mandate's). */
  billed: bigint;
}

export const EMPTY_RECORD: MeasuredRecord = { runs: 0, successes: 0, payers: 0, billed: 0n };

export const recordKey = (id: string, version: string): string => `${id}@${version}`;

/**
 * The ranking facts of the given versions (all time): the runs of the payers that count for each version
 * (counted-payers.ts), in one query and, unless every payer counts, two more for what vouches for those payers.
 * Versions without counted runs get EMPTY_RECORD.
 */
export async function loadRecords(
  db: Queryable,
  versions: ReadonlyArray<{ id: string; version: string }>,
  rule: PayerRule,
): Promise<Map<string, MeasuredRecord>> {
  const out = new Map<string, MeasuredRecord>(versions.map((v) => [recordKey(v.id, v.version), EMPTY_RECORD]));
  if (versions.length === 0) return out;
  const r = await db.raw<{
    rows: Array<{ agent_id: string; agent_version: string; root_payer: string; currency: string; runs: DbBigInt; successes: DbBigInt; billed: DbBigInt }>;
  }>(
    `SELECT agent_id, agent_version, root_payer, currency, count(*) AS runs, count(*) FILTER (WHERE status = 'succeeded') AS successes,
            coalesce(sum(cost), 0) AS billed
       FROM ${COUNTED_EVENTS} ev
      WHERE (agent_id, agent_version) IN (SELECT * FROM unnest(?::text[], ?::text[]))
      GROUP BY agent_id, agent_version, root_payer, currency`,
    [notTheAgents, versions.map((v) => v.id), versions.map((v) => v.version)],
  );
  const rows = r.rows.map((row) => ({
    version: recordKey(row.agent_id, row.agent_version),
    payer: row.root_payer,
    currency: row.currency,
    runs: Number(row.runs),
    successes: Number(row.successes),
    spent: toBigInt(row.billed),
  }));
  const counted = await countedPayers(db, rule, rows);
  const payers = new Map<string, Set<string>>();
  for (const row of rows) {
    if (!counted.has(payerKey(row.version, row.payer))) continue;
    const t = out.get(row.version)!;
    out.set(row.version, { runs: t.runs + row.runs, successes: t.successes + row.successes, payers: 0, billed: t.billed + row.spent });
    payers.set(row.version, (payers.get(row.version) ?? new Set()).add(row.payer));
  }
  for (const [version, who] of payers) out.set(version, { ...out.get(version)!, payers: who.size });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The Agent Record

const RECORD_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

interface CurrencyRecord {
  currency: string;
  runs: number;
  successes: number;
  billed_total: string;
  cost_per_successful_run: string | null;
}

/** One scope (a version, or the agent) over one window. JSON-ready. */
export interface WindowRecord {
  runs: number;
  successes: number;
  /** Distinct accounts that paid for the runs (the payer of each delegation tree's root). */
  payers: number;
  /** Those of `payers` that count toward ranking (counted-payers.ts). */
  counted_payers: number;
  success_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null };
  currency: string | null;
  billed_total: string;
  cost_per_successful_run: string | null;
  errors: Record<string, number>;
  /** Only when the window's runs were settled in more than one currency. */
  by_currency?: CurrencyRecord[];
}

interface AgentRecord {
  last_30_days: WindowRecord;
  all_time: WindowRecord;
}

export interface AgentRecords {
  /** Every event of the agent id, all versions (listed or not). */
  agent: AgentRecord;
  /** Keyed by version: exactly the versions asked for (empty records for versions without runs). */
  versions: Map<string, AgentRecord>;
}

/** The compact all-time record of search results. JSON-ready except `measured` (for ranking, not shown). */
export interface RecordSummary {
  runs: number;
  successes: number;
  payers: number;
  counted_payers: number;
  success_rate: number | null;
  latency_p50_ms: number | null;
  cost_per_successful_run: string | null;
  currency: string | null;
}

export const EMPTY_SUMMARY: RecordSummary = {
  runs: 0,
  successes: 0,
  payers: 0,
  counted_payers: 0,
  success_rate: null,
  latency_p50_ms: null,
  cost_per_successful_run: null,
  currency: null,
};

/** Raw per-scope figures before presentation. */
interface Tally {
  runs: number;
  successes: number;
  payers: number;
  countedPayers: number;
  billed: Micros;
  p50: number | null;
  p95: number | null;
  currencies: Map<string, { runs: number; successes: number; billed: Micros }>;
  errors: Map<string, number>;
}

const emptyTally = (): Tally => ({
  runs: 0,
  successes: 0,
  payers: 0,
  countedPayers: 0,
  billed: 0n,
  p50: null,
  p95: null,
  currencies: new Map(),
  errors: new Map(),
});

function successRate(runs: number, successes: number): number | null {
  return runs > 0 ? Number((successes / runs).toFixed(4)) : null;
}

/** billed ÷ successes, rounded up to the micro-unit; null without successes. */
function costPerSuccessfulRun(billed: Micros, successes: number): Micros | null {
  return successes > 0 ? divRound(billed, BigInt(successes), 'up') : null;
}

function money(billed: Micros, successes: number): { billed_total: string; cost_per_successful_run: string | null } {
  const cost = costPerSuccessfulRun(billed, successes);
  return { billed_total: formatAmount(billed), cost_per_successful_run: cost === null ? null : formatAmount(cost) };
}

/** The currency with the most runs (ties: alphabetical), or null. */
function mainCurrency(currencies: Tally['currencies']): string | null {
  let best: string | null = null;
  for (const [c, t] of [...currencies].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (best === null || t.runs > currencies.get(best)!.runs) best = c;
  }
  return best;
}

function windowView(t: Tally): WindowRecord {
  const currency = mainCurrency(t.currencies);
  const main = currency === null ? { runs: 0, successes: 0, billed: 0n } : t.currencies.get(currency)!;
  const errors = Object.fromEntries([...t.errors].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    runs: t.runs,
    successes: t.successes,
    payers: t.payers,
    counted_payers: t.countedPayers,
    success_rate: successRate(t.runs, t.successes),
    latency_ms: { p50: t.runs > 0 ? t.p50 : null, p95: t.runs > 0 ? t.p95 : null },
    currency,
    ...money(main.billed, main.successes),
    errors,
    ...(t.currencies.size > 1
      ? {
          by_currency: [...t.currencies]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([c, x]) => ({ currency: c, runs: x.runs, successes: x.successes, ...money(x.billed, x.successes) })),
        }
      : {}),
  };
}

const num = (v: DbBigInt | null): number => Number(v ?? 0);
const numOrNull = (v: number | null): number | null => (v === null || v === undefined ? null : Number(v));

/** A row of the Agent Record's query (shared/db/connect.ts): counts, sums and percentiles per window. Null where rolled up. */
type WindowColumns<W extends string> = { [K in `runs_${W}` | `successes_${W}` | `payers_${W}` | `billed_${W}`]: DbBigInt } & {
  [K in `p50_${W}` | `p95_${W}`]: number | null;
};
type AgentRecordRow = { agent_version: string | null; currency: string | null; error_code: string | null; g: number } & WindowColumns<'30' | 'all'>;

/**
 * The Agent Record of one agent: per version (those given) and for the agent as a whole, over the last
 * 30 days (relative to `now`, epoch ms) and all time, with the payers that count under `rule`: one query, and
 * `countedPayersByScope`'s.
 */
export async function loadAgentRecords(
  db: Queryable,
  agentId: string,
  versions: readonly string[],
  { now, rule }: { now: number; rule: PayerRule },
): Promise<AgentRecords> {
  const since = new Date(now - RECORD_WINDOW_DAYS * DAY_MS).toISOString();
  // g = GROUPING(agent_version, currency, error_code): bit 4 = version rolled up, 2 = currency, 1 = error code.
  //   3 (0b011) per version, 7 (0b111) the agent; 1 per version × currency, 5 agent × currency;
  //   2 per version × error code, 6 agent × error code.
  const r = await db.raw<{ rows: AgentRecordRow[] }>(
    `SELECT agent_version, currency, error_code, GROUPING(agent_version, currency, error_code) AS g,
            count(*)                                                         AS runs_all,
            count(*) FILTER (WHERE recent)                                   AS runs_30,
            count(*) FILTER (WHERE status = 'succeeded')                     AS successes_all,
            count(*) FILTER (WHERE status = 'succeeded' AND recent)          AS successes_30,
            count(DISTINCT root_payer)                                       AS payers_all,
            count(DISTINCT root_payer) FILTER (WHERE recent)                 AS payers_30,
            coalesce(sum(cost), 0)                                           AS billed_all,
            coalesce(sum(cost) FILTER (WHERE recent), 0)                     AS billed_30,
            percentile_disc(0.5)  WITHIN GROUP (ORDER BY latency_ms)                      AS p50_all,
            percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms)                      AS p95_all,
            percentile_disc(0.5)  WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE recent) AS p50_30,
            percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE recent) AS p95_30
       FROM (SELECT e.*, e.created_at >= ?::timestamptz AS recent FROM ${COUNTED_EVENTS} e WHERE e.agent_id = ?) ev
      GROUP BY GROUPING SETS ((agent_version), (), (agent_version, currency), (currency), (agent_version, error_code), (error_code))`,
    [since, notTheAgents, agentId],
  );
  const wanted = new Set(versions);
  const tallies = new Map<string | null, { last_30_days: Tally; all_time: Tally }>([[null, { last_30_days: emptyTally(), all_time: emptyTally() }]]);
  for (const v of versions) tallies.set(v, { last_30_days: emptyTally(), all_time: emptyTally() });
  for (const row of r.rows) {
    const g = Number(row.g);
    const version = g & 4 ? null : String(row.agent_version);
    if (version !== null && !wanted.has(version)) continue;
    const scope = tallies.get(version)!;
    for (const [w, suffix] of [
      ['last_30_days', '30'],
      ['all_time', 'all'],
    ] as const) {
      const t = scope[w];
      const runs = num(row[`runs_${suffix}`]);
      const successes = num(row[`successes_${suffix}`]);
      const billed = toBigInt(row[`billed_${suffix}`]);
      if ((g & 3) === 3) {
        Object.assign(t, {
          runs,
          successes,
          payers: num(row[`payers_${suffix}`]),
          billed,
          p50: numOrNull(row[`p50_${suffix}`]),
          p95: numOrNull(row[`p95_${suffix}`]),
        });
      } else if ((g & 3) === 1) {
        if (runs > 0) t.currencies.set(String(row.currency), { runs, successes, billed });
      } else if ((g & 3) === 2) {
        if (runs > 0 && row.error_code !== null) t.errors.set(String(row.error_code), runs);
      }
    }
  }
  const counted = await countedPayersByScope(db, agentId, since, rule);
  for (const [version, scope] of tallies) {
    const c = counted.get(version);
    scope.all_time.countedPayers = c?.all.size ?? 0;
    scope.last_30_days.countedPayers = c?.recent.size ?? 0;
  }
  const view = (s: { last_30_days: Tally; all_time: Tally }): AgentRecord => ({
    last_30_days: windowView(s.last_30_days),
    all_time: windowView(s.all_time),
  });
  return {
    agent: view(tallies.get(null)!),
    versions: new Map(versions.map((v) => [v, view(tallies.get(v)!)])),
  };
}

/**
 * The payers that count, per version (keyed by version) and for the agent (key null), all time and since `since`:
 * what each payer spent on each version of the agent, then the rule (counted-payers.ts).
 */
async function countedPayersByScope(
  db: Queryable,
  agentId: string,
  since: string,
  rule: PayerRule,
): Promise<Map<string | null, { all: Set<string>; recent: Set<string> }>> {
  const r = await db.raw<{ rows: Array<{ agent_version: string; root_payer: string; currency: string; spent: DbBigInt; recent: boolean }> }>(
    `SELECT agent_version, root_payer, currency, coalesce(sum(cost), 0) AS spent, bool_or(created_at >= ?::timestamptz) AS recent
       FROM ${COUNTED_EVENTS} e WHERE e.agent_id = ?
      GROUP BY agent_version, root_payer, currency`,
    [since, notTheAgents, agentId],
  );
  const counted = await countedPayers(
    db,
    rule,
    r.rows.map((row) => ({ version: row.agent_version, payer: row.root_payer, currency: row.currency, spent: toBigInt(row.spent) })),
  );
  const out = new Map<string | null, { all: Set<string>; recent: Set<string> }>();
  for (const row of r.rows) {
    if (!counted.has(payerKey(row.agent_version, row.root_payer))) continue;
    for (const scope of [row.agent_version, null]) {
      const sets = out.get(scope) ?? { all: new Set<string>(), recent: new Set<string>() };
      out.set(scope, sets);
      sets.all.add(row.root_payer);
      if (row.recent) sets.recent.add(row.root_payer);
    }
  }
  return out;
}

/** The compact form of a window (search results, the one-agent view's top-level `record`). */
export function summarize(w: WindowRecord): RecordSummary {
  return {
    runs: w.runs,
    successes: w.successes,
    payers: w.payers,
    counted_payers: w.counted_payers,
    success_rate: w.success_rate,
    latency_p50_ms: w.latency_ms.p50,
    cost_per_successful_run: w.cost_per_successful_run,
    currency: w.currency,
  };
}

/**
 * Compact all-time records for many versions (search results), keyed by `recordKey`: one query, and `loadRecords`'
 * for `measured` (the ranking facts: the counted payers' runs, billed summed over currencies, as ranking expects).
 */
export async function loadRecordSummaries(
  db: Queryable,
  versions: ReadonlyArray<{ id: string; version: string }>,
  rule: PayerRule,
): Promise<Map<string, { summary: RecordSummary; measured: MeasuredRecord }>> {
  const out = new Map<string, { summary: RecordSummary; measured: MeasuredRecord }>(
    versions.map((v) => [recordKey(v.id, v.version), { summary: EMPTY_SUMMARY, measured: EMPTY_RECORD }]),
  );
  if (versions.length === 0) return out;
  const r = await db.raw<{
    rows: Array<{
      agent_id: string;
      agent_version: string;
      currency: string | null;
      g: number;
      runs: DbBigInt;
      successes: DbBigInt;
      payers: DbBigInt;
      billed: DbBigInt;
      p50: number | null;
    }>;
  }>(
    `SELECT agent_id, agent_version, currency, GROUPING(currency) AS g,
            count(*) AS runs, count(*) FILTER (WHERE status = 'succeeded') AS successes, count(DISTINCT root_payer) AS payers,
            coalesce(sum(cost), 0) AS billed, percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50
       FROM ${COUNTED_EVENTS} ev
      WHERE (agent_id, agent_version) IN (SELECT * FROM unnest(?::text[], ?::text[]))
      GROUP BY GROUPING SETS ((agent_id, agent_version), (agent_id, agent_version, currency))`,
    [notTheAgents, versions.map((v) => v.id), versions.map((v) => v.version)],
  );
  const tallies = new Map<string, Tally>();
  for (const row of r.rows) {
    const key = recordKey(row.agent_id, row.agent_version);
    const t = tallies.get(key) ?? emptyTally();
    tallies.set(key, t);
    const runs = num(row.runs);
    const successes = num(row.successes);
    const billed = toBigInt(row.billed);
    if (Number(row.g) === 1) Object.assign(t, { runs, successes, payers: num(row.payers), billed, p50: numOrNull(row.p50) });
    else t.currencies.set(String(row.currency), { runs, successes, billed });
  }
  const measured = await loadRecords(db, versions, rule);
  for (const [key, t] of tallies) {
    const m = measured.get(key) ?? EMPTY_RECORD;
    out.set(key, { summary: summarize(windowView({ ...t, countedPayers: m.payers })), measured: m });
  }
  return out;
}
