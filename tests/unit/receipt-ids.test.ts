/**
 * Receipt (and call) ids (shared/calls/ids.ts): `r_` + 9 base-36 characters of time + 12 hex of randomness drawn
 * from a pooled CSPRNG buffer. Across many refills of the pool, every id is well formed and none repeats; ids of one
 * millisecond differ only in their random part, and later times sort after earlier ones.
 */
import { expect, test } from 'vitest';
import { newReceiptId } from '../../shared/calls/ids.js';

test('ids are well formed, unique across refills of the random pool, and sort by time first', () => {
  const now = 1_796_000_000_000;
  const ids = Array.from({ length: 20_000 }, () => newReceiptId(now)); // 20,000 × 6 bytes: ~30 refills of the pool
  for (const id of ids) expect(id).toMatch(/^r_[0-9a-z]{9}[0-9a-f]{12}$/);
  expect(new Set(ids).size).toBe(ids.length);
  const randomParts = new Set(ids.map((id) => id.slice(11)));
  expect(randomParts.size).toBe(ids.length);
  expect(newReceiptId(now + 1) > newReceiptId(now)).toBe(true);
  expect(newReceiptId(now).slice(0, 11)).toBe(`r_${now.toString(36).padStart(9, '0')}`);
});
