/**
 * Evaluation suites, the format (shared/core/evals/suite.ts, spec/evals.md §1): every problem with its JSON path,
 * a good suite, hostile documents, fixture handles.
 */
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../shared/core/errors.js';
import {
  caseFixtures,
  fixtureHandle,
  isFixtureName,
  parseFixtureHandle,
  parseSuite,
  suiteFixtures,
  validateSuite,
  type SuiteResult,
} from '../../shared/core/evals/index.js';

type Doc = Record<string, any>;

function good(): Doc {
  return {
    capability: 'data.profile',
    version: 3,
    pass_threshold: '0.8',
    description: 'CSV profiles',
    cases: [
      { id: 'three-columns', input: { csv: 'a,b,c\n1,2,3\n' }, expect: { output: { columns: [{}, {}, {}] } } },
      { id: 'empty', input: { csv: '' }, expect: { error: 'empty_input' } },
      { id: 'big-file', input: { file: 'holon://evals/data.profile/big.csv' }, expect: { paths: { '/rows': 10000 } }, timeout_s: 30 },
    ],
  };
}

function check(mutate: (d: Doc) => void): SuiteResult {
  const d = good();
  mutate(d);
  return validateSuite(d);
}

const problemsOf = (r: SuiteResult): Problem[] => (r.ok ? [] : r.problems);

/** Invalid, with a problem at exactly `path` whose message contains `words` (when given). */
function expectProblem(r: SuiteResult, path: string, words?: string | RegExp): void {
  expect(r.ok, 'expected problems').toBe(false);
  const at = problemsOf(r).filter((p) => p.path === path);
  expect(at, `no problem at ${path}; got ${JSON.stringify(problemsOf(r))}`).not.toHaveLength(0);
  if (words !== undefined) {
    const ok = at.some((p) => (typeof words === 'string' ? p.message.includes(words) : words.test(p.message)));
    expect(ok, `no message matching ${String(words)} at ${path}; got ${JSON.stringify(at)}`).toBe(true);
  }
}

function expectValid(r: SuiteResult): void {
  expect(problemsOf(r)).toEqual([]);
  expect(r.ok).toBe(true);
}

describe('a good suite', () => {
  it('validates, with the threshold kept exact and every case as written', () => {
    const r = validateSuite(good());
    expectValid(r);
    if (!r.ok) return;
    expect(r.suite).toEqual({
      capability: 'data.profile',
      version: 3,
      pass_threshold: '0.8',
      threshold: { num: 8n, den: 10n },
      description: 'CSV profiles',
      cases: good().cases,
    });
  });

  it("reads spec/evals.md's example as YAML (with its own capability)", () => {
    const r = parseSuite(`capability: data.csv-profile
version: 3                 # bump when cases change; results name the suite version
pass_threshold: "0.8"      # share of cases a version must pass
cases:
  - id: three-columns
    input: { csv: "a,b,c\\n1,2,3\\n" }
    expect:
      output: { columns: 3 }           # deep subset match on the output
  - id: empty
    input: { csv: "" }
    expect:
      error: empty_input               # a declared error code
  - id: big-file
    input: { file: holon://evals/data.csv-profile/big.csv }
    expect:
      paths: { "/rows": 10000 }        # JSON Pointer → exact value
    timeout_s: 30
`);
    expectValid(r);
    if (!r.ok) return;
    expect(r.suite.cases.map((c) => c.id)).toEqual(['three-columns', 'empty', 'big-file']);
    expect(r.suite.cases[1]!.expect).toEqual({ error: 'empty_input' });
    expect(suiteFixtures(r.suite)).toEqual(['big.csv']);
  });

  it('accepts thresholds from "0" to "1" with up to 6 decimals, exactly', () => {
    for (const [t, num, den] of [
      ['0', 0n, 1n],
      ['1', 1n, 1n],
      ['1.000000', 1_000_000n, 1_000_000n],
      ['0.333333', 333_333n, 1_000_000n],
      ['0.76', 76n, 100n],
    ] as const) {
      const r = check((d) => (d.pass_threshold = t));
      expectValid(r);
      if (r.ok) expect(r.suite.threshold).toEqual({ num, den });
    }
  });

  it('takes any JSON value as input (null included), an empty expect, an expected null output, no description', () => {
    const r = check((d) => {
      delete d.description;
      d.cases = [
        { id: 'a', input: null, expect: {} },
        { id: 'b', input: [1, 'two', { three: 3 }], expect: { output: null } },
        { id: 'c', input: 'text', expect: { output: { x: 1 }, paths: { '': { x: 1 }, '/x': 1, '/a~0b~1c': null, '/0': 0 } } },
      ];
    });
    expectValid(r);
    if (!r.ok) return;
    expect(r.suite.description).toBeUndefined();
    expect(Object.hasOwn(r.suite.cases[1]!.expect, 'output')).toBe(true);
    expect(r.suite.cases[1]!.expect.output).toBeNull();
    expect(Object.hasOwn(r.suite.cases[0]!.expect, 'output')).toBe(false);
  });
});

describe('every problem, with its JSON path', () => {
  it('lists them all, sorted by path', () => {
    const r = validateSuite({
      capability: 'Data Profile',
      version: 0,
      pass_threshold: 0.8,
      extra: 1,
      cases: [
        { id: 'Bad Id', input: {}, expect: { output: {}, error: 'empty_input' }, timeout_s: 301, foo: 1 },
        { id: 'ok', expect: { paths: { rows: 1, '/a~2': 1, '/ok': 1 }, bar: 1 } },
        { id: 'ok', input: 1, expect: { error: 'timeout' } },
        'nope',
      ],
    });
    expect(r.ok).toBe(false);
    expect(problemsOf(r).map((p) => p.path)).toEqual([
      '$.capability',
      '$.cases[0].expect',
      '$.cases[0].foo',
      '$.cases[0].id',
      '$.cases[0].timeout_s',
      '$.cases[1].expect.bar',
      '$.cases[1].expect.paths.rows',
      '$.cases[1].expect.paths["/a~2"]',
      '$.cases[1].input',
      '$.cases[2].expect.error',
      '$.cases[2].id',
      '$.cases[3]',
      '$.extra',
      '$.pass_threshold',
      '$.version',
    ]);
    expectProblem(r, '$.cases[0].expect', 'must not combine error with output or paths: an error has no output');
    expectProblem(r, '$.cases[1].expect.paths.rows', 'must start with "/"');
    expectProblem(r, '$.cases[1].expect.paths["/a~2"]', '"~" must be followed by 0');
    expectProblem(r, '$.cases[2].id', '"ok" is already the id of $.cases[1]');
    expectProblem(r, '$.cases[2].expect.error', "gateway's own error codes");
    expectProblem(r, '$.pass_threshold', 'quoted decimal string such as "0.8"');
  });

  it('requires capability, version, pass_threshold and cases', () => {
    const r = validateSuite({});
    expect(problemsOf(r)).toEqual([
      { path: '$.capability', message: 'is required' },
      { path: '$.cases', message: 'is required' },
      { path: '$.pass_threshold', message: 'is required' },
      { path: '$.version', message: 'is required' },
    ]);
  });

  it('a document that is not a mapping', () => {
    for (const doc of [null, [], 'suite', 42, undefined]) expectProblem(validateSuite(doc), '$');
  });

  it('capability: the manifest syntax', () => {
    expectValid(check((d) => ((d.capability = 'text'), (d.cases[2].input.file = 'holon://evals/text/big.csv'))));
    expectValid(check((d) => ((d.capability = 'data.csv-profile'), (d.cases[2].input.file = 'holon://evals/data.csv-profile/big.csv'))));
    expectProblem(
      check((d) => (d.capability = 'Data.Profile')),
      '$.capability',
      'capability class',
    );
    expectProblem(
      check((d) => (d.capability = 'data..profile')),
      '$.capability',
    );
    expectProblem(
      check((d) => (d.capability = 'a.'.repeat(70) + 'b')),
      '$.capability',
      'at most 128',
    );
    expectProblem(
      check((d) => (d.capability = 7)),
      '$.capability',
      'must be a string',
    );
  });

  it('version: a whole number from 1', () => {
    expectProblem(
      check((d) => (d.version = '3')),
      '$.version',
      'whole number',
    );
    expectProblem(
      check((d) => (d.version = 1.5)),
      '$.version',
      'whole number',
    );
    expectProblem(
      check((d) => (d.version = -1)),
      '$.version',
      'at least 1',
    );
    expectProblem(
      check((d) => (d.version = 2 ** 31)),
      '$.version',
      'at most',
    );
  });

  it('pass_threshold: a decimal string from "0" to "1", at most 6 decimals', () => {
    for (const t of ['1.1', '2', '0.1234567', '-0.1', '80%', '.8', '0.8 ', '', 'one', null, true]) {
      expectProblem(
        check((d) => (d.pass_threshold = t)),
        '$.pass_threshold',
      );
    }
    expectProblem(
      check((d) => (d.pass_threshold = '1.5')),
      '$.pass_threshold',
      'at most 1',
    );
    expectProblem(
      check((d) => (d.pass_threshold = '0.1234567')),
      '$.pass_threshold',
      'at most 6 decimals',
    );
  });

  it('description: a string', () => {
    expectProblem(
      check((d) => (d.description = ['x'])),
      '$.description',
      'must be a string',
    );
    expectProblem(
      check((d) => (d.description = 'x'.repeat(4001))),
      '$.description',
      'at most 4000',
    );
  });

  it('cases: a list of 1 to 200', () => {
    expectProblem(
      check((d) => (d.cases = [])),
      '$.cases',
      'at least 1',
    );
    expectProblem(
      check((d) => (d.cases = { a: 1 })),
      '$.cases',
      'list',
    );
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, input: i, expect: {} }));
    expectValid(check((d) => (d.cases = many(200))));
    expect(problemsOf(check((d) => (d.cases = many(201))))).toEqual([{ path: '$.cases', message: 'must have at most 200 cases, not 201' }]);
  });

  it('a case: id pattern, input and expect required, timeout_s 1..300, unknown fields', () => {
    for (const id of ['', 'A', '-a', '_a', 'a b', 'a.b', 'a/b', 'é', 'a'.repeat(65)]) {
      expectProblem(
        check((d) => (d.cases[0].id = id)),
        '$.cases[0].id',
        'must be 1 to 64 characters',
      );
    }
    expectValid(check((d) => (d.cases[0].id = `0${'a'.repeat(63)}`)));
    expectValid(check((d) => (d.cases[0].id = 'a_b-c')));
    expectProblem(
      check((d) => (d.cases[0].id = 3)),
      '$.cases[0].id',
      'must be a string',
    );
    expectProblem(
      check((d) => delete d.cases[0].id),
      '$.cases[0].id',
      'is required',
    );
    expectProblem(
      check((d) => delete d.cases[0].input),
      '$.cases[0].input',
      'is required',
    );
    expectProblem(
      check((d) => delete d.cases[0].expect),
      '$.cases[0].expect',
      'is required',
    );
    expectProblem(
      check((d) => (d.cases[0].expect = 'ok')),
      '$.cases[0].expect',
      'mapping',
    );
    for (const t of [0, 301, 1.5, '30']) {
      expectProblem(
        check((d) => (d.cases[2].timeout_s = t)),
        '$.cases[2].timeout_s',
      );
    }
    expectValid(check((d) => (d.cases[2].timeout_s = 1)));
    expectValid(check((d) => (d.cases[2].timeout_s = 300)));
    expectProblem(
      check((d) => (d.cases[1].timeoutS = 3)),
      '$.cases[1].timeoutS',
      'is not a known field',
    );
  });

  it('expect: error alone, a declarable code; paths a mapping of JSON Pointers', () => {
    expectProblem(
      check((d) => (d.cases[1].expect = { error: 'empty_input', paths: { '/rows': 0 } })),
      '$.cases[1].expect',
      'must not combine error',
    );
    expectProblem(
      check((d) => (d.cases[1].expect = { error: 'empty_input', output: null })),
      '$.cases[1].expect',
      'must not combine error',
    );
    expectProblem(
      check((d) => (d.cases[1].expect.error = 'Empty-Input')),
      '$.cases[1].expect.error',
      'snake_case',
    );
    expectProblem(
      check((d) => (d.cases[1].expect.error = 'e'.repeat(65))),
      '$.cases[1].expect.error',
      'at most 64',
    );
    expectProblem(
      check((d) => (d.cases[1].expect.error = 42)),
      '$.cases[1].expect.error',
      'a string',
    );
    for (const reserved of ['invalid_output', 'agent_error', 'cancelled', 'file_not_found']) {
      expectProblem(
        check((d) => (d.cases[1].expect.error = reserved)),
        '$.cases[1].expect.error',
        "gateway's own",
      );
    }
    expectProblem(
      check((d) => (d.cases[2].expect.paths = ['/rows'])),
      '$.cases[2].expect.paths',
      'mapping of JSON Pointers',
    );
    expectProblem(
      check((d) => (d.cases[2].expect.paths = {})),
      '$.cases[2].expect.paths',
      'at least one',
    );
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`/p${i}`, i]));
    expectProblem(
      check((d) => (d.cases[2].expect.paths = many)),
      '$.cases[2].expect.paths',
      'at most 100',
    );
    expectProblem(
      check((d) => (d.cases[2].expect.output_contains = 1)),
      '$.cases[2].expect.output_contains',
      'is not a known field',
    );
  });

  it('JSON Pointers: a leading "/" (or ""), "~" only as ~0 or ~1', () => {
    const bad = ['rows', 'rows/0', '#/rows', '/a~2', '/a~', '~1', '/a/~b', '/' + 'x'.repeat(1024)];
    for (const pointer of bad) {
      const r = check((d) => (d.cases[2].expect.paths = { [pointer]: 1 }));
      expect(r.ok, pointer).toBe(false);
      expect(problemsOf(r)).toHaveLength(1);
      expect(problemsOf(r)[0]!.path.startsWith('$.cases[2].expect.paths')).toBe(true);
    }
    for (const pointer of ['', '/', '/rows', '/rows/0', '/a~0b', '/a~1b', '/~01', '//', '/-', '/ spaces ']) {
      expectValid(check((d) => (d.cases[2].expect.paths = { [pointer]: 1 })));
    }
  });
});

describe('hostile documents', () => {
  it('deep nesting is one problem, found without recursion', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const r = check((d) => (d.cases[0].input = deep));
    expect(problemsOf(r)).toHaveLength(1);
    expect(problemsOf(r)[0]!.message).toMatch(/nests deeper than 64 levels/);
    expect(problemsOf(r)[0]!.path.startsWith('$.cases[0].input.d.d')).toBe(true);

    let list: unknown = [];
    for (let i = 0; i < 100_000; i++) list = [list];
    expect(problemsOf(check((d) => (d.cases[1].expect.output = list)))[0]!.message).toMatch(/nests deeper/);
  });

  it('a cyclic document is refused, not walked forever', () => {
    const input: Doc = { a: 1 };
    input.self = input;
    const r = check((d) => (d.cases[0].input = input));
    expect(problemsOf(r)).toHaveLength(1);
    expect(problemsOf(r)[0]!.message).toMatch(/nests deeper/);
  });

  it('huge lists: too many cases is one problem; a huge input is too large', () => {
    const cases = Array.from({ length: 100_000 }, (_, i) => ({ id: `c${i}`, input: i, expect: {} }));
    const started = performance.now();
    expect(problemsOf(check((d) => (d.cases = cases)))).toEqual([{ path: '$.cases', message: 'must have at most 200 cases, not 100000' }]);
    expectProblem(
      check((d) => (d.cases[0].input = { rows: Array.from({ length: 200_000 }, (_, i) => i) })),
      '$.cases[0].input',
      'larger than 64 KB',
    );
    expectProblem(
      check((d) => (d.cases[0].expect.output = { big: 'x'.repeat(70_000) })),
      '$.cases[0].expect',
      'larger than 64 KB',
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    // At the limit exactly: accepted.
    expectValid(check((d) => (d.cases[0].input = 'x'.repeat(64 * 1024 - 2))));
    expectProblem(
      check((d) => (d.cases[0].input = 'x'.repeat(64 * 1024 - 1))),
      '$.cases[0].input',
    );
  });

  it('NUL characters in ids, values and field names; lone surrogates', () => {
    const nulId = check((d) => (d.cases[0].id = 'a\u0000b'));
    expectProblem(nulId, '$.cases[0].id', 'NUL');
    expectProblem(nulId, '$.cases[0].id', 'must be 1 to 64 characters');
    expectProblem(
      check((d) => (d.cases[0].input = { csv: 'a\u0000' })),
      '$.cases[0].input.csv',
      'NUL',
    );
    expectProblem(
      check((d) => (d.cases[0].input = { 'bad\u0000key': 1 })),
      '$.cases[0].input["bad\\u0000key"]',
      'the field name contains a NUL character',
    );
    expectProblem(
      check((d) => (d.cases[2].expect.paths = { '/rows\u0000': 1 })),
      '$.cases[2].expect.paths["/rows\\u0000"]',
      'NUL',
    );
    expectProblem(
      check((d) => (d.cases[0].input = { s: 'x\ud800' })),
      '$.cases[0].input.s',
      'lone UTF-16 surrogate',
    );
    // Many bad values are counted, not all listed.
    const many = check((d) => (d.cases[0].input = Array.from({ length: 500 }, () => '\u0000')));
    expect(problemsOf(many).length).toBeLessThanOrEqual(52);
    expectProblem(many, '$', /and \d+ more values/);
  });

  it("numbers JSON cannot carry (YAML's .inf and .nan) and values that are not JSON", () => {
    const r = parseSuite('capability: a.b\nversion: 1\npass_threshold: "1"\ncases:\n  - id: x\n    input: { n: .inf }\n    expect: { paths: { /n: .nan } }\n');
    expectProblem(r, '$.cases[0].input.n', 'finite number');
    expectProblem(r, '$.cases[0].expect.paths["/n"]', 'finite number');
    expectProblem(
      check((d) => (d.cases[0].input = { n: 10n })),
      '$.cases[0].input.n',
      'not a JSON value',
    );
  });

  it('YAML that does not parse, duplicate keys, a document too large', () => {
    expectProblem(parseSuite('capability: [a\n'), '$', 'not valid YAML');
    expectProblem(parseSuite('capability: a.b\ncapability: a.c\n'), '$', 'not valid YAML');
    expectProblem(parseSuite(`capability: a.b\ndescription: "${'x'.repeat(600 * 1024)}"\n`), '$', 'larger than');
  });

  it('duplicate ids, each named once after the first', () => {
    const r = check((d) => {
      d.cases = ['a', 'b', 'a', 'a', 'b'].map((id) => ({ id, input: 1, expect: {} }));
    });
    expect(problemsOf(r)).toEqual([
      { path: '$.cases[2].id', message: '"a" is already the id of $.cases[0]: ids are unique within a suite' },
      { path: '$.cases[3].id', message: '"a" is already the id of $.cases[0]: ids are unique within a suite' },
      { path: '$.cases[4].id', message: '"b" is already the id of $.cases[1]: ids are unique within a suite' },
    ]);
  });

  it('field names like __proto__ are data, not prototypes', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}');
    const r = check((d) => {
      d.cases[0].input = input;
      d.cases[2].expect.paths = JSON.parse('{"/__proto__/polluted": true}');
    });
    expectValid(r);
    expect(({} as Doc).polluted).toBeUndefined();
    const unknown = validateSuite(JSON.parse('{"capability":"a.b","version":1,"pass_threshold":"1","cases":[{"id":"x","input":1,"expect":{}}],"__proto__":1}'));
    expectProblem(unknown, '$.__proto__', 'is not a known field');
  });
});

describe('fixtures', () => {
  it('handles anywhere in an input, inside text too, collected once in order', () => {
    const r = check((d) => {
      d.cases[0].input = {
        pages: ['holon://evals/data.profile/a.pdf', { nested: 'compare holon://evals/data.profile/b.csv with holon://evals/data.profile/a.pdf' }],
      };
    });
    expectValid(r);
    if (!r.ok) return;
    expect(caseFixtures(r.suite.cases[0]!)).toEqual(['a.pdf', 'b.csv']);
    expect(suiteFixtures(r.suite)).toEqual(['a.pdf', 'b.csv', 'big.csv']);
  });

  it("must name the suite's own capability", () => {
    expectProblem(
      check((d) => (d.cases[0].input = { file: 'holon://evals/data.other/a.csv' })),
      '$.cases[0].input.file',
      'only use its own fixtures, holon://evals/data.profile/<name>',
    );
    expectProblem(
      check((d) => (d.cases[0].input = ['holon://evals/a.csv'])),
      '$.cases[0].input[0]',
      'own fixtures',
    );
  });

  it('must name a plain file: no "/", no "..", not hidden, not empty', () => {
    for (const name of ['../secret', '..', '.', '.env', 'sub/a.csv', 'a/../b', '', 'a..b', 'x'.repeat(129)]) {
      expectProblem(
        check((d) => (d.cases[0].input = { file: `holon://evals/data.profile/${name}` })),
        '$.cases[0].input.file',
        'plain file name',
      );
    }
    expectProblem(
      check((d) => (d.cases[0].input = { file: 'holon://evals/data.profile/' })),
      '$.cases[0].input.file',
    );
    // The handle ends where its characters end: "a.csv?x" names "a.csv".
    const r = check((d) => (d.cases[0].input = { file: 'holon://evals/data.profile/a.csv?download=1' }));
    expectValid(r);
    if (r.ok) expect(caseFixtures(r.suite.cases[0]!)).toEqual(['a.csv']);
  });

  it('upload handles and upper-case handles are refused', () => {
    expectProblem(
      check((d) => (d.cases[0].input = { file: 'holon://files/f_0123456789abcdefghijkl' })),
      '$.cases[0].input.file',
      'cannot use an uploaded file',
    );
    expectProblem(
      check((d) => (d.cases[0].input = { file: 'HOLON://EVALS/data.profile/a.csv' })),
      '$.cases[0].input.file',
      'lower case',
    );
    expectProblem(
      check((d) => (d.cases[0].input = { file: 'holon://Evals/data.profile/a.csv' })),
      '$.cases[0].input.file',
      'lower case',
    );
  });

  it('at most 20 distinct fixtures in one case', () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `holon://evals/data.profile/f${i}.csv`);
    expectValid(check((d) => (d.cases[0].input = names(20))));
    expectValid(check((d) => (d.cases[0].input = [...names(20), ...names(20)])));
    expectProblem(
      check((d) => (d.cases[0].input = names(21))),
      '$.cases[0].input',
      'at most 20',
    );
  });

  it('handles in field names and in expect are not fixtures', () => {
    const r = check((d) => {
      d.cases[0].input = { 'holon://evals/other.cap/x': 1 };
      d.cases[0].expect = { output: { file: 'holon://evals/other.cap/y' } };
    });
    expectValid(r);
    if (r.ok) expect(caseFixtures(r.suite.cases[0]!)).toEqual([]);
  });

  it('helpers: fixtureHandle, parseFixtureHandle, isFixtureName', () => {
    expect(fixtureHandle('data.profile', 'big.csv')).toBe('holon://evals/data.profile/big.csv');
    expect(parseFixtureHandle('holon://evals/data.profile/big.csv')).toEqual({ capability: 'data.profile', name: 'big.csv' });
    for (const h of ['holon://evals/data.profile/../x', 'holon://evals/data.profile', 'holon://files/f_x', 'holon://evals/Data/x', 'holon://evals/a.b/c/d']) {
      expect(parseFixtureHandle(h), h).toBeNull();
    }
    expect(isFixtureName('big.csv')).toBe(true);
    expect(isFixtureName('A_b-1.tar.gz')).toBe(true);
    for (const n of ['..', '.x', 'a/b', 'a\\b', 'a..b', '', 'a b']) expect(isFixtureName(n), n).toBe(false);
  });
});
