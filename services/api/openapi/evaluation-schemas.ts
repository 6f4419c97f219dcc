/**
 * Evaluation results as answers show them (shared/evaluation/standing.ts `evaluationView`, `evaluationSummary`):
 * the catalogue (catalogue-schemas.ts) and the author's routes (author-schemas.ts) use these.
 */
import type { JsonSchema } from './operations.js';
import { closed, NULLABLE_TIMESTAMP } from './schemas.js';

const COUNT: JsonSchema = { type: 'integer', minimum: 0 };
const STRINGS: JsonSchema = { type: 'array', items: { type: 'string' } };

/** A public case's expectation, as its suite wrote it (shared/core/evals/suite.ts `CaseExpectation`). */
const CASE_EXPECTATION = closed(
  'What the case expects: a deep subset of the output, an error code, or values at JSON Pointers',
  {
    output: { description: 'A deep subset of the output' },
    error: { type: 'string' },
    paths: { type: 'object', description: 'JSON Pointer → the exact value there' },
  },
  ['output', 'error', 'paths'],
);

/** What the agent answered in a public case (services/evaluator/run-case.ts `caseDetail`). */
const CASE_GOT: JsonSchema = {
  description: 'What the agent answered: its output, the error code it reported, or a summary when too large to show',
  oneOf: [
    closed('An output', { output: { description: 'The agent’s output' } }),
    closed('An error', { error: { type: 'string' } }),
    closed('Too large to show', { summary: { type: 'string' } }),
  ],
};

const EVALUATION_CASE: JsonSchema = {
  description: 'One judged case: a public suite’s in detail, a hidden suite’s as its number and pass/fail only',
  oneOf: [
    closed(
      'A public suite’s case',
      {
        case: { type: 'integer', minimum: 1, description: 'Its number in the suite, from 1' },
        id: { type: 'string' },
        passed: { type: 'boolean' },
        duration_ms: COUNT,
        expected: CASE_EXPECTATION,
        got: CASE_GOT,
        reasons: { ...STRINGS, description: 'Why it failed, in plain words' },
      },
      ['reasons'],
    ),
    closed('A hidden suite’s case: no id, input, expectation or output', { case: { type: 'integer', minimum: 1 }, passed: { type: 'boolean' } }),
  ],
};

const EVALUATION_STATUSES = ['queued', 'running', 'passed', 'failed', 'error'] as const;
export const STANDINGS = ['passed', 'failed', 'error', 'pending', 'none'] as const;

/** One suite's latest run on a version (`EvaluationView`). */
export const EVALUATION_SUITE = closed(
  'A suite’s latest run on one version',
  {
    capability: { type: 'string' },
    suite_version: { type: 'integer' },
    run: { type: 'integer', minimum: 0, description: '0 at publish time, 1, 2… for the author’s re-runs' },
    status: { enum: [...EVALUATION_STATUSES] },
    hidden: { type: 'boolean', description: 'A hidden suite shows each case as its number and pass/fail only' },
    passed: COUNT,
    total: COUNT,
    pass_threshold: {
      type: 'string',
      pattern: '^[01](?:\\.[0-9]{1,6})?$',
      description: 'The share of cases to pass, as the suite wrote it',
      examples: ['0.8'],
    },
    progress: { type: 'string', pattern: '^[0-9]+/[0-9]+ cases$', description: 'While queued or running: how many cases were judged', examples: ['3/8 cases'] },
    reason: { type: 'string', description: 'Why it ended in `error`, in plain words' },
    started_at: NULLABLE_TIMESTAMP,
    finished_at: NULLABLE_TIMESTAMP,
    duration_ms: { type: ['integer', 'null'], minimum: 0 },
    cases: { type: 'array', items: EVALUATION_CASE, description: 'The author’s view (GET /v0/me/agents) and the one-agent view only' },
  },
  ['progress', 'reason', 'cases'],
);

/** A version's evaluation: its standing and one entry per suite (`evaluationSummary`). */
export const EVALUATION_SUMMARY = closed('A version’s evaluation: its standing and each suite’s latest run', {
  status: { enum: [...STANDINGS], description: 'The standing `require.evaluated` reads: `none` when no suite applied' },
  suites: { type: 'array', items: EVALUATION_SUITE },
});
