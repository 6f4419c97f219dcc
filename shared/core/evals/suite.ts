/**
 * Evaluation suites (spec/evals.md §1): the format of `evals/<capability>/suite.yaml`, validated with a JSON path
 * and a plain-words message for every problem (docs/evaluation.md, "Suites"). Pure: the loader
 * (shared/evaluation/suites.ts) reads the files, checks that fixtures exist, and calls this.
 *
 *   capability       a capability class, the manifest's syntax (shared/core/identifiers.ts)
 *   version          an integer ≥ 1; results name it
 *   pass_threshold   a decimal string "0".."1", at most 6 decimals, kept exact (a Rate)
 *   description      optional text
 *   cases            1..200 of {id, input, expect: {output?, error?, paths?}, timeout_s?}
 *
 * Fixture handles `holon://evals/<capability>/<name>` may sit in any string of an input, found by the same
 * pattern shared/files/handles.ts scans a call's input with; they must name the suite's own capability and a plain
 * file name.
 */
import { jsonCopy, parseDocumentText } from '../documents.js';
import { jsonPath, type Problem } from '../errors.js';
import { isCapabilityClass } from '../identifiers.js';
import { MAX_JSON_DEPTH, stringProblem } from '../json-limits.js';
import { CAPABILITY_PATTERN, isErrorCode, PATTERN_MESSAGES } from '../manifest/schema.js';
import { RESERVED_ERROR_CODES } from '../manifest/types.js';
import { sortProblems } from '../manifest/validate.js';
import { ONE_RATE, tryParseRate, type Rate } from '../money.js';
import { parsePointer } from './pointer.js';
import { isJsonObject, type JsonObject, hasField } from '../json.js';

// ---------------------------------------------------------------------------------------------
// The format
// ---------------------------------------------------------------------------------------------

const MAX_CASES = 200;
/** The largest `input` of one case, and separately the largest `expect`, as UTF-8 JSON. */
const MAX_CASE_INPUT_BYTES = 64 * 1024;
const MAX_CASE_EXPECT_BYTES = 64 * 1024;
/** JSON Pointers one case's `expect.paths` may check. */
const MAX_PATHS_PER_CASE = 100;
/** Distinct fixtures one case's input may name (the most file handles one call may carry, shared/files/handles.ts). */
const MAX_FIXTURES_PER_CASE = 20;
const MAX_DESCRIPTION_LENGTH = 4000;
/** Suite versions are stored as Postgres integers. */
const MAX_SUITE_VERSION = 2_147_483_647;
const MIN_CASE_TIMEOUT_S = 1;
const MAX_CASE_TIMEOUT_S = 300;
const PASS_THRESHOLD_DECIMALS = 6;

const CASE_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const CASE_ID = new RegExp(CASE_ID_PATTERN);

const FIXTURE_HANDLE_PREFIX = 'holon://evals/';
/** A fixture's file name: letters, digits, `.`, `_`, `-`; not starting with `.`; no `..`; at most 128 characters. */
const FIXTURE_NAME_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$';
const FIXTURE_NAME = new RegExp(FIXTURE_NAME_PATTERN);
/** Same characters as shared/files/handles.ts: scheme and kind in any case, then what an id or a path may hold. */
const HANDLE = /holon:\/\/(files|evals)\/([A-Za-z0-9._/-]*)/gi;

/** What one case expects. A key is present only when the suite wrote it (`output: null` expects null). */
export interface CaseExpectation {
  /** Deep subset of the output (judge.ts). */
  output?: unknown;
  /** The error code the agent must report (never together with `output` or `paths`). */
  error?: string;
  /** JSON Pointer (RFC 6901) → the exact value at that place in the output. */
  paths?: Readonly<JsonObject>;
}

export interface SuiteCase {
  id: string;
  input: unknown;
  expect: CaseExpectation;
  timeout_s?: number;
}

export interface Suite {
  capability: string;
  version: number;
  /** As written ("0.8"). */
  pass_threshold: string;
  /** The same, exact: num/den. */
  threshold: Rate;
  description?: string;
  cases: SuiteCase[];
}

export type SuiteResult = { ok: true; suite: Suite } | { ok: false; problems: Problem[] };

const SUITE_FIELDS = new Set(['capability', 'version', 'pass_threshold', 'description', 'cases']);
const CASE_FIELDS = new Set(['id', 'input', 'expect', 'timeout_s']);
const EXPECT_FIELDS = new Set(['output', 'error', 'paths']);
const RESERVED = new Set<string>(RESERVED_ERROR_CODES);
/** Past this many, value problems (NUL, surrogates, non-finite numbers) stop being listed one by one. */
const MAX_VALUE_PROBLEMS = 50;
/** Values (strings, numbers, mappings, lists…) a suite document may hold: far above 200 cases of 64 KB each. */
const MAX_VALUES = 2_000_000;

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

type Report = (path: string, message: string) => void;

const at = (base: string, ...segments: Array<string | number>): string => base + jsonPath(...segments).slice(1);

/** A suite document (parsed YAML or JSON) → the suite, or every problem with its JSON path. */
export function validateSuite(doc: unknown): SuiteResult {
  // Bounded first: depth, NUL, lone surrogates, non-finite numbers — iteratively, before anything recurses.
  const valueProblems = checkValues(doc);
  if (valueProblems.fatal) return { ok: false, problems: valueProblems.problems };
  const copied = jsonCopy(doc);
  if (!copied.ok) return copied;
  const copy = copied.value;

  const problems: Problem[] = [...valueProblems.problems];
  const report: Report = (path, message) => problems.push({ path, message });
  if (!isJsonObject(copy)) {
    report('$', 'must be a mapping with capability, version, pass_threshold and cases');
    return { ok: false, problems };
  }
  for (const key of Object.keys(copy)) if (!SUITE_FIELDS.has(key)) report(at('$', key), 'is not a known field');

  const capability = checkCapability(copy, report);
  const version = checkVersion(copy, report);
  const threshold = checkThreshold(copy, report);
  if (hasField(copy, 'description')) {
    if (typeof copy.description !== 'string') report('$.description', 'must be a string');
    else if (copy.description.length > MAX_DESCRIPTION_LENGTH) report('$.description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters long`);
  }
  const cases = checkCases(copy, capability, report);

  if (problems.length) return { ok: false, problems: sortProblems(problems) };
  const suite: Suite = {
    capability: capability!,
    version: version!,
    pass_threshold: copy.pass_threshold as string,
    threshold: threshold!,
    ...(hasField(copy, 'description') ? { description: copy.description as string } : {}),
    cases: cases!,
  };
  return { ok: true, suite };
}

/** A suite.yaml (or JSON) text → the same result as validateSuite. */
export function parseSuite(text: string, format?: 'json' | 'yaml'): SuiteResult {
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  return validateSuite(parsed.value);
}

function checkCapability(doc: JsonObject, report: Report): string | undefined {
  if (!hasField(doc, 'capability')) return void report('$.capability', 'is required');
  const v = doc.capability;
  if (typeof v !== 'string') return void report('$.capability', 'must be a string');
  if (v.length > 128) return void report('$.capability', 'must be at most 128 characters long');
  if (!isCapabilityClass(v)) return void report('$.capability', PATTERN_MESSAGES[CAPABILITY_PATTERN]!);
  return v;
}

function checkVersion(doc: JsonObject, report: Report): number | undefined {
  if (!hasField(doc, 'version')) return void report('$.version', 'is required');
  const v = doc.version;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    return void report('$.version', `must be a whole number such as 1 (bump it when the cases change), not ${describe(v)}`);
  }
  if (v < 1) return void report('$.version', 'must be at least 1');
  if (v > MAX_SUITE_VERSION) return void report('$.version', `must be at most ${MAX_SUITE_VERSION}`);
  return v;
}

function checkThreshold(doc: JsonObject, report: Report): Rate | undefined {
  if (!hasField(doc, 'pass_threshold')) return void report('$.pass_threshold', 'is required');
  const v = doc.pass_threshold;
  if (typeof v === 'number') {
    return void report('$.pass_threshold', `must be a quoted decimal string such as "0.8" (kept exact), not the number ${String(v)}`);
  }
  const parsed = tryParseThreshold(v);
  if (!parsed.ok) return void report('$.pass_threshold', parsed.message);
  return parsed.value;
}

/** "0".."1" with at most 6 decimals → an exact Rate, or why not. */
export function tryParseThreshold(value: unknown): { ok: true; value: Rate } | { ok: false; message: string } {
  const parsed = tryParseRate(value, { maxDecimals: PASS_THRESHOLD_DECIMALS, atMost: ONE_RATE, allowZero: true });
  if (!parsed.ok) {
    return {
      ok: false,
      message: `must be a share of cases from "0" to "1" with at most ${PASS_THRESHOLD_DECIMALS} decimals, such as "0.8": ${parsed.message}`,
    };
  }
  return parsed;
}

function checkCases(doc: JsonObject, capability: string | undefined, report: Report): SuiteCase[] | undefined {
  if (!hasField(doc, 'cases')) return void report('$.cases', 'is required');
  const cases = doc.cases;
  if (!Array.isArray(cases)) return void report('$.cases', 'must be a list of cases');
  if (cases.length === 0) return void report('$.cases', 'must have at least 1 case');
  // Too many: say so once, and do not look at each of a hostile number of entries.
  if (cases.length > MAX_CASES) return void report('$.cases', `must have at most ${MAX_CASES} cases, not ${cases.length}`);

  const out: SuiteCase[] = [];
  const seen = new Map<string, number>();
  cases.forEach((c, i) => {
    const path = at('$', 'cases', i);
    const checked = checkCase(c, path, capability, report);
    // Duplicates are looked for among every well-formed id, whatever else is wrong with its case.
    const id = isJsonObject(c) && typeof c.id === 'string' && CASE_ID.test(c.id) ? c.id : undefined;
    if (id !== undefined) {
      const first = seen.get(id);
      if (first !== undefined) report(`${path}.id`, `"${id}" is already the id of $.cases[${first}]: ids are unique within a suite`);
      else seen.set(id, i);
    }
    if (checked) out.push(checked);
  });
  return out.length === cases.length ? out : undefined;
}

function checkCase(c: unknown, path: string, capability: string | undefined, report: Report): SuiteCase | undefined {
  if (!isJsonObject(c)) return void report(path, 'must be a mapping with id, input and expect');
  let ok = true;
  const fail = (p: string, message: string) => {
    ok = false;
    report(p, message);
  };
  for (const key of Object.keys(c)) if (!CASE_FIELDS.has(key)) fail(at(path, key), 'is not a known field');

  const id = c.id;
  if (!hasField(c, 'id')) fail(`${path}.id`, 'is required');
  else if (typeof id !== 'string') fail(`${path}.id`, 'must be a string');
  else if (!CASE_ID.test(id)) fail(`${path}.id`, 'must be 1 to 64 characters of a-z, 0-9, "_" and "-", starting with a letter or a digit');

  // `input: null` is a JSON value like any other; only a missing input is a problem.
  if (!Object.hasOwn(c, 'input') || c.input === undefined) fail(`${path}.input`, 'is required');
  else {
    if (byteSize(c.input) > MAX_CASE_INPUT_BYTES)
      fail(`${path}.input`, `is larger than ${MAX_CASE_INPUT_BYTES / 1024} KB as JSON: put large inputs in a fixture file`);
    const fixtures = scanFixtures(c.input, `${path}.input`, capability, fail);
    if (fixtures.length > MAX_FIXTURES_PER_CASE) fail(`${path}.input`, `names ${fixtures.length} fixtures; at most ${MAX_FIXTURES_PER_CASE} are allowed`);
  }

  const expect = checkExpect(c, `${path}.expect`, fail);

  if (hasField(c, 'timeout_s')) {
    const t = c.timeout_s;
    if (typeof t !== 'number' || !Number.isInteger(t)) fail(`${path}.timeout_s`, `must be a whole number of seconds, not ${describe(t)}`);
    else if (t < MIN_CASE_TIMEOUT_S) fail(`${path}.timeout_s`, `must be at least ${MIN_CASE_TIMEOUT_S}`);
    else if (t > MAX_CASE_TIMEOUT_S) fail(`${path}.timeout_s`, `must be at most ${MAX_CASE_TIMEOUT_S}`);
  }

  if (!ok || !expect) return undefined;
  return { id: id as string, input: c.input, expect, ...(hasField(c, 'timeout_s') ? { timeout_s: c.timeout_s as number } : {}) };
}

function checkExpect(c: JsonObject, path: string, fail: Report): CaseExpectation | undefined {
  if (!hasField(c, 'expect')) return void fail(path, 'is required');
  const e = c.expect;
  if (!isJsonObject(e)) return void fail(path, 'must be a mapping with output, error or paths');
  let ok = true;
  const bad = (p: string, message: string) => {
    ok = false;
    fail(p, message);
  };
  for (const key of Object.keys(e)) if (!EXPECT_FIELDS.has(key)) bad(at(path, key), 'is not a known field');

  const hasOutput = Object.hasOwn(e, 'output') && e.output !== undefined;
  const hasError = hasField(e, 'error');
  const hasPaths = hasField(e, 'paths');
  if (hasError && (hasOutput || hasPaths)) bad(path, 'must not combine error with output or paths: an error has no output');
  if (byteSize(e) > MAX_CASE_EXPECT_BYTES) bad(path, `is larger than ${MAX_CASE_EXPECT_BYTES / 1024} KB as JSON`);

  if (hasError) {
    const code = e.error;
    if (typeof code !== 'string') bad(`${path}.error`, 'must be an error code (a string)');
    else if (!isErrorCode(code)) bad(`${path}.error`, 'is not an error code an agent may declare: snake_case, at most 64 characters');
    else if (RESERVED.has(code)) bad(`${path}.error`, `"${code}" is one of the gateway's own error codes, which no agent declares: a case cannot expect it`);
  }

  if (hasPaths) {
    const paths = e.paths;
    if (!isJsonObject(paths)) bad(`${path}.paths`, 'must be a mapping of JSON Pointers (such as "/rows") to values');
    else {
      const pointers = Object.keys(paths);
      if (pointers.length === 0) bad(`${path}.paths`, 'must check at least one JSON Pointer');
      if (pointers.length > MAX_PATHS_PER_CASE) bad(`${path}.paths`, `must check at most ${MAX_PATHS_PER_CASE} JSON Pointers`);
      else
        for (const pointer of pointers) {
          const parsed = parsePointer(pointer);
          if (!parsed.ok) bad(at(path, 'paths', pointer.slice(0, 200)), parsed.message);
        }
    }
  }

  if (!ok) return undefined;
  return {
    ...(hasOutput ? { output: e.output } : {}),
    ...(hasError ? { error: e.error as string } : {}),
    ...(hasPaths ? { paths: e.paths as JsonObject } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/** The handle of a suite's fixture: `holon://evals/<capability>/<name>`. */
export function fixtureHandle(capability: string, name: string): string {
  return `${FIXTURE_HANDLE_PREFIX}${capability}/${name}`;
}

/** A fixture's file name is plain: no directory, no `..`, not hidden. */
export function isFixtureName(name: string): boolean {
  return FIXTURE_NAME.test(name) && !name.includes('..');
}

/** `holon://evals/<capability>/<name>` → its parts, or null when it is not a well-formed fixture handle. */
export function parseFixtureHandle(handle: string): { capability: string; name: string } | null {
  if (!handle.startsWith(FIXTURE_HANDLE_PREFIX)) return null;
  const rest = handle.slice(FIXTURE_HANDLE_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return null;
  const capability = rest.slice(0, slash);
  const name = rest.slice(slash + 1);
  return isCapabilityClass(capability) && isFixtureName(name) ? { capability, name } : null;
}

/** The fixture names one case's input uses, distinct, in the order first seen. */
export function caseFixtures(c: Pick<SuiteCase, 'input'>): string[] {
  return scanFixtures(c.input, '$', undefined, () => {});
}

/** The fixture names of every case of a suite, distinct, in the order first seen. */
export function suiteFixtures(suite: Pick<Suite, 'cases'>): string[] {
  const names = new Set<string>();
  for (const c of suite.cases) for (const name of caseFixtures(c)) names.add(name);
  return [...names];
}

/**
 * Every fixture handle in the strings of `value` (field names are not scanned, as for calls): reports handles
 * of another capability, names that are not plain, upload handles (`holon://files/…` belong to a caller, not to a
 * suite) and handles not written in lower case. Returns the names of the valid ones, distinct.
 */
function scanFixtures(value: unknown, base: string, capability: string | undefined, report: Report): string[] {
  const names = new Set<string>();
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: base }];
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.includes('://')) continue;
      for (const m of v.matchAll(HANDLE)) {
        const handle = m[0];
        const shown = JSON.stringify(handle.slice(0, 120));
        if (m[1] !== m[1]!.toLowerCase() || !handle.startsWith('holon://')) {
          report(path, `${shown}: write handles in lower case ("holon://evals/…")`);
          continue;
        }
        if (m[1] === 'files') {
          report(path, `${shown}: a suite cannot use an uploaded file; put the file in the suite's files/ and write holon://evals/<capability>/<name>`);
          continue;
        }
        const rest = m[2]!;
        const slash = rest.indexOf('/');
        const handleCapability = slash < 0 ? rest : rest.slice(0, slash);
        const name = slash < 0 ? '' : rest.slice(slash + 1);
        if (capability !== undefined && handleCapability !== capability) {
          report(path, `${shown}: a suite may only use its own fixtures, holon://evals/${capability}/<name>`);
          continue;
        }
        if (!isCapabilityClass(handleCapability)) {
          report(path, `${shown}: must be holon://evals/<capability>/<name>`);
          continue;
        }
        if (!isFixtureName(name)) {
          report(
            path,
            `${shown}: "${name.slice(0, 120)}" is not a plain file name in the suite's files/ directory (letters, digits, ".", "_" and "-", no "/", no "..", not starting with ".")`,
          );
          continue;
        }
        names.add(name);
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: at(path, i) });
    else {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ v: entries[i]![1], path: at(path, entries[i]![0]) });
    }
  }
  return [...names];
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * What makes a document unusable before its fields are looked at, iteratively (a hostile depth is cheap): more than
 * MAX_JSON_DEPTH levels (fatal: nothing else is checked), strings and field names that cannot be stored (NUL, lone
 * surrogates), numbers JSON cannot carry (YAML's .inf, .nan).
 */
function checkValues(doc: unknown): { fatal: boolean; problems: Problem[] } {
  const problems: Problem[] = [];
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: doc, path: '$', depth: 0 }];
  let more = 0;
  let seen = 0;
  let notJson = false;
  const add = (path: string, message: string) => {
    if (problems.length < MAX_VALUE_PROBLEMS) problems.push({ path, message });
    else more += 1;
  };
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (++seen > MAX_VALUES) return { fatal: true, problems: [{ path: '$', message: `holds more than ${MAX_VALUES} values: far too large for a suite` }] };
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) add(path, problem);
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) add(path, 'must be a finite number (JSON has no Infinity or NaN)');
      continue;
    }
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') {
      add(path, 'is not a JSON value');
      notJson = true;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { fatal: true, problems: [{ path: path.slice(0, 300), message: `nests deeper than ${MAX_JSON_DEPTH} levels of mappings and lists` }] };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: at(path, i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childAt = at(path, key.slice(0, 200));
      const problem = stringProblem(key);
      if (problem) add(childAt, `the field name ${problem}`);
      stack.push({ v: child, path: childAt, depth: depth + 1 });
    }
  }
  if (more) problems.push({ path: '$', message: `and ${more} more values that cannot be stored` });
  // A value JSON cannot carry would be dropped or refused by the copy: say where it is instead.
  return { fatal: notJson, problems };
}

function byteSize(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return `the number ${String(value)}`;
  return typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}
