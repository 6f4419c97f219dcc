/**
 * The pure pieces of reconciling a month: RFC 3339 bounds (shared/core/timestamps.ts) and CSV records with the
 * formula guard (shared/core/csv.ts).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { csvField, csvHeader, csvRecord } from '../../shared/core/csv.js';
import { instantOf, parseTimestamp } from '../../shared/core/timestamps.js';

describe('parseTimestamp', () => {
  const ok = (s: string) => {
    const r = parseTimestamp(s);
    if (!r.ok) throw new Error(r.message);
    return r.instant;
  };

  test('an instant in UTC, to the microsecond, whatever the offset', () => {
    expect(ok('2026-03-01T00:00:00Z')).toEqual({ micros: 1_772_323_200_000_000n, iso: '2026-03-01T00:00:00.000Z' });
    expect(ok('2026-03-01T01:30:00+01:30').iso).toBe('2026-03-01T00:00:00.000Z');
    expect(ok('2026-02-28t23:00:00-01:00').iso).toBe('2026-03-01T00:00:00.000Z');
    expect(ok('2026-03-01T00:00:00.5Z').iso).toBe('2026-03-01T00:00:00.500Z');
    expect(ok('2026-03-01T00:00:00.123456789Z')).toMatchObject({ iso: '2026-03-01T00:00:00.123456Z' });
    expect(ok('2024-02-29T12:00:00Z').iso).toBe('2024-02-29T12:00:00.000Z');
    expect(ok('1970-01-01T00:00:00Z').micros).toBe(0n);
    expect(ok('9999-12-31T23:59:59.999999Z').iso).toBe('9999-12-31T23:59:59.999999Z');
  });

  test('anything else is refused in plain words, never rolled over', () => {
    for (const bad of [
      '',
      '2026-03-01',
      '2026-03-01T00:00:00',
      '2026-03-01 00:00:00Z',
      '2026-3-1T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T23:60:00Z',
      '2026-03-01T23:59:60Z',
      '2026-03-01T00:00:00+24:00',
      '2026-03-01T00:00:00.Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:30:00+01:00',
      '9999-12-31T23:30:00-01:00',
      '+02026-03-01T00:00:00Z',
      '٢٠٢٦-03-01T00:00:00Z',
      `2026-03-01T00:00:00.${'1'.repeat(100)}Z`,
    ]) {
      const r = parseTimestamp(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.message.length).toBeLessThan(120);
    }
  });

  test('it agrees with Date.parse to the millisecond, and round-trips', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(0), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), fc.integer({ min: 0, max: 999 }), (d, us) => {
        const iso = d.toISOString();
        expect(ok(iso).micros).toBe(BigInt(d.getTime()) * 1000n);
        const fine = `${iso.slice(0, -1)}${String(us).padStart(3, '0')}Z`;
        const i = ok(fine);
        expect(i.micros).toBe(BigInt(d.getTime()) * 1000n + BigInt(us));
        expect(ok(i.iso)).toEqual(i);
        expect(instantOf(i.micros)).toEqual(i);
      }),
    );
  });
});

describe('CSV', () => {
  test('RFC 4180 quoting, CRLF records, empty cells for null', () => {
    expect(csvRecord([{ plain: 'a' }, null, { text: 'b c' }])).toBe('a,,b c\r\n');
    expect(csvField({ text: 'say "hi", twice' })).toBe('"say ""hi"", twice"');
    expect(csvField({ text: 'two\nlines' })).toBe('"two\nlines"');
    expect(csvField({ text: 'cr\rhere' })).toBe('"cr\rhere"');
    expect(csvHeader(['id', 'created_at'])).toBe('id,created_at\r\n');
  });

  test('a text cell starting with a formula character gets one leading quote; the gateway’s own cells never', () => {
    expect(csvField({ text: '=1+1' })).toBe("'=1+1");
    expect(csvField({ text: '+1' })).toBe("'+1");
    expect(csvField({ text: '-1' })).toBe("'-1");
    expect(csvField({ text: '@SUM(A1)' })).toBe("'@SUM(A1)");
    expect(csvField({ text: '\tx' })).toBe("'\tx");
    expect(csvField({ text: '\rx' })).toBe(`"'\rx"`);
    expect(csvField({ text: '=HYPERLINK("x")' })).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField({ text: "'=already" })).toBe("'=already");
    expect(csvField({ text: 'a=b' })).toBe('a=b');
    expect(csvField({ plain: '-0.01' })).toBe('-0.01');
  });

  test('any text survives a round trip through a strict reader, and never reaches a spreadsheet as a formula', () => {
    const read = (field: string) => (field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (s) => {
        const field = csvField({ text: s });
        const back = read(field);
        expect(back === s || back === `'${s}`).toBe(true);
        expect(/^[=+\-@\t\r]/.test(back)).toBe(false);
        if (!field.startsWith('"')) expect(/[",\r\n]/.test(field)).toBe(false);
      }),
    );
  });
});
