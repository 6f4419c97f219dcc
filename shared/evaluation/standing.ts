/**
 * What a version's evaluations add up to, and how they are shown (spec/evals.md §3, gateway.md §7).
 *
 * Standing (what `require.evaluated` reads, shared/core/mandate/check-call.ts): `none` when no suite applied (nothing
 * to pass: the mandate admits it, "where a suite exists for their capability"), `pending` while any is queued or
 * running (not admitted), `error` or `failed` when any ended so, `passed` only when every one passed.
 *
 * Views: public suites show each case in detail (expected, got, why it failed); hidden suites show each case as its
 * number and pass/fail only — no case id, input, expectation or output ever leaves the evaluator for them.
 */
import type { CaseDetail, CaseRow, EvaluationRow, LatestEvaluation } from './store.js';

export type Standing = 'passed' | 'failed' | 'error' | 'pending' | 'none';

export function standingOf(rows: ReadonlyArray<Pick<EvaluationRow, 'status'>> | undefined): Standing {
  if (!rows || rows.length === 0) return 'none';
  if (rows.some((r) => r.status === 'queued' || r.status === 'running')) return 'pending';
  if (rows.some((r) => r.status === 'error')) return 'error';
  if (rows.some((r) => r.status === 'failed')) return 'failed';
  return 'passed';
}

export interface EvaluationView {
  capability: string;
  suite_version: number;
  run: number;
  status: EvaluationRow['status'];
  hidden: boolean;
  passed: number;
  total: number;
  pass_threshold: string;
  /** While queued or running: `3/8 cases` judged. */
  progress?: string;
  reason?: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  cases?: CaseView[];
}

/** One judged case: a public suite's in detail, a hidden suite's as its number and pass/fail only. */
type CaseView = { case: number; passed: boolean } | ({ case: number; id: string; passed: boolean; duration_ms: number } & Partial<CaseDetail>);

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** One evaluation as an API answer shows it; `withCases` adds the per-case list (public detail, hidden pass/fail). */
export function evaluationView(row: LatestEvaluation, withCases: boolean): EvaluationView {
  const cases = row.cases ?? [];
  const unfinished = row.status === 'queued' || row.status === 'running';
  const judged = row.judged ?? { cases: cases.length, passed: cases.filter((c) => c.passed).length };
  return {
    capability: row.capability,
    suite_version: row.suite_version,
    run: row.run,
    status: row.status,
    hidden: row.hidden,
    passed: unfinished ? judged.passed : row.passed,
    total: row.total,
    pass_threshold: row.threshold,
    ...(unfinished ? { progress: `${judged.cases}/${row.total} cases` } : {}),
    ...(row.reason ? { reason: row.reason } : {}),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    duration_ms: row.duration_ms,
    ...(withCases ? { cases: cases.map((c) => caseView(c, row.hidden)) } : {}),
  };
}

function caseView(c: CaseRow, hidden: boolean): CaseView {
  if (hidden) return { case: c.ordinal + 1, passed: c.passed };
  return { case: c.ordinal + 1, id: c.case_id, passed: c.passed, duration_ms: c.duration_ms, ...(c.detail ?? {}) };
}

/** A version's evaluation summary for lists (catalogue, search): its standing and one line per suite. */
export function evaluationSummary(rows: readonly LatestEvaluation[] | undefined, withCases = false) {
  return { status: standingOf(rows), suites: (rows ?? []).map((r) => evaluationView(r, withCases)) };
}
