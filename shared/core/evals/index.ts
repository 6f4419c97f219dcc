/**
 * Evaluation suites (spec/evals.md): the suite format and its validation (suite.ts), judging a case and a suite's
 * status (judge.ts), JSON Pointers (pointer.ts). Pure; files are read by shared/evaluation/suites.ts.
 */
export {
  CASE_ID_PATTERN,
  FIXTURE_HANDLE_PREFIX,
  FIXTURE_NAME_PATTERN,
  MAX_CASE_EXPECT_BYTES,
  MAX_CASE_INPUT_BYTES,
  MAX_CASE_TIMEOUT_S,
  MAX_CASES,
  MAX_FIXTURES_PER_CASE,
  MAX_PATHS_PER_CASE,
  caseFixtures,
  fixtureHandle,
  isFixtureName,
  parseFixtureHandle,
  parseSuite,
  suiteFixtures,
  tryParseThreshold,
  validateSuite,
  type CaseExpectation,
  type Suite,
  type SuiteCase,
  type SuiteResult,
} from './suite.js';
export { MAX_REASONS, deepEqual, isDeepSubset, judgeCase, suiteStatus, type CaseJudgement, type CaseRunResult, type CheckOutput } from './judge.js';
export { MAX_POINTER_LENGTH, escapeSegment, formatPointer, parsePointer, resolvePointer, type PointerLookup, type PointerParse } from './pointer.js';
