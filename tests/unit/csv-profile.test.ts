// holon-labs/csv-profile (agents/csv-profile/tool.mjs): the profiling logic, imported directly.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../shared/core/manifest/index.js';

interface Column {
  name: string;
  type: 'integer' | 'number' | 'boolean' | 'date' | 'string' | 'empty';
  nulls: number;
  distinct: number;
  min?: number | string;
  max?: number | string;
}
interface Profile {
  rows: number;
  columns: Column[];
}
interface CsvInput {
  csv: string;
  delimiter?: string;
  header?: boolean;
}
interface CsvToolModule {
  default: (input: CsvInput, ctx?: { signal?: AbortSignal }) => Promise<{ output: Profile; units?: number; quote?: string }>;
  parseCsv: (text: string, delimiter?: string) => Array<{ fields: string[]; line: number }>;
  MAX_COLUMNS: number;
}

const TOOL_URL = new URL('../../agents/csv-profile/tool.mjs', import.meta.url);
const MANIFEST_URL = new URL('../../agents/csv-profile/holon.yaml', import.meta.url);
const tool = (await import(TOOL_URL.href)) as CsvToolModule;

async function profile(csv: string, options: Omit<CsvInput, 'csv'> = {}): Promise<Profile> {
  const result = await tool.default({ csv, ...options });
  return result.output;
}

async function column(csv: string, options: Omit<CsvInput, 'csv'> = {}): Promise<Column> {
  const p = await profile(csv, options);
  expect(p.columns).toHaveLength(1);
  return p.columns[0]!;
}

/** The declared error code `run` rejects with. */
async function errorCode(input: CsvInput): Promise<string> {
  try {
    await tool.default(input);
  } catch (e) {
    return String((e as { code?: unknown }).code);
  }
  throw new Error('the tool did not fail');
}

describe('the result shape', () => {
  it('returns {output} (per_run: no units, no quote)', async () => {
    const result = await tool.default({ csv: 'a\n1\n' });
    expect(Object.keys(result)).toEqual(['output']);
    expect(result.output).toEqual({ rows: 1, columns: [{ name: 'a', type: 'integer', nulls: 0, distinct: 1, min: 1, max: 1 }] });
  });
});

describe('column types', () => {
  it.each([
    ['integer', 'x\n1\n-2\n+3\n007\n', { type: 'integer', min: -2, max: 7 }],
    ['number', 'x\n1.5\n2\n-.5\n1e3\n', { type: 'number', min: -0.5, max: 1000 }],
    ['boolean', 'x\ntrue\nFALSE\nTrue\n', { type: 'boolean' }],
    ['date', 'x\n2024-02-29\n1999-12-31\n2000-01-01\n', { type: 'date', min: '1999-12-31', max: '2024-02-29' }],
    ['string', 'x\nbanana\napple\ncherry\n', { type: 'string', min: 'apple', max: 'cherry' }],
    ['empty', 'x,y\n,1\n,2\n', { type: 'empty' }],
  ])('%s', async (_, csv, expected) => {
    const p = await profile(csv);
    expect(p.columns[0]).toMatchObject(expected);
  });

  it('an empty column has no min or max, a boolean column neither', async () => {
    const p = await profile('e,b\n,true\n"",false\n');
    expect(p.columns).toEqual([
      { name: 'e', type: 'empty', nulls: 2, distinct: 0 },
      { name: 'b', type: 'boolean', nulls: 0, distinct: 2 },
    ]);
  });

  it('integers mixed with decimals make a number column; anything else makes a string column', async () => {
    expect((await column('x\n1\n2.5\n')).type).toBe('number');
    expect((await column('x\n1\nabc\n')).type).toBe('string');
    expect((await column('x\ntrue\n1\n')).type).toBe('string');
    expect((await column('x\n2024-01-01\nyesterday\n')).type).toBe('string');
    expect((await column('x\n2024-01-01\n1\n')).type).toBe('string');
  });

  it('a date is a real YYYY-MM-DD day', async () => {
    expect((await column('x\n2023-02-29\n')).type).toBe('string'); // not a leap year
    expect((await column('x\n1900-02-29\n')).type).toBe('string'); // century, not divisible by 400
    expect((await column('x\n2000-02-29\n')).type).toBe('date');
    expect((await column('x\n2024-04-31\n')).type).toBe('string');
    expect((await column('x\n2024-13-01\n')).type).toBe('string');
    expect((await column('x\n2024-1-01\n')).type).toBe('string');
    expect((await column('x\n2024-01-01T10:00:00Z\n')).type).toBe('string');
  });

  it('integers beyond 2^53 - 1 are numbers; non-finite and odd numerals are strings', async () => {
    expect(await column('x\n9007199254740991\n')).toMatchObject({ type: 'integer', max: 9007199254740991 });
    expect((await column('x\n9007199254740993\n')).type).toBe('number');
    expect((await column('x\n1e400\n')).type).toBe('string');
    expect((await column('x\nNaN\n')).type).toBe('string');
    expect((await column('x\nInfinity\n')).type).toBe('string');
    expect((await column('x\n0x1F\n')).type).toBe('string');
    expect((await column('x\n1,5\n', { delimiter: ';' })).type).toBe('string');
  });

  it('cells are not trimmed', async () => {
    expect(await column('x\n 1\n2\n')).toMatchObject({ type: 'string', min: ' 1', max: '2' });
  });
});

describe('nulls, distinct, min and max', () => {
  it('nulls counts empty cells, quoted or not; distinct counts distinct non-empty texts exactly', async () => {
    const c = await column('x\n1\n\n01\n""\n1\n'); // rows: 1, 01, "", 1 (the blank line is skipped)
    expect(c).toEqual({ name: 'x', type: 'integer', nulls: 1, distinct: 2, min: 1, max: 1 });
  });

  it('numbers compare as numbers, not as text', async () => {
    expect(await column('x\n9\n10\n-100\n')).toMatchObject({ min: -100, max: 10 });
  });

  it('-0 is reported as 0', async () => {
    const c = await column('x\n-0\n5\n');
    expect(Object.is(c.min, 0)).toBe(true);
  });

  it('strings compare by Unicode code point, not by UTF-16 unit', async () => {
    // U+E000 < U+1F600, although the UTF-16 surrogate 0xD83D sorts before 0xE000.
    expect(await column('x\n\u{1F600}\n\uE000\n')).toMatchObject({ type: 'string', min: '\uE000', max: '\u{1F600}' });
    expect(await column('x\nb\nab\na\n')).toMatchObject({ min: 'a', max: 'b' });
    expect(await column('x\nZ\na\n')).toMatchObject({ min: 'Z', max: 'a' });
  });

  it('counts rows without the header', async () => {
    expect((await profile('a,b\n1,2\n3,4\n5,6')).rows).toBe(3);
    expect((await profile('1,2\n3,4\n5,6', { header: false })).rows).toBe(3);
  });
});

describe('RFC 4180 reading', () => {
  it('quoted fields: "" escapes, delimiters and line breaks inside', async () => {
    const p = await profile('a,b\n"x, ""y""","line1\r\nline2"\n"",plain\n');
    expect(p.rows).toBe(2);
    expect(p.columns[0]).toMatchObject({ nulls: 1, distinct: 1, min: 'x, "y"', max: 'x, "y"' });
    expect(p.columns[1]).toMatchObject({ distinct: 2, min: 'line1\r\nline2', max: 'plain' });
  });

  it('parses records exactly', () => {
    expect(tool.parseCsv('a,"b\n""c"""\r\n,\r"d",e')).toEqual([
      { fields: ['a', 'b\n"c"'], line: 1 },
      { fields: ['', ''], line: 3 },
      { fields: ['d', 'e'], line: 4 },
    ]);
  });

  it('CRLF, LF and CR line endings, with or without a final line break', async () => {
    for (const csv of ['a,b\r\n1,2\r\n3,4\r\n', 'a,b\n1,2\n3,4', 'a,b\r1,2\r3,4\r', 'a,b\n1,2\r\n3,4']) {
      const p = await profile(csv);
      expect(p.rows, JSON.stringify(csv)).toBe(2);
      expect(p.columns.map((c) => c.max)).toEqual([3, 4]);
    }
  });

  it('skips blank lines and a byte-order mark', async () => {
    const p = await profile('\uFEFFa,b\n\n1,2\r\n\r\n3,4\n\n');
    expect(p.columns.map((c) => c.name)).toEqual(['a', 'b']);
    expect(p.rows).toBe(2);
  });

  it('a trailing delimiter makes a last, empty field', async () => {
    const p = await profile('a,b\n1,\n2,\n');
    expect(p.columns[1]).toEqual({ name: 'b', type: 'empty', nulls: 2, distinct: 0 });
  });

  it('a quote inside an unquoted field is an ordinary character', async () => {
    expect(await column('size\n5" screen\n')).toMatchObject({ type: 'string', min: '5" screen' });
  });

  it('names empty header cells column_<n> and keeps duplicate names', async () => {
    const p = await profile(',x,x\n1,2,3\n');
    expect(p.columns.map((c) => c.name)).toEqual(['column_1', 'x', 'x']);
  });
});

describe('delimiters', () => {
  it.each([
    [';', 'a;b\n1,5;x\n'],
    ['\t', 'a\tb\n1,5\tx\n'],
    ['|', 'a|b\n1,5|x\n'],
  ])('%j', async (delimiter, csv) => {
    const p = await profile(csv, { delimiter });
    expect(p.columns).toEqual([
      { name: 'a', type: 'string', nulls: 0, distinct: 1, min: '1,5', max: '1,5' },
      { name: 'b', type: 'string', nulls: 0, distinct: 1, min: 'x', max: 'x' },
    ]);
  });

  it('the default delimiter is the comma', async () => {
    expect((await profile('a;b,c\n1;2,3\n')).columns.map((c) => c.name)).toEqual(['a;b', 'c']);
  });

  it('a quoted field may hold the delimiter', async () => {
    expect(await column('a\n"x|y"\n', { delimiter: '|' })).toMatchObject({ min: 'x|y' });
  });
});

describe('header: false', () => {
  it('names the columns column_1…, and every record is a row', async () => {
    const p = await profile('name,1\nother,2\n', { header: false });
    expect(p).toEqual({
      rows: 2,
      columns: [
        { name: 'column_1', type: 'string', nulls: 0, distinct: 2, min: 'name', max: 'other' },
        { name: 'column_2', type: 'integer', nulls: 0, distinct: 2, min: 1, max: 2 },
      ],
    });
  });
});

describe('declared errors', () => {
  it('empty_input: nothing, blank lines, or only a header', async () => {
    expect(await errorCode({ csv: '' })).toBe('empty_input');
    expect(await errorCode({ csv: '\n\r\n\n' })).toBe('empty_input');
    expect(await errorCode({ csv: '\uFEFF' })).toBe('empty_input');
    expect(await errorCode({ csv: 'a,b\n' })).toBe('empty_input');
    expect(await errorCode({ csv: '', header: false })).toBe('empty_input');
  });

  it('malformed_csv: an unterminated quote', async () => {
    expect(await errorCode({ csv: 'a,b\n1,"open\n2,3\n' })).toBe('malformed_csv');
    expect(await errorCode({ csv: '"a' })).toBe('malformed_csv');
  });

  it('malformed_csv: a row with more or fewer fields than the header', async () => {
    expect(await errorCode({ csv: 'a,b\n1,2,3\n' })).toBe('malformed_csv');
    expect(await errorCode({ csv: 'a,b\n1,2\n3\n' })).toBe('malformed_csv');
    expect(await errorCode({ csv: '1,2\n3\n', header: false })).toBe('malformed_csv');
  });

  it('malformed_csv: text after a closing quote', async () => {
    expect(await errorCode({ csv: 'a\n"x"y\n' })).toBe('malformed_csv');
  });

  it('says where, without echoing cells', async () => {
    const error = await tool.default({ csv: 'a,b\n1,2\nsecret,2,3\n' }).catch((e: Error) => e);
    expect((error as Error).message).toBe('the row on line 3 has 3 fields; the header has 2');
    await expect(tool.default({ csv: 'a\n1\n"open' })).rejects.toThrow('the quoted field opened on line 3 is never closed');
  });

  it('too_many_columns above MAX_COLUMNS', async () => {
    const wide = `${','.repeat(tool.MAX_COLUMNS)}\n`;
    expect(await errorCode({ csv: wide + wide })).toBe('too_many_columns');
    const widest = `${','.repeat(tool.MAX_COLUMNS - 1)}\n`;
    expect((await profile(widest + widest)).columns).toHaveLength(tool.MAX_COLUMNS);
  });
});

describe('cancellation', () => {
  it('stops when the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(tool.default({ csv: 'a\n1\n' }, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('the manifest', () => {
  const parsed = parseManifest(readFileSync(MANIFEST_URL, 'utf8'), 'yaml');

  it('is valid', () => {
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
  });

  it('its examples are exactly what the tool returns', async () => {
    if (!parsed.ok) throw new Error('invalid manifest');
    const examples = parsed.manifest.interface.examples ?? [];
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const example of examples) {
      const input = example.input as CsvInput;
      if (example.error !== undefined) {
        expect(await errorCode(input), JSON.stringify(input)).toBe(example.error);
      } else {
        expect((await tool.default(input)).output, JSON.stringify(input)).toEqual(example.output);
      }
    }
  });
});

// ------------------------------------------------------------------------------------ property tests

type Cell = { kind: 'int'; value: number | null } | { kind: 'str'; value: string };

const DELIMITER = fc.constantFrom(',', ';', '\t', '|');
/** Strings rich in what CSV must quote, plus astral and private-use characters for the ordering. */
const TEXT = fc.oneof(
  fc.string({ unit: fc.constantFrom(',', ';', '\t', '|', '"', '\n', '\r', 'a', 'B', ' ', '1', 'é', '\u{1F600}', '\uE000'), maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

const TABLE = fc
  .record({
    kinds: fc.array(fc.constantFrom<'int' | 'str'>('int', 'str'), { minLength: 1, maxLength: 5 }),
    rowCount: fc.integer({ min: 1, max: 25 }),
    delimiter: DELIMITER,
    header: fc.boolean(),
    eol: fc.constantFrom('\n', '\r\n'),
    finalEol: fc.boolean(),
    quoteAll: fc.boolean(),
  })
  .chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      rows: fc.array(
        fc.tuple(
          ...shape.kinds.map(
            (kind): fc.Arbitrary<Cell> =>
              kind === 'int'
                ? fc.option(fc.integer({ min: -1e12, max: 1e12 }), { freq: 5 }).map((value) => ({ kind, value }))
                : TEXT.map((value) => ({ kind, value })),
          ),
        ),
        { minLength: shape.rowCount, maxLength: shape.rowCount },
      ),
    }),
  );

function cellText(cell: Cell): string {
  return cell.kind === 'int' ? (cell.value === null ? '' : String(cell.value)) : cell.value;
}

/** RFC 4180 writing: quote when needed (or always), and never write a record that would be a blank line. */
function writeCsv(records: string[][], delimiter: string, eol: string, finalEol: boolean, quoteAll: boolean): string {
  const field = (v: string, alone: boolean) => {
    const needs = quoteAll || v.includes(delimiter) || v.includes('"') || v.includes('\n') || v.includes('\r') || v.startsWith('\uFEFF') || (alone && v === '');
    return needs ? `"${v.replaceAll('"', '""')}"` : v;
  };
  const lines = records.map((r) => r.map((v) => field(v, r.length === 1)).join(delimiter));
  return lines.join(eol) + (finalEol ? eol : '');
}

/** Code point order, implemented independently of the tool. */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

describe('properties', () => {
  it('random tables of integers and strings: rows, nulls, distinct, integer min/max', async () => {
    await fc.assert(
      fc.asyncProperty(TABLE, async ({ shape, rows }) => {
        const names = shape.kinds.map((_, i) => `c${i}`);
        const body = rows.map((r) => r.map(cellText));
        const csv = writeCsv(shape.header ? [names, ...body] : body, shape.delimiter, shape.eol, shape.finalEol, shape.quoteAll);
        const p = await profile(csv, { delimiter: shape.delimiter, header: shape.header });

        expect(p.rows).toBe(rows.length);
        expect(p.columns).toHaveLength(shape.kinds.length);
        shape.kinds.forEach((kind, c) => {
          const col = p.columns[c]!;
          const cells = body.map((r) => r[c]!);
          const nonNull = cells.filter((v) => v !== '');
          expect(col.name).toBe(shape.header ? names[c] : `column_${c + 1}`);
          expect(col.nulls + nonNull.length).toBe(p.rows);
          expect(col.distinct).toBe(new Set(nonNull).size);
          expect(col.distinct).toBeLessThanOrEqual(nonNull.length);
          if (nonNull.length === 0) {
            expect(col).toEqual({ name: col.name, type: 'empty', nulls: p.rows, distinct: 0 });
            return;
          }
          if (kind === 'int') {
            const values = nonNull.map(Number);
            expect(col.type).toBe('integer');
            expect(col.min).toBe(Math.min(...values));
            expect(col.max).toBe(Math.max(...values));
          } else if (col.type === 'string') {
            const sorted = [...nonNull].sort(byCodePoint);
            expect(col.min).toBe(sorted[0]);
            expect(col.max).toBe(sorted[sorted.length - 1]);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('reading what was written with proper quoting gives the records back', () => {
    fc.assert(
      fc.property(TABLE, ({ shape, rows }) => {
        const records = rows.map((r) => r.map(cellText));
        const csv = writeCsv(records, shape.delimiter, shape.eol, shape.finalEol, shape.quoteAll);
        expect(tool.parseCsv(csv, shape.delimiter).map((r) => r.fields)).toEqual(records);
      }),
      { numRuns: 300 },
    );
  });
});
