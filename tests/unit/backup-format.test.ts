/**
 * The pure parts of backups (shared/backup/format.ts, order.ts, columns.ts): what a header and a body line must be,
 * the schema-version refusal naming the migrations that differ, the trailer catching a changed, cut or recounted
 * file, the foreign-key order of tables, and how each column type is read and written back.
 */
import { describe, expect, test } from 'vitest';
import { insertBatchRows, readExpression, writeExpression } from '../../shared/backup/columns.js';
import { BackupError } from '../../shared/backup/errors.js';
import {
  checkTrailer,
  encodeLine,
  type EndLine,
  FORMAT_VERSION,
  type HeaderLine,
  LineDigest,
  parseBodyLine,
  parseHeader,
  schemaMismatch,
} from '../../shared/backup/format.js';
import { tablesInDependencyOrder } from '../../shared/backup/order.js';

const header: HeaderLine = {
  type: 'header',
  format: FORMAT_VERSION,
  schema: ['001_ledger', '002_calls'],
  created_at: '2026-12-01T00:00:00.000Z',
  database: 'postgres',
  server_version: '16.4',
  tables: [{ name: 'accounts', columns: [{ name: 'handle', type: 'text' }], rows: 1 }],
  sequences: ['journal_entries_id_seq'],
};

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(BackupError);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('header', () => {
  test('a header as written is read back', () => {
    expect(parseHeader(encodeLine(header).trimEnd())).toEqual(header);
  });
  test('anything else is refused, saying what it is', () => {
    expect(refusal(() => parseHeader(undefined))).toMatch(/empty/);
    expect(refusal(() => parseHeader('PGDMP'))).toMatch(/not JSON/);
    expect(refusal(() => parseHeader(encodeLine({ type: 'end', counts: {}, sequences: 0, lines: 0, sha256: '' })))).toMatch(/not a backup header/);
    expect(refusal(() => parseHeader(JSON.stringify({ ...header, format: 2 })))).toMatch(/format 2 is not the format this holon reads \(1\)/);
    expect(refusal(() => parseHeader(JSON.stringify({ ...header, tables: [{ name: 'x' }] })))).toMatch(/malformed/);
  });
});

describe('body lines', () => {
  test('rows, sequences and the trailer parse; a damaged line is named by its number', () => {
    const row = { type: 'row' as const, table: 'accounts', row: { handle: 'alice', n: 3, ok: true, gone: null } };
    expect(parseBodyLine(JSON.stringify(row), 2)).toEqual(row);
    expect(parseBodyLine('{"type":"sequence","name":"s","last_value":"42","is_called":true}', 3)).toMatchObject({ last_value: '42' });
    expect(refusal(() => parseBodyLine('{"type":"row","table":"accounts","row":{"handle":"al', 7))).toBe('line 7 is not valid JSON: the file is damaged');
    expect(refusal(() => parseBodyLine('{"type":"row","table":"accounts","row":{"x":{"nested":1}}}', 8))).toMatch(/^line 8 is not a row/);
    // a number that JSON cannot carry exactly is never a cell: money travels as text
    expect(refusal(() => parseBodyLine('{"type":"row","table":"t","row":{"amount":12345678901234567890}}', 9))).toMatch(/^line 9/);
    expect(refusal(() => parseBodyLine('{"type":"sequence","name":"s","last_value":"4.2","is_called":true}', 10))).toMatch(/^line 10/);
  });
});

describe('schema version', () => {
  test('the same migrations in the same order restore', () => {
    expect(schemaMismatch(['001_a', '002_b'], ['001_a', '002_b'])).toBeNull();
  });
  test('an older backup, a newer one and a reordered one are refused, naming the migrations', () => {
    expect(schemaMismatch(['001_a'], ['001_a', '002_b'])).toBe(
      "the backup's schema version is 001_a (1 migrations), this holon's is 002_b (2); not in the backup: 002_b. Restore with the holon version that made the backup",
    );
    expect(schemaMismatch(['001_a', '002_b', '003_c'], ['001_a', '002_b'])).toMatch(/unknown to this holon: 003_c/);
    expect(schemaMismatch(['002_b', '001_a'], ['001_a', '002_b'])).toMatch(/the same migrations in another order/);
  });
});

describe('trailer', () => {
  const lines = [encodeLine(header), encodeLine({ type: 'row', table: 'accounts', row: { handle: 'alice' } })];
  const digestOf = (ls: string[]) => {
    const d = new LineDigest();
    for (const l of ls) d.add(l);
    return d;
  };
  const end: EndLine = { type: 'end', counts: { accounts: 1 }, sequences: 0, lines: 2, sha256: digestOf(lines).hex() };

  test('a whole file passes', () => {
    expect(() => checkTrailer(end, { counts: { accounts: 1 }, sequences: 0, digest: digestOf(lines) })).not.toThrow();
  });
  test('a changed line, a missing line, other counts are each refused', () => {
    const changed = [lines[0]!, lines[1]!.replace('alice', 'mallory')];
    expect(refusal(() => checkTrailer(end, { counts: { accounts: 1 }, sequences: 0, digest: digestOf(changed) }))).toMatch(/checksum does not match/);
    expect(refusal(() => checkTrailer(end, { counts: {}, sequences: 0, digest: digestOf(lines.slice(0, 1)) }))).toMatch(/2 lines before it but the file has 1/);
    expect(refusal(() => checkTrailer({ ...end, counts: { accounts: 2 } }, { counts: { accounts: 1 }, sequences: 0, digest: digestOf(lines) }))).toBe(
      'table accounts: the trailer counts 2 rows but the file has 1',
    );
    expect(refusal(() => checkTrailer({ ...end, sequences: 1 }, { counts: { accounts: 1 }, sequences: 0, digest: digestOf(lines) }))).toMatch(/1 sequences/);
  });
});

describe('table order', () => {
  test('every table after the ones it references; self-references ignored; ties alphabetical', () => {
    const order = tablesInDependencyOrder(
      ['receipts', 'journal_lines', 'journal_entries', 'accounts', 'mandates', 'blocked_emails'],
      [
        { table: 'journal_lines', references: 'journal_entries' },
        { table: 'journal_lines', references: 'accounts' },
        { table: 'receipts', references: 'journal_entries' },
        { table: 'mandates', references: 'accounts' },
        { table: 'mandates', references: 'mandates' },
      ],
    );
    expect(order).toEqual(['accounts', 'blocked_emails', 'journal_entries', 'journal_lines', 'mandates', 'receipts']);
  });
  test('a cycle between tables is refused, naming them', () => {
    expect(
      refusal(() =>
        tablesInDependencyOrder(
          ['a', 'b', 'c'],
          [
            { table: 'a', references: 'b' },
            { table: 'b', references: 'a' },
          ],
        ),
      ),
    ).toMatch(/cycle \(a, b\)/);
  });
});

describe('columns', () => {
  test('bytea as base64, booleans and small integers as JSON, everything else as its exact text', () => {
    expect(readExpression({ name: 'data', type: 'bytea' }, 't')).toBe(`replace(encode("t"."data", 'base64'), chr(10), '')`);
    expect(readExpression({ name: 'ok', type: 'boolean' }, 't')).toBe('"t"."ok"');
    expect(readExpression({ name: 'amount', type: 'bigint' }, 't')).toBe('"t"."amount"::text');
    expect(readExpression({ name: 'at', type: 'timestamp with time zone' }, 't')).toBe('"t"."at"::text');
    expect(writeExpression({ name: 'data', type: 'bytea' })).toBe(`decode(?, 'base64')`);
    expect(writeExpression({ name: 'doc', type: 'jsonb' })).toBe('?::jsonb');
  });
  test('a batch stays under the bound-parameter limit and small for bytea', () => {
    expect(insertBatchRows(Array.from({ length: 200 }, (_, i) => ({ name: `c${i}`, type: 'text' })))).toBe(150);
    expect(insertBatchRows([{ name: 'data', type: 'bytea' }])).toBe(16);
  });
});
