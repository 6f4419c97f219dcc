// holon-labs/csv-profile: profiles a CSV table (RFC 4180), column by column. Deterministic, no I/O.
// The rules (types, nulls, distinct, min/max, blank lines, …) are stated in holon.yaml's description.
import { toolError } from '../tool-kit.mjs';

export const MAX_COLUMNS = 10_000;
const DELIMITERS = new Set([',', ';', '\t', '|']);
const CHECK_EVERY = 2048; // records between two looks at the abort signal

const INTEGER = /^[+-]?[0-9]+$/;
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const BOOLEAN = /^(?:true|false)$/i;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

export default async function run(input, { signal } = {}) {
  if (typeof input?.csv !== 'string') throw new TypeError('input.csv must be a string');
  const delimiter = input.delimiter ?? ',';
  if (!DELIMITERS.has(delimiter)) throw new TypeError('input.delimiter must be one of , ; tab |');
  return { output: profileCsv(input.csv, { delimiter, header: input.header ?? true, signal }) };
}

/** The profile of `text`: `{rows, columns}`. Throws toolError('empty_input' | 'malformed_csv' | 'too_many_columns'). */
export function profileCsv(text, { delimiter = ',', header = true, signal } = {}) {
  const records = parseCsv(text, delimiter, signal);
  if (records.length === 0) throw toolError('empty_input', 'the CSV has no rows');
  const first = records[0];
  const width = first.fields.length;
  if (width > MAX_COLUMNS) {
    throw toolError('too_many_columns', `the first row has ${width} fields; at most ${MAX_COLUMNS} columns are profiled`);
  }
  const names = header ? first.fields.map((name, i) => (name === '' ? `column_${i + 1}` : name)) : first.fields.map((_, i) => `column_${i + 1}`);
  const data = header ? records.slice(1) : records;
  if (data.length === 0) throw toolError('empty_input', 'the CSV has a header but no data rows');

  const columns = names.map(() => newColumn());
  for (let r = 0; r < data.length; r++) {
    const { fields, line } = data[r];
    if (fields.length !== width) {
      throw toolError(
        'malformed_csv',
        `the row on line ${line} has ${fields.length} field${fields.length === 1 ? '' : 's'}; ` + `${header ? 'the header has' : 'the first row has'} ${width}`,
      );
    }
    if (r % CHECK_EVERY === 0) signal?.throwIfAborted();
    for (let c = 0; c < width; c++) observe(columns[c], fields[c]);
  }
  return { rows: data.length, columns: names.map((name, c) => summarize(name, columns[c])) };
}

/**
 * RFC 4180 records of `text`, each `{fields, line}` (the line the record starts on, from 1).
 * Records end at CRLF, LF or CR; a leading byte-order mark is dropped; blank lines (nothing between two
 * line breaks) are skipped. A field starting with `"` is quoted: `""` inside it is one `"`, delimiters and
 * line breaks inside it are kept, and the closing quote must be followed by the delimiter, a line break or
 * the end. A `"` inside an unquoted field is kept as is.
 */
export function parseCsv(text, delimiter = ',', signal) {
  const records = [];
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const lineBreak = () => {
    i += text[i] === '\r' && text[i + 1] === '\n' ? 2 : 1;
    line += 1;
  };

  while (i < n) {
    if (text[i] === '\n' || text[i] === '\r') {
      lineBreak(); // a blank line
      continue;
    }
    if (records.length % CHECK_EVERY === 0) signal?.throwIfAborted();
    const start = line;
    const fields = [];
    for (;;) {
      if (text[i] === '"') {
        const opened = line;
        let value = '';
        i += 1;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) throw toolError('malformed_csv', `the quoted field opened on line ${opened} is never closed`);
          value += text.slice(i, q);
          line += countLineBreaks(text, i, q);
          if (text[q + 1] === '"') {
            value += '"';
            i = q + 2;
          } else {
            i = q + 1;
            break;
          }
        }
        fields.push(value);
        if (i >= n) break;
        if (text[i] === delimiter) {
          i += 1;
          continue;
        }
        if (text[i] === '\n' || text[i] === '\r') {
          lineBreak();
          break;
        }
        throw toolError('malformed_csv', `line ${line}: a closing quote must be followed by the delimiter or the end of the line`);
      } else {
        let j = i;
        while (j < n) {
          const c = text[j];
          if (c === delimiter || c === '\n' || c === '\r') break;
          j += 1;
        }
        fields.push(text.slice(i, j));
        i = j;
        if (i >= n) break;
        if (text[i] === delimiter) {
          i += 1;
          continue;
        }
        lineBreak();
        break;
      }
    }
    records.push({ fields, line: start });
  }
  return records;
}

function countLineBreaks(text, from, to) {
  let count = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c === 10 || (c === 13 && text.charCodeAt(k + 1) !== 10)) count += 1;
  }
  return count;
}

function newColumn() {
  return {
    nulls: 0,
    values: new Set(),
    integer: true,
    number: true,
    boolean: true,
    date: true,
    minNumber: Infinity,
    maxNumber: -Infinity,
    minText: undefined,
    maxText: undefined,
  };
}

function observe(col, cell) {
  if (cell === '') {
    col.nulls += 1;
    return;
  }
  if (col.values.has(cell)) return; // a repeated value changes neither type nor min/max
  col.values.add(cell);
  if (col.minText === undefined || compareCodePoints(cell, col.minText) < 0) col.minText = cell;
  if (col.maxText === undefined || compareCodePoints(cell, col.maxText) > 0) col.maxText = cell;
  if (col.integer && !(INTEGER.test(cell) && Number.isSafeInteger(Number(cell)))) col.integer = false;
  if (col.number) {
    const value = NUMBER.test(cell) ? Number(cell) : NaN;
    if (Number.isFinite(value)) {
      if (value < col.minNumber) col.minNumber = value;
      if (value > col.maxNumber) col.maxNumber = value;
    } else {
      col.number = false;
    }
  }
  if (col.boolean && !BOOLEAN.test(cell)) col.boolean = false;
  if (col.date && !isDate(cell)) col.date = false;
}

function summarize(name, col) {
  const out = { name, type: 'empty', nulls: col.nulls, distinct: col.values.size };
  if (col.values.size === 0) return out;
  if (col.integer || col.number) {
    out.type = col.integer ? 'integer' : 'number';
    out.min = col.minNumber + 0; // -0 → 0
    out.max = col.maxNumber + 0;
  } else if (col.boolean) {
    out.type = 'boolean';
  } else {
    out.type = col.date ? 'date' : 'string';
    out.min = col.minText;
    out.max = col.maxText;
  }
  return out;
}

/** YYYY-MM-DD, a real day of the proleptic Gregorian calendar. */
function isDate(cell) {
  const m = DATE.exec(cell);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

/** Order of Unicode code points (= UTF-8 byte order), not of UTF-16 code units. */
export function compareCodePoints(a, b) {
  const len = Math.min(a.length, b.length);
  for (let k = 0; k < len; k++) {
    let x = a.charCodeAt(k);
    let y = b.charCodeAt(k);
    if (x === y) continue;
    // Surrogates (U+D800–U+DFFF) encode code points above U+FFFF: move them above U+E000–U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
