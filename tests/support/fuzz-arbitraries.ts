/**
 * The fuzz test's generators: JSON values of every type, odd strings (lone UTF-16 surrogates, NUL, huge),
 * raw JSON text (big numbers, 10,000 levels of nesting, malformed text), valid documents mutated field by field,
 * content types and header values. A body is carried as its exact text plus what it contains (`Traits`), from
 * which the test knows the answer it must get.
 */
import fc from 'fast-check';

/** JSON text inserted as is: numbers no JS number holds, nesting too deep to build as objects. */
export class Raw {
  constructor(
    readonly text: string,
    readonly traits: Partial<Traits> = {},
  ) {}
}

export interface Traits {
  /** A NUL character in a key or a string, at any depth. */
  nul: boolean;
  /** A lone UTF-16 surrogate (`\ud800` with no partner) in a key or a string. */
  surrogate: boolean;
  /** Deepest nesting of arrays and objects (the top level is 1). */
  depth: number;
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringTraits(s: string): Traits {
  return { nul: s.includes('\u0000'), surrogate: LONE.test(s), depth: 0 };
}

function merge(a: Traits, b: Partial<Traits>): Traits {
  return { nul: a.nul || Boolean(b.nul), surrogate: a.surrogate || Boolean(b.surrogate), depth: Math.max(a.depth, b.depth ?? 0) };
}

/** What a value (with Raw parts) contains. */
export function traitsOf(v: unknown): Traits {
  if (v instanceof Raw) return merge({ nul: false, surrogate: false, depth: 0 }, v.traits);
  if (typeof v === 'string') return stringTraits(v);
  if (Array.isArray(v)) {
    let t: Traits = { nul: false, surrogate: false, depth: 1 };
    for (const x of v) {
      const c = traitsOf(x);
      t = merge(t, { ...c, depth: c.depth + 1 });
    }
    return t;
  }
  if (v && typeof v === 'object') {
    let t: Traits = { nul: false, surrogate: false, depth: 1 };
    for (const [k, x] of Object.entries(v)) {
      const c = traitsOf(x);
      t = merge(merge(t, stringTraits(k)), { ...c, depth: c.depth + 1 });
    }
    return t;
  }
  return { nul: false, surrogate: false, depth: 0 };
}

/** JSON text of a value; strings through JSON.stringify, so a lone surrogate is written `\ud800` and NUL `\u0000`. */
function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

// ---- strings -------------------------------------------------------------------------------------------------

export const LONE_SURROGATES = ['\ud800', '\udfff', '\udbff', 'a\udc00b', '\udc00\ud800', '\ud800\ud800', 'ok\ud83d'];
export const NULS = ['\u0000', 'a\u0000b', '\u0000\u0000'];
const ODD = [
  '',
  ' ',
  '\ufeff',
  '\u2028\u2029',
  '😀',
  'é',
  '\u202e',
  '%00',
  '../../etc/passwd',
  '$',
  '.',
  '*',
  '**',
  '@',
  'a'.repeat(301),
  "'; drop table holds; --",
  '\\',
  '"',
  'null',
  '0',
  '-1',
  '1e309',
  '\u007f',
  '\r\n',
  '\t',
  'ﬀ',
  'İ',
  '\u0085',
];

/** Any string, biased to the ones that break things. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD) },
  { weight: 2, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
  { weight: 2, arbitrary: fc.constantFrom(...NULS) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...LONE_SURROGATES, ...NULS, ...ODD), fc.string({ maxLength: 4 }))
      .map(([a, b, c]) => a + b + c),
  },
);

const BIG_NUMBERS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '-0',
  '0.0000000000000000000000001',
  '1E+2',
  '9007199254740993',
  '4.9e-325',
  '1.7976931348623157e309',
  '0.1e1',
];

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...BIG_NUMBERS).map((n) => new Raw(n)),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map((n) => new Raw(String(n))),
  oddString,
);

/** Any JSON value: every type, a few levels deep, odd keys (`__proto__`, NUL, lone surrogates) included. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc
    .array(fc.tuple(fc.oneof(oddString, fc.constantFrom('__proto__', 'constructor', 'toString', 'text', 'input')), tie('value')), { maxLength: 4 })
    .map((entries) => Object.fromEntries(entries)),
})).value;

// ---- nesting and sizes ---------------------------------------------------------------------------------------

/** `depth` levels of arrays, objects or both around `leafText` (the leaf's own traits are given). */
export function nested(depth: number, style: 'array' | 'object' | 'mixed', leafText: string, leafTraits: Partial<Traits> = {}): Raw {
  const open = style === 'array' ? '[' : style === 'object' ? '{"a":' : '{"a":[';
  const close = style === 'array' ? ']' : style === 'object' ? '}' : ']}';
  const per = style === 'mixed' ? 2 : 1;
  const n = Math.max(1, Math.floor(depth / per));
  return new Raw(open.repeat(n) + leafText + close.repeat(n), { ...leafTraits, depth: n * per + (leafTraits.depth ?? 0) });
}

const LEAVES: ReadonlyArray<[string, Partial<Traits>]> = [
  ['1', {}],
  ['"x"', {}],
  ['null', {}],
  ['"\\u0000"', { nul: true }],
  ['"a\\u0000"', { nul: true }],
  ['"\\ud800"', { surrogate: true }],
  ['{"\\u0000":1}', { nul: true, depth: 1 }],
  ['{"\\udfff":1}', { surrogate: true, depth: 1 }],
];

/** Deep values: 10,000 levels for a few, and NUL or a lone surrogate just below the depth where checks stop. */
export const deepValue: fc.Arbitrary<Raw> = fc
  .tuple(
    fc.constantFrom(150, 199, 201, 205, 260, 1000, 3000, 10_000),
    fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
    fc.constantFrom(...LEAVES),
  )
  .map(([depth, style, [text, traits]]) => nested(depth, style, text, traits));

/** A string of `n` characters (`x`, or a 2-byte `é` for odd byte counts). */
function bigString(n: number, char = 'x'): Raw {
  return new Raw(JSON.stringify(char.repeat(n)));
}

// ---- documents, mutated --------------------------------------------------------------------------------------

export type Path = ReadonlyArray<string | number>;
const DELETE = Symbol('delete');

/** Every path in a plain document (containers and leaves), for mutations. */
export function pathsOf(doc: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(doc)) doc.forEach((x, i) => out.push([...prefix, i], ...pathsOf(x, [...prefix, i])));
  else if (doc && typeof doc === 'object') for (const [k, x] of Object.entries(doc)) out.push([...prefix, k], ...pathsOf(x, [...prefix, k]));
  return out;
}

/** A copy of `doc` with `value` at `path` (DELETE removes it); missing containers are created. */
function setPath(doc: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const base: any = Array.isArray(doc) ? [...doc] : doc && typeof doc === 'object' && !(doc instanceof Raw) ? { ...doc } : {};
  const next = setPath(base[head as never], rest, value);
  if (next === DELETE) {
    if (Array.isArray(base)) base.splice(Number(head), 1);
    else delete base[head as string];
  } else base[head as never] = next;
  return base;
}

interface Mutation {
  path: Path;
  value: unknown;
}

/**
 * A template mutated at 0–3 paths: a field replaced (by a value from `pools` for that field, or any JSON value, a
 * deep value, an odd string), removed, or an unknown field added next to it.
 */
export function mutated(templates: readonly Record<string, unknown>[], pools: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  return fc.constantFrom(...templates).chain((template) => {
    const paths = pathsOf(template);
    const replace: fc.WeightedArbitrary<Mutation>[] = paths.length
      ? [
          {
            weight: 4,
            arbitrary: fc.constantFrom(...paths).chain((path) => {
              const pool = pools[path.join('.')] ?? pools[String(path[path.length - 1])];
              return fc
                .oneof(
                  ...(pool ? [{ weight: 4, arbitrary: pool }] : []),
                  { weight: 2, arbitrary: jsonValue },
                  { weight: 1, arbitrary: oddString },
                  { weight: 1, arbitrary: fc.constant(DELETE as unknown) },
                  { weight: 1, arbitrary: deepValue as fc.Arbitrary<unknown> },
                )
                .map((value) => ({ path, value }));
            }),
          },
        ]
      : [];
    const mutation: fc.Arbitrary<Mutation> = fc.oneof(...replace, {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom<Path>([], ...paths.filter((p) => isContainer(template, p))), oddString, jsonValue)
        .map(([at, key, value]) => ({ path: [...at, key], value })),
    });
    return fc.array(mutation, { maxLength: 3 }).map((ms) => ms.reduce<unknown>((doc, m) => setPath(doc, m.path, m.value), template));
  });
}

function isContainer(doc: unknown, path: Path): boolean {
  let v: any = doc;
  for (const p of path) v = v?.[p];
  return Boolean(v) && typeof v === 'object';
}

// ---- bodies --------------------------------------------------------------------------------------------------

export interface Body {
  text: string;
  traits: Traits;
  /** Not JSON at all. */
  malformed: boolean;
  /** The top level is an object (so problems can name paths in it). */
  object: boolean;
}

export function bodyOf(value: unknown): Body {
  return { text: toJson(value), traits: traitsOf(value), malformed: false, object: isPlainObject(value) };
}

const isPlainObject = (v: unknown) => Boolean(v) && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw);

/** Body text broken in the ways clients break it; kept only if it really is not JSON. */
export function malformedBody(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Body> {
  const breakers: fc.Arbitrary<(t: string) => string> = fc.oneof(
    fc.nat().map((n) => (t: string) => t.slice(0, n % Math.max(1, t.length))),
    fc.tuple(fc.nat(), fc.constantFrom('{', '}', '[', ']', ',', ':', '"', "'", '\\', 'x', '\u0000', ' ', 'NaN', '//', '/*')).map(
      ([n, s]) =>
        (t: string) =>
          t.slice(0, n % (t.length + 1)) + s + t.slice(n % (t.length + 1)),
    ),
    fc.constantFrom(
      (t: string) => `${t},`,
      (t: string) => t.replace(/"/g, "'"),
      (t: string) => `${t}${t}`,
      (t: string) => t.replace(/:/, '::'),
      (t: string) => t.replace(/\}$/, ',}'),
      (t: string) => t.replace(/"([a-z_]+)":/, '$1:'),
      (t: string) => t.replace(/"[^"]*"/, '"\\x41"'),
      (t: string) => t.replace(/"[^"]*"/, '"\\u12"'),
      (t: string) => t.replace(/"[^"]*"/, `"a${'\n'}b"`),
      () => 'undefined',
      () => 'NaN',
      () => '{"a":Infinity}',
      () => '[1,2',
      () => '{"a":1}}',
      () => 'mandate=demo%2Fsandbox&agent=examples%2Fecho-upper',
      () => '<xml/>',
    ),
  );
  return fc
    .tuple(valid, breakers)
    .map(([v, brk]) => brk(toJson(v)))
    .filter((text) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    })
    .map((text) => ({ text, traits: { nul: false, surrogate: false, depth: 0 }, malformed: true, object: false }));
}

/** A body of exactly `bytes` bytes: the template with a huge string in one of its fields (or a new one). */
export function sizedBody(template: Record<string, unknown>, at: Path, bytes: number): Body {
  const probe = toJson(setPath(template, at, new Raw('""')));
  const n = Math.max(0, bytes - Buffer.byteLength(probe));
  return bodyOf(setPath(template, at, bigString(n)));
}

// ---- headers -------------------------------------------------------------------------------------------------

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'];
export const WRONG_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'text/html',
  'application/octet-stream',
];

/** undefined: no Content-Type header at all. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...JSON_TYPES) },
  { weight: 2, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

export function isJsonType(ct: string | undefined): boolean {
  return ct !== undefined && /^application\/json\s*(;|$)/i.test(ct.trim());
}

/** Header values Node lets a client send: printable ASCII and latin-1, tabs, long ones. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'\t ~é\u00ff\u0080\u00a0ÿab-_'.split('')), minLength: 1, maxLength: 20 }),
  fc.integer({ min: 200, max: 4000 }).map((n) => 'k'.repeat(n)),
  fc.constantFrom('', ' ', 'respond-async', 'respond-async, wait=1', 'wait=0', 'handling=lenient', 'Bearer x', 'null'),
);

/** Optional extra headers for a REST request: Idempotency-Key, Prefer, an unknown one, a bogus delegation token. */
export const restHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'idempotency-key': fc.oneof(headerValue, fc.uuid()),
      prefer: headerValue,
      'x-fuzz': headerValue,
      'x-holon-delegation': headerValue,
      accept: fc.constantFrom('*/*', 'text/html', 'application/json', 'application/xml'),
      'accept-charset': headerValue,
    },
    { requiredKeys: [] },
  )
  .map((h) => {
    // A delegation token is rare: it changes the whole route.
    if (h['x-holon-delegation'] !== undefined && h['x-holon-delegation'].length % 5 !== 0) delete h['x-holon-delegation'];
    return h;
  });

// ---- ids in URLs ---------------------------------------------------------------------------------------------

/** Percent-encoding of the UTF-8 bytes (lone surrogates become U+FFFD, which is fine in a URL). */
const pct = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) => (/[A-Za-z0-9_-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`))
    .join('');

/** A path segment: ids that look right, odd strings, broken percent-encoding (CESU surrogates, bare `%`), NUL. */
export const idSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'ap_0000000000000000',
    'r_x',
    'x',
    'a'.repeat(400),
    '%ED%A0%80',
    '%F0%9F',
    '%FF',
    '%',
    '%zz',
    '%00',
    'a%00b',
    '%C0%80',
    '..',
    '%2e%2e',
    '%2F',
  ),
  oddString.filter((s) => s.length > 0).map(pct),
);
