/**
 * Evaluation suites (spec/evals.md): the suite format and its validation (suite.ts), judging a case and a suite's
 * status (judge.ts), JSON Pointers (pointer.ts). Pure; files are read by shared/evaluation/suites.ts.
 */
export {
  caseFixtures,
  fixtureHandle,
  isFixtureName,
  parseFixtureHandle,
  parseSuite,
  suiteFixtures,
  validateSuite,
  type CaseExpectation,
  type Suite,
  type SuiteCase,
  type SuiteResult,
} from './suite.js';
export { MAX_REASONS, deepEqual, isDeepSubset, judgeCase, suiteStatus, type CaseJudgement, type CaseRunResult, type CheckOutput } from './judge.js';
export { formatPointer, parsePointer, resolvePointer } from './pointer.js';
