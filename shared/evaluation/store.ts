/**
 * Evaluations in Postgres (migration 013): what is queued, what an evaluator holds, each case it judged, and how each
 * ended. The rows decide, never the queue: a job is only a wake-up naming an evaluation id, delivered at least once.
 *
 *   queued → running → passed | failed | error
 *
 * `claimEvaluation` moves queued (or running whose lease ran out: its evaluator died) to running under a lease the
 * holder renews; a terminal row is never claimed again. Case rows are keyed by (evaluation, case) and replaced when a case is judged again, so the passed
 * count is read from them at the end and never double-counted. `finishEvaluation` only ends a running row.
 */
import { randomBytes } from 'node:crypto';
import type { CaseExpectation } from '../core/evals/index.js';
import type { Db, DbBigInt, Queryable } from '../db/connect.js';
import { fromJsonb } from '../db/connect.js';

type EvaluationStatus = 'queued' | 'running' | 'passed' | 'failed' | 'error';

export interface EvaluationRow {
  id: string;
  agent_id: string;
  version: string;
  capability: string;
  run: number;
  suite_version: number;
  hidden: boolean;
  status: EvaluationStatus;
  passed: number;
  total: number;
  threshold: string;
  reason: string | null;
  attempts: number;
  holder: string | null;
  lease_until: Date | null;
  requested_by: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
}

/** What a public case shows (services/evaluator/run-case.ts `caseDetail`): expected, got, why it failed. */
export interface CaseDetail {
  expected: CaseExpectation;
  got: unknown;
  reasons?: string[];
}

export interface CaseRow {
  evaluation_id: string;
  case_id: string;
  ordinal: number;
  passed: boolean;
  duration_ms: number;
  /** Public cases: expected, got, reasons. Hidden cases: null. */
  detail: CaseDetail | null;
}

/** An `evaluation_cases` row as the drivers return it: `detail` is jsonb (shared/db/connect.ts). */
type CaseColumns = Omit<CaseRow, 'detail'> & { detail: unknown };

const caseFromRow = (row: CaseColumns): CaseRow => ({ ...row, detail: fromJsonb(row.detail) as CaseDetail | null });

/** What a suite contributes to a new evaluation (the suite's own details stay with the evaluator). */
export interface SuiteSummary {
  capability: string;
  version: number;
  hidden: boolean;
  cases: number;
  threshold: string;
}

function evaluationId(): string {
  return `ev_${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
}

/**
 * One evaluation per suite for a version, queued, in the caller's transaction when it passes one (publishing does:
 * the version is never listed without them). `run` is the next run number per capability (0 at publish time).
 */
export async function queueEvaluations(
  db: Queryable,
  v: { agentId: string; version: string; requestedBy?: string },
  suites: readonly SuiteSummary[],
): Promise<EvaluationRow[]> {
  if (suites.length === 0) return [];
  const runs = (await db('evaluations')
    .where({ agent_id: v.agentId, version: v.version })
    .whereIn(
      'capability',
      suites.map((s) => s.capability),
    )
    .groupBy('capability')
    .select('capability')
    .max('run as run')) as Array<{ capability: string; run: number | null }>;
  const last = new Map(runs.map((r) => [r.capability, r.run === null ? -1 : Number(r.run)]));
  const rows = suites.map((s) => ({
    id: evaluationId(),
    agent_id: v.agentId,
    version: v.version,
    capability: s.capability,
    run: (last.get(s.capability) ?? -1) + 1,
    suite_version: s.version,
    hidden: s.hidden,
    status: 'queued',
    total: s.cases,
    threshold: s.threshold,
    requested_by: v.requestedBy ?? null,
  }));
  const inserted: EvaluationRow[] = await db('evaluations').insert(rows).returning('*');
  return inserted;
}

/** An evaluator's hold on an evaluation: which one, the holder's name, the time now, and for how long it holds it. */
interface EvaluationLease {
  id: string;
  holder: string;
  now: number;
  leaseMs: number;
}

/**
 * Hold an evaluation for a run, under a lease of `leaseMs`: a queued one, or a running one whose holder let its lease
 * run out (it died). Null when it ended, does not exist, or another evaluator holds it.
 */
export async function claimEvaluation(db: Db, lease: EvaluationLease): Promise<EvaluationRow | null> {
  const { id, holder, now, leaseMs } = lease;
  const at = new Date(now);
  const rows: EvaluationRow[] = await db('evaluations')
    .where({ id })
    .where((q) =>
      q.where({ status: 'queued' }).orWhere((r) => r.where({ status: 'running' }).where((l) => l.whereNull('lease_until').orWhere('lease_until', '<', at))),
    )
    .update({
      status: 'running',
      holder,
      lease_until: new Date(now + leaseMs),
      started_at: db.raw('coalesce(started_at, ?)', [at]),
      attempts: db.raw('attempts + 1'),
    })
    .returning('*');
  return rows[0] ?? null;
}

/** Extend the holder's lease; false when it lost the evaluation (ended, or claimed by another after a lapse). */
export async function renewLease(db: Db, lease: EvaluationLease): Promise<boolean> {
  const { id, holder, now, leaseMs } = lease;
  const n = await db('evaluations')
    .where({ id, holder, status: 'running' })
    .update({ lease_until: new Date(now + leaseMs) });
  return Number(n) > 0;
}

/** Give a claim back at once (the holder failed on the gateway side): another delivery may claim it now. */
export async function releaseLease(db: Db, id: string, holder: string): Promise<void> {
  await db('evaluations').where({ id, holder, status: 'running' }).update({ lease_until: null });
}

/**
 * The suite changed between queueing and running (a new `version` of it): the evaluation follows the suite it runs,
 * and the cases judged under the old one no longer count.
 */
export async function adoptSuite(db: Db, id: string, suite: SuiteSummary): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('evaluation_cases').where({ evaluation_id: id }).delete();
    await trx('evaluations').where({ id }).update({ suite_version: suite.version, hidden: suite.hidden, total: suite.cases, threshold: suite.threshold });
  });
}

/** The cases already judged (an evaluator that resumes skips them). */
export async function judgedCases(db: Db, id: string): Promise<Set<string>> {
  const rows = (await db('evaluation_cases').where({ evaluation_id: id }).select('case_id')) as Array<{ case_id: string }>;
  return new Set(rows.map((r) => r.case_id));
}

/** Record one judged case; judging it again replaces the row (never a second count). */
export async function recordCase(db: Db, row: CaseRow): Promise<void> {
  await db('evaluation_cases')
    .insert({ ...row, detail: row.detail === null || row.detail === undefined ? null : JSON.stringify(row.detail) })
    .onConflict(['evaluation_id', 'case_id'])
    .merge(['passed', 'duration_ms', 'detail', 'judged_at', 'ordinal']);
}

/**
 * End the holder's running evaluation: `passed`/`failed` from its case rows and the threshold (decided by the caller
 * from the same counts), or `error` with a reason in plain words. Null when the holder no longer holds it.
 */
export async function finishEvaluation(
  db: Db,
  held: Omit<EvaluationLease, 'leaseMs'>,
  end: { status: 'passed' | 'failed' | 'error'; passed: number; reason?: string },
): Promise<EvaluationRow | null> {
  const { id, holder, now } = held;
  const rows: EvaluationRow[] = await db('evaluations')
    .where({ id, holder, status: 'running' })
    .update({
      lease_until: null,
      status: end.status,
      passed: end.passed,
      reason: end.reason ?? null,
      finished_at: new Date(now),
      duration_ms: db.raw('greatest(0, round(extract(epoch from (?::timestamptz - started_at)) * 1000))::int', [new Date(now)]),
    })
    .returning('*');
  return rows[0] ?? null;
}

/** How many of an evaluation's judged cases passed (its end is computed from this, not from a counter). */
export async function passedCount(db: Db, id: string): Promise<{ passed: number; judged: number }> {
  const row = (await db('evaluation_cases')
    .where({ evaluation_id: id })
    .select(db.raw('count(*) filter (where passed) as passed'), db.raw('count(*) as judged'))
    .first()) as { passed: DbBigInt; judged: DbBigInt };
  return { passed: Number(row.passed), judged: Number(row.judged) };
}

/**
 * What the recovery sweep hands to an evaluator again: queued rows older than `queuedBefore` (their job was lost or
 * failed before a claim), and running rows whose lease ran out (their evaluator died).
 */
export async function strandedEvaluations(db: Db, now: number, queuedBefore: number, limit = 500): Promise<Array<{ id: string }>> {
  return (await db('evaluations')
    .where((q) =>
      q
        .where((a) => a.where({ status: 'queued' }).where('created_at', '<', new Date(queuedBefore)))
        .orWhere((b) => b.where({ status: 'running' }).where((l) => l.whereNull('lease_until').orWhere('lease_until', '<', new Date(now)))),
    )
    .orderBy('created_at')
    .limit(limit)
    .select('id')) as Array<{ id: string }>;
}

/** An evaluation as the views read it: with its judged cases, or (lists) only how far an unfinished one got. */
export type LatestEvaluation = EvaluationRow & { cases?: CaseRow[]; judged?: { cases: number; passed: number } };

/**
 * The latest run per capability of each named version: what the views show and what `require.evaluated` reads.
 * `withCases` adds every judged case in suite order (the one-agent and author views); without it only the unfinished
 * ones get their counts so far (the lists' `progress`), so a list never reads case rows. Versions without
 * evaluations are absent from the map.
 */
export async function latestEvaluations(
  db: Db,
  versions: ReadonlyArray<{ id: string; version: string }>,
  withCases: boolean,
): Promise<Map<string, LatestEvaluation[]>> {
  const out = new Map<string, LatestEvaluation[]>();
  if (versions.length === 0) return out;
  const rows: EvaluationRow[] = await db('evaluations as e')
    .whereIn(
      ['e.agent_id', 'e.version'],
      versions.map((v) => [v.id, v.version]),
    )
    .whereNotExists(
      db('evaluations as later').whereRaw(
        'later.agent_id = e.agent_id and later.version = e.version and later.capability = e.capability and later.run > e.run',
      ),
    )
    .orderBy(['e.agent_id', 'e.version', 'e.capability'])
    .select('e.*');
  const cases = new Map<string, CaseRow[]>();
  const counts = new Map<string, { cases: number; passed: number }>();
  if (withCases && rows.length > 0) {
    const caseRows: CaseColumns[] = await db('evaluation_cases')
      .whereIn(
        'evaluation_id',
        rows.map((r) => r.id),
      )
      .orderBy(['evaluation_id', 'ordinal'])
      .select('evaluation_id', 'case_id', 'ordinal', 'passed', 'duration_ms', 'detail');
    for (const c of caseRows.map(caseFromRow)) cases.set(c.evaluation_id, [...(cases.get(c.evaluation_id) ?? []), c]);
  }
  const unfinished = rows.filter((r) => r.status === 'queued' || r.status === 'running').map((r) => r.id);
  if (!withCases && unfinished.length > 0) {
    const tallies = (await db('evaluation_cases')
      .whereIn('evaluation_id', unfinished)
      .groupBy('evaluation_id')
      .select('evaluation_id', db.raw('count(*) as cases'), db.raw('count(*) filter (where passed) as passed'))) as Array<{
      evaluation_id: string;
      cases: DbBigInt;
      passed: DbBigInt;
    }>;
    for (const t of tallies) counts.set(t.evaluation_id, { cases: Number(t.cases), passed: Number(t.passed) });
  }
  for (const r of rows) {
    const key = `${r.agent_id}@${r.version}`;
    const row: LatestEvaluation = withCases ? { ...r, cases: cases.get(r.id) ?? [] } : { ...r, judged: counts.get(r.id) ?? { cases: 0, passed: 0 } };
    out.set(key, [...(out.get(key) ?? []), row]);
  }
  return out;
}
