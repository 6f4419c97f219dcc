/**
 * Judging one case of a suite against what a run gave, and a suite's status from its counts (spec/evals.md §1,
 * docs/evaluation.md "How a case is judged"). Pure: the evaluator runs the case and hands the result over.
 *
 * A case expecting an output (`output`, `paths`, or neither) passes when the run gave an output that validates
 * against the version's interface.output AND every clause holds:
 *   output   deep subset: objects — every expected key is present and a deep subset; arrays — same length, element
 *            by element; scalars — strictly equal (numbers by value, 1 and 1.0 are one number);
 *   paths    each JSON Pointer names a value of the output that is exactly (deeply) equal; a missing one fails.
 * A case expecting `error: <code>` passes when the run reported exactly that code and, when the caller passes the
 * version's declared codes, the version declares it. Failures (timeout, crash, unreachable, cancelled) never pass.
 */
import type { Problem } from '../errors.js';
import { compareRates, type Rate } from '../money.js';
import { formatPointer, parsePointer, resolvePointer } from './pointer.js';
import { tryParseThreshold, type SuiteCase } from './suite.js';
import { isJsonObject } from '../json.js';

/** What a run gave, structurally the runner's RunResult (shared/runtimes/types.ts) without billing. */
export type CaseRunResult =
  | { kind: 'output'; output: unknown }
  | { kind: 'error'; code: string; message?: string }
  | { kind: 'failure'; code: 'timeout' | 'agent_error' | 'runtime_unavailable' | 'cancelled'; message: string };

/** The output's problems against the version's interface.output (compileInterface(manifest).output); [] when valid. */
export type CheckOutput = (output: unknown) => Problem[];

export interface CaseJudgement {
  passed: boolean;
  /** Why it failed, in plain words ("/rows: expected 3, got 2"); empty when it passed. */
  reasons: string[];
  /** What the run gave: `{output}`, or `{error: code}` for an error or a failure. */
  got: { output: unknown } | { error: string };
}

/** Reasons listed one by one before the rest is counted. */
export const MAX_REASONS = 20;

/**
 * Judge one case. `declaredErrors`: the codes of the version's interface.errors; when given, an error the version
 * does not declare never passes (an undeclared code is not an answer the version promised). When omitted the caller
 * must have checked it.
 */
export function judgeCase(c: Pick<SuiteCase, 'expect'>, result: CaseRunResult, checkOutput: CheckOutput, declaredErrors?: Iterable<string>): CaseJudgement {
  const reasons: string[] = [];
  const expected = c.expect;
  const declared = declaredErrors === undefined ? undefined : new Set(declaredErrors);

  if (result.kind === 'failure') {
    return { passed: false, reasons: [failureReason(result)], got: { error: result.code } };
  }

  if (result.kind === 'error') {
    const got = { error: result.code };
    const undeclared = declared !== undefined && !declared.has(result.code);
    if (expected.error === undefined) {
      reasons.push(`expected an output, got error ${result.code}${result.message ? ` (${clip(result.message, 200)})` : ''}`);
    } else if (result.code !== expected.error) {
      reasons.push(`expected error ${expected.error}, got error ${result.code}`);
    } else if (undeclared) {
      reasons.push(`got error ${result.code} as expected, but the version does not declare it in interface.errors`);
    }
    return { passed: reasons.length === 0, reasons, got };
  }

  const got = { output: result.output };
  if (expected.error !== undefined) {
    return { passed: false, reasons: [`expected error ${expected.error}, got an output`], got };
  }
  let problems: Problem[];
  try {
    problems = checkOutput(result.output);
  } catch (e) {
    problems = [{ path: '$', message: `could not be validated: ${(e as Error).message}` }];
  }
  for (const p of problems) reasons.push(`the output does not match the version's interface.output: ${p.path} ${p.message}`);
  if (Object.hasOwn(expected, 'output')) subsetReasons(expected.output, result.output, [], { reasons, limit: MAX_REASONS + 1 });
  if (expected.paths) {
    for (const [pointer, want] of Object.entries(expected.paths)) {
      const parsed = parsePointer(pointer);
      if (!parsed.ok) {
        // validateSuite refuses these; a hand-built case still gets a plain answer.
        reasons.push(`${JSON.stringify(pointer)} ${parsed.message}`);
        continue;
      }
      const found = resolvePointer(result.output, parsed.segments);
      const where = pointer === '' ? 'the output' : pointer;
      if (!found.found) reasons.push(`${where}: missing, expected ${show(want)}`);
      else if (!deepEqual(want, found.value)) reasons.push(`${where}: expected ${show(want)}, got ${show(found.value)}`);
    }
  }
  return { passed: reasons.length === 0, reasons: capped(reasons), got };
}

/** Whether `passed` of `total` cases reach the threshold, exactly: passed × den ≥ num × total. No case, no pass. */
export function suiteStatus(passed: number, total: number, threshold: Rate | string): 'passed' | 'failed' {
  if (!Number.isSafeInteger(passed) || !Number.isSafeInteger(total) || passed < 0 || total < 0 || passed > total) {
    throw new RangeError(`suiteStatus: ${passed} passed of ${total} is not a count of cases`);
  }
  let rate: Rate;
  if (typeof threshold === 'string') {
    const parsed = tryParseThreshold(threshold);
    if (!parsed.ok) throw new RangeError(`suiteStatus: the threshold ${parsed.message}`);
    rate = parsed.value;
  } else {
    rate = threshold;
  }
  if (total === 0) return 'failed';
  return compareRates({ num: BigInt(passed), den: BigInt(total) }, rate) >= 0 ? 'passed' : 'failed';
}

// ---------------------------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------------------------

/**
 * `expected` is a deep subset of `actual`. Recursion follows `expected`, whose depth validateSuite bounded, so an
 * agent's deep output cannot make it recurse further.
 */
export function isDeepSubset(expected: unknown, actual: unknown): boolean {
  const reasons: string[] = [];
  subsetReasons(expected, actual, [], { reasons, limit: 1 });
  return reasons.length === 0;
}

/** Where the differences go, and how many are enough to stop looking. */
interface ReasonSink {
  reasons: string[];
  limit: number;
}

function subsetReasons(expected: unknown, actual: unknown, at: Array<string | number>, sink: ReasonSink): void {
  const { reasons, limit } = sink;
  if (reasons.length >= limit) return;
  const where = at.length ? formatPointer(at) : 'the output';
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      reasons.push(`${where}: expected a list, got ${show(actual)}`);
      return;
    }
    if (actual.length !== expected.length) {
      reasons.push(`${where}: expected ${expected.length} item${expected.length === 1 ? '' : 's'}, got ${actual.length}`);
      return;
    }
    for (let i = 0; i < expected.length; i++) subsetReasons(expected[i], actual[i], [...at, i], sink);
    return;
  }
  if (isJsonObject(expected)) {
    if (!isJsonObject(actual)) {
      reasons.push(`${where}: expected a mapping, got ${show(actual)}`);
      return;
    }
    for (const [key, want] of Object.entries(expected)) {
      const here = [...at, key];
      if (!Object.hasOwn(actual, key)) reasons.push(`${formatPointer(here)}: missing, expected ${show(want)}`);
      else subsetReasons(want, actual[key], here, sink);
      if (reasons.length >= limit) return;
    }
    return;
  }
  if (expected !== actual) reasons.push(`${where}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Exact JSON equality: same types, same keys (order ignored), same array lengths, scalars strictly equal. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) if (!Object.hasOwn(b, key) || !deepEqual(a[key], b[key])) return false;
    return true;
  }
  return a === b;
}

function failureReason(result: Extract<CaseRunResult, { kind: 'failure' }>): string {
  const message = result.message ? `: ${clip(result.message, 200)}` : '';
  switch (result.code) {
    case 'timeout':
      return 'the agent timed out';
    case 'agent_error':
      return `the agent failed${message}`;
    case 'runtime_unavailable':
      return `the agent could not be run${message}`;
    case 'cancelled':
      return 'the run was cancelled';
    default:
      return `the run failed (${String((result as { code: unknown }).code)})${message}`;
  }
}

function capped(reasons: string[]): string[] {
  if (reasons.length <= MAX_REASONS) return reasons;
  return [...reasons.slice(0, MAX_REASONS), 'and more differences']; // the walk stops counting past the cap
}

/** A value in a reason: JSON, at most 80 characters; "nothing" for undefined. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return `a ${typeof value}`;
  return clip(text, 80);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
