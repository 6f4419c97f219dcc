/**
 * CSV (RFC 4180): fields separated by commas, records ended by CRLF; a field holding a comma, a double quote, CR or
 * LF is put in double quotes, its double quotes doubled. Pure.
 *
 * CSV injection: a spreadsheet reads a cell starting with = + - @ (or a tab or CR) as a formula. A text cell that
 * someone outside the gateway could have written (a mandate id, an agent ref as asked for, an error code) is
 * prefixed with a single quote when it starts with one of them (OWASP "CSV Injection"); numbers the gateway wrote
 * itself (ids, timestamps, amounts as decimal strings, counts, the header) are `plain` cells, written as they are.
 */

/** `text`: may be prefixed against formula injection; `plain`: the gateway's own, written as is; null: an empty field. */
export type CsvCell = { text: string } | { plain: string } | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** A cell as written: the injection prefix, then RFC 4180 quoting. */
export function csvField(cell: CsvCell): string {
  if (cell === null) return '';
  const raw = 'text' in cell ? (FORMULA_START.test(cell.text) ? `'${cell.text}` : cell.text) : cell.plain;
  return NEEDS_QUOTES.test(raw) ? `"${raw.replace(/"/g, '""')}"` : raw;
}

/** One record, CRLF included. */
export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}

/** The header record: names are the gateway's own, never prefixed. */
export function csvHeader(names: readonly string[]): string {
  return csvRecord(names.map((name) => ({ plain: name })));
}
