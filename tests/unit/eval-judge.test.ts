/**
 * Judging a case and a suite's status (shared/core/evals/judge.ts): deep subset, JSON Pointers, error expectations,
 * failures, the threshold arithmetic at its boundary, and a property: a case built from an output's own values
 * always passes against that output.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../shared/core/errors.js';
import {
  deepEqual,
  formatPointer,
  isDeepSubset,
  judgeCase,
  MAX_REASONS,
  parsePointer,
  resolvePointer,
  suiteStatus,
  type CaseExpectation,
  type CaseRunResult,
  type CheckOutput,
} from '../../shared/core/evals/index.js';

const valid: CheckOutput = () => [];
const output = (value: unknown): CaseRunResult => ({ kind: 'output', output: value });
const judge = (expectation: CaseExpectation, result: CaseRunResult, checkOutput: CheckOutput = valid, declared?: string[]) =>
  judgeCase({ expect: expectation }, result, checkOutput, declared);

const PROFILE = {
  rows: 3,
  columns: [
    { name: 'name', type: 'string', nulls: 0, distinct: 3, min: 'Ada', max: 'Smith, J' },
    { name: 'age', type: 'integer', nulls: 1, distinct: 2, min: 36, max: 52 },
  ],
};

describe('output: deep subset', () => {
  it('passes when every expected key is present and equal; extra keys are fine', () => {
    expect(judge({ output: { rows: 3 } }, output(PROFILE))).toEqual({ passed: true, reasons: [], got: { output: PROFILE } });
    expect(judge({ output: { columns: [{ name: 'name' }, { type: 'integer', min: 36 }] } }, output(PROFILE)).passed).toBe(true);
    expect(judge({ output: {} }, output(PROFILE)).passed).toBe(true);
    expect(judge({ output: PROFILE }, output(structuredClone(PROFILE))).passed).toBe(true);
  });

  it('says where and what differs', () => {
    expect(judge({ output: { rows: 2 } }, output(PROFILE)).reasons).toEqual(['/rows: expected 2, got 3']);
    expect(judge({ output: { columns: [{ type: 'integer' }, {}] } }, output(PROFILE)).reasons).toEqual(['/columns/0/type: expected "integer", got "string"']);
    expect(judge({ output: { cols: 2 } }, output(PROFILE)).reasons).toEqual(['/cols: missing, expected 2']);
    expect(judge({ output: { rows: { n: 3 } } }, output(PROFILE)).reasons).toEqual(['/rows: expected a mapping, got 3']);
    expect(judge({ output: { rows: [3] } }, output(PROFILE)).reasons).toEqual(['/rows: expected a list, got 3']);
    const whole = judge({ output: 3 }, output(PROFILE)).reasons;
    expect(whole).toHaveLength(1);
    expect(whole[0]).toMatch(/^the output: expected 3, got \{"rows":3,"columns":\[.{20,}…$/);
  });

  it('arrays: same length, element by element', () => {
    expect(judge({ output: { columns: [{}] } }, output(PROFILE)).reasons).toEqual(['/columns: expected 1 item, got 2']);
    expect(judge({ output: { columns: [{}, {}, {}] } }, output(PROFILE)).reasons).toEqual(['/columns: expected 3 items, got 2']);
    expect(judge({ output: [] }, output([])).passed).toBe(true);
    expect(judge({ output: [1, [2, { a: 3 }]] }, output([1, [2, { a: 3, b: 4 }]])).passed).toBe(true);
    expect(judge({ output: [1, 2] }, output([2, 1])).reasons).toEqual(['/0: expected 1, got 2', '/1: expected 2, got 1']);
  });

  it('scalars: strictly equal, numbers by value', () => {
    expect(judge({ output: { n: 1 } }, output({ n: 1.0 })).passed).toBe(true);
    expect(judge({ output: { n: 0 } }, output({ n: -0 })).passed).toBe(true);
    expect(judge({ output: { n: 1 } }, output({ n: '1' })).reasons).toEqual(['/n: expected 1, got "1"']);
    expect(judge({ output: { n: true } }, output({ n: 1 })).passed).toBe(false);
    expect(judge({ output: { n: null } }, output({ n: null })).passed).toBe(true);
    expect(judge({ output: { n: null } }, output({})).reasons).toEqual(['/n: missing, expected null']);
    expect(judge({ output: null }, output(null)).passed).toBe(true);
    expect(judge({ output: null }, output({})).passed).toBe(false);
  });

  it('keys with "/" and "~" are escaped in reasons; inherited members never count', () => {
    expect(judge({ output: { 'a/b': { 'm~n': 1 } } }, output({ 'a/b': { 'm~n': 2 } })).reasons).toEqual(['/a~1b/m~0n: expected 1, got 2']);
    expect(judge({ output: JSON.parse('{"constructor": 1}') }, output({})).passed).toBe(false);
    expect(judge({ output: JSON.parse('{"__proto__": {}}') }, output({})).passed).toBe(false);
    expect(judge({ output: JSON.parse('{"__proto__": {"a": 1}}') }, output(JSON.parse('{"__proto__": {"a": 1}}'))).passed).toBe(true);
  });

  it('an output that breaks interface.output fails, with the schema problem, even when every clause holds', () => {
    const checkOutput = (o: unknown): Problem[] => ((o as { rows?: unknown }).rows === 3 ? [{ path: '$.extra', message: 'is not a known field' }] : []);
    const r = judge({ output: { rows: 3 } }, output({ ...PROFILE, extra: 1 }), checkOutput);
    expect(r).toEqual({
      passed: false,
      reasons: ["the output does not match the version's interface.output: $.extra is not a known field"],
      got: { output: { ...PROFILE, extra: 1 } },
    });
    // An empty expect: any valid output passes; an invalid one does not.
    expect(judge({}, output(PROFILE)).passed).toBe(true);
    expect(judge({}, output(PROFILE), checkOutput).passed).toBe(false);
    // A validator that throws is a failed case, not a crash.
    const throwing = () => {
      throw new Error('cycle');
    };
    expect(judge({}, output(PROFILE), throwing).reasons).toEqual(["the output does not match the version's interface.output: $ could not be validated: cycle"]);
  });

  it('reasons are capped', () => {
    const expected = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const r = judge({ output: expected }, output({}));
    expect(r.passed).toBe(false);
    expect(r.reasons).toHaveLength(MAX_REASONS + 1);
    expect(r.reasons.at(-1)).toBe('and more differences');
  });

  it('long values are shortened in reasons', () => {
    const r = judge({ output: { s: 'a' } }, output({ s: 'b'.repeat(500) }));
    expect(r.reasons[0]!.length).toBeLessThan(120);
    expect(r.reasons[0]).toMatch(/^\/s: expected "a", got "b+…$/);
  });
});

describe('paths: JSON Pointer → exact value', () => {
  const doc = { rows: [10, 20, { deep: [null] }], 'a/b': { 'm~n': 5, '': 'empty key' }, '': 0, n: { x: 1, y: [1, 2] } };

  it('exact deep equality at each pointer', () => {
    expect(judge({ paths: { '/rows/0': 10, '/rows/2/deep/0': null, '/n': { y: [1, 2], x: 1 } } }, output(doc)).passed).toBe(true);
    expect(judge({ paths: { '/n': { x: 1 } } }, output(doc)).reasons).toEqual(['/n: expected {"x":1}, got {"x":1,"y":[1,2]}']);
    expect(judge({ paths: { '/n/y': [1] } }, output(doc)).passed).toBe(false);
    expect(judge({ paths: { '/rows/1': 21 } }, output(doc)).reasons).toEqual(['/rows/1: expected 21, got 20']);
    expect(judge({ paths: { '/rows/1': '20' } }, output(doc)).passed).toBe(false);
  });

  it('~0 and ~1 escapes, empty keys, the whole output', () => {
    expect(judge({ paths: { '/a~1b/m~0n': 5 } }, output(doc)).passed).toBe(true);
    expect(judge({ paths: { '/a~1b/': 'empty key' } }, output(doc)).passed).toBe(true);
    expect(judge({ paths: { '/': 0 } }, output(doc)).passed).toBe(true);
    expect(judge({ paths: { '': { a: 1 } } }, output({ a: 1 })).passed).toBe(true);
    expect(judge({ paths: { '': { a: 1 } } }, output({ a: 1, b: 2 })).reasons).toEqual(['the output: expected {"a":1}, got {"a":1,"b":2}']);
    // "~01" is "~1" (decode ~1 first, then ~0), not "/".
    expect(resolvePointer({ '~1': 'tilde-one', '/': 'slash' }, (parsePointer('/~01') as { segments: string[] }).segments)).toEqual({
      found: true,
      value: 'tilde-one',
    });
  });

  it('a missing path fails: absent keys, indexes out of range, "-", leading zeros, into scalars', () => {
    for (const pointer of ['/nope', '/rows/3', '/rows/-', '/rows/01', '/rows/+1', '/rows/1/x', '/a~1b/m~0n/z', '/a/b', '/__proto__', '/n/toString']) {
      const r = judge({ paths: { [pointer]: 1 } }, output(doc));
      expect(r.passed, pointer).toBe(false);
      expect(r.reasons).toEqual([`${pointer}: missing, expected 1`]);
    }
    expect(judge({ paths: { '/x': null } }, output({})).reasons).toEqual(['/x: missing, expected null']);
  });

  it('output and paths together: both must hold', () => {
    expect(judge({ output: { rows: [10, 20, {}] }, paths: { '/n/x': 1 } }, output(doc)).passed).toBe(true);
    expect(judge({ output: { rows: [10, 20, {}] }, paths: { '/n/x': 2 } }, output(doc)).reasons).toEqual(['/n/x: expected 2, got 1']);
  });

  it('a hand-built case with a bad pointer is a failed case, with the reason', () => {
    expect(judge({ paths: { rows: 3 } }, output({ rows: 3 })).reasons[0]).toMatch(/^"rows" is not a JSON Pointer/);
  });
});

describe('error expectations', () => {
  it('passes on exactly that code', () => {
    expect(judge({ error: 'empty_input' }, { kind: 'error', code: 'empty_input', message: 'no rows' })).toEqual({
      passed: true,
      reasons: [],
      got: { error: 'empty_input' },
    });
  });

  it('another code, or an output, fails', () => {
    expect(judge({ error: 'empty_input' }, { kind: 'error', code: 'malformed_csv' }).reasons).toEqual(['expected error empty_input, got error malformed_csv']);
    expect(judge({ error: 'empty_input' }, output({ rows: 0 }))).toEqual({
      passed: false,
      reasons: ['expected error empty_input, got an output'],
      got: { output: { rows: 0 } },
    });
  });

  it('with the declared codes given: an undeclared code never passes', () => {
    expect(judge({ error: 'empty_input' }, { kind: 'error', code: 'empty_input' }, valid, ['empty_input', 'malformed_csv']).passed).toBe(true);
    expect(judge({ error: 'empty_input' }, { kind: 'error', code: 'empty_input' }, valid, ['malformed_csv']).reasons).toEqual([
      'got error empty_input as expected, but the version does not declare it in interface.errors',
    ]);
    expect(judge({ error: 'empty_input' }, { kind: 'error', code: 'empty_input' }, valid, []).passed).toBe(false);
  });

  it('an error where an output is expected fails, with the code and the message', () => {
    expect(judge({ output: { rows: 3 } }, { kind: 'error', code: 'empty_input', message: 'the CSV has no rows' })).toEqual({
      passed: false,
      reasons: ['expected an output, got error empty_input (the CSV has no rows)'],
      got: { error: 'empty_input' },
    });
    expect(judge({}, { kind: 'error', code: 'x' }).reasons).toEqual(['expected an output, got error x']);
  });
});

describe('failures never pass', () => {
  const cases: Array<[Extract<CaseRunResult, { kind: 'failure' }>, string]> = [
    [{ kind: 'failure', code: 'timeout', message: 'the agent did not answer within 10 s' }, 'the agent timed out'],
    [{ kind: 'failure', code: 'agent_error', message: 'the tool failed unexpectedly' }, 'the agent failed: the tool failed unexpectedly'],
    [{ kind: 'failure', code: 'runtime_unavailable', message: 'connection refused' }, 'the agent could not be run: connection refused'],
    [{ kind: 'failure', code: 'cancelled', message: 'cancelled' }, 'the run was cancelled'],
  ];
  it.each(cases)('%o', (result, reason) => {
    for (const expectation of [{}, { output: {} }, { error: 'empty_input' }, { paths: { '/a': 1 } }]) {
      expect(judge(expectation, result)).toEqual({ passed: false, reasons: [reason], got: { error: result.code } });
    }
  });
});

describe('suiteStatus: passed / total ≥ threshold, exactly', () => {
  it('at the boundary', () => {
    expect(suiteStatus(4, 5, '0.8')).toBe('passed');
    expect(suiteStatus(3, 5, '0.8')).toBe('failed');
    expect(suiteStatus(3, 4, '0.76')).toBe('failed');
    expect(suiteStatus(3, 4, '0.75')).toBe('passed');
    expect(suiteStatus(3, 4, '0.750001')).toBe('failed');
    expect(suiteStatus(1, 3, '0.333333')).toBe('passed');
    expect(suiteStatus(1, 3, '0.333334')).toBe('failed');
    expect(suiteStatus(2, 3, '0.666667')).toBe('failed');
    expect(suiteStatus(7, 10, '0.7')).toBe('passed'); // 0.7 is not a float here: 7/10 ≥ 7/10
    expect(suiteStatus(199, 200, '0.995')).toBe('passed');
    expect(suiteStatus(198, 200, '0.995')).toBe('failed');
  });

  it('"0" and "1"', () => {
    expect(suiteStatus(0, 5, '0')).toBe('passed');
    expect(suiteStatus(5, 5, '1')).toBe('passed');
    expect(suiteStatus(4, 5, '1')).toBe('failed');
    expect(suiteStatus(5, 5, '1.000000')).toBe('passed');
  });

  it('takes the exact Rate of a validated suite too', () => {
    expect(suiteStatus(4, 5, { num: 8n, den: 10n })).toBe('passed');
    expect(suiteStatus(3, 4, { num: 76n, den: 100n })).toBe('failed');
  });

  it('no case, no pass; counts and thresholds that are not counts or thresholds throw', () => {
    expect(suiteStatus(0, 0, '0')).toBe('failed');
    expect(() => suiteStatus(6, 5, '0.8')).toThrow(RangeError);
    expect(() => suiteStatus(-1, 5, '0.8')).toThrow(RangeError);
    expect(() => suiteStatus(1.5, 5, '0.8')).toThrow(RangeError);
    expect(() => suiteStatus(1, 5, '1.2')).toThrow(RangeError);
    expect(() => suiteStatus(1, 5, '0.8.1')).toThrow(RangeError);
  });

  it('agrees with exact rational comparison for every count up to 60 and random thresholds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 1_000_000 }), (total, p, micros) => {
        const passed = Math.min(p, total);
        const threshold = micros === 1_000_000 ? '1' : `0.${String(micros).padStart(6, '0')}`;
        const expected = BigInt(passed) * 1_000_000n >= BigInt(micros) * BigInt(total) ? 'passed' : 'failed';
        expect(suiteStatus(passed, total, threshold)).toBe(expected);
      }),
    );
  });
});

describe('deepEqual and isDeepSubset', () => {
  it('deepEqual ignores key order, not types or lengths', () => {
    expect(deepEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(deepEqual([1], [1, 2])).toBe(false);
    expect(deepEqual([], {})).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
    expect(deepEqual('1', 1)).toBe(false);
  });
  it('isDeepSubset', () => {
    expect(isDeepSubset({ a: [{}] }, { a: [{ b: 1 }], c: 2 })).toBe(true);
    expect(isDeepSubset({ a: [{}] }, { a: [] })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: a case built from an output's own values always passes against that output.
// ---------------------------------------------------------------------------------------------

/** A deep subset of `value`, some object keys dropped as `pick` says (arrays keep their length). */
function subsetOf(value: unknown, pick: () => boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => subsetOf(v, pick));
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (pick() ? [[k, subsetOf(v, pick)]] : [])));
  }
  return value;
}

/** Every place in `value`, as segments. */
function places(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => places(v, [...at, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) places(v, [...at, k], out);
  return out;
}

function valueAt(value: unknown, segments: ReadonlyArray<string | number>): unknown {
  let v: unknown = value;
  for (const s of segments) v = (v as Record<string | number, unknown>)[s];
  return v;
}

describe('property', () => {
  it("a case built from an output's own values passes against it", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown),
        fc.infiniteStream(fc.boolean()),
        fc.array(fc.nat(), { maxLength: 8 }),
        (out, coins, choices) => {
          const it = coins[Symbol.iterator]();
          const expectedOutput = subsetOf(out, () => it.next().value as boolean);
          const all = places(out);
          const paths = Object.fromEntries(choices.map((n) => all[n % all.length]!).map((segments) => [formatPointer(segments), valueAt(out, segments)]));
          const r = judge({ output: expectedOutput, paths }, output(structuredClone(out)));
          expect(r.reasons).toEqual([]);
          expect(r.passed).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changing one leaf the case checks makes it fail', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { minKeys: 1 }), fc.nat(), (out, n) => {
        const keys = Object.keys(out);
        const key = keys[n % keys.length]!;
        const changed = Object.fromEntries(Object.entries(out).map(([k, v]) => [k, k === key ? v + 1 : v]));
        expect(judge({ output: out }, output(changed)).passed).toBe(false);
        expect(judge({ paths: { [formatPointer([key])]: out[key] } }, output(changed)).passed).toBe(false);
      }),
    );
  });
});
