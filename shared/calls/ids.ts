import { randomFillSync } from 'node:crypto';

/**
 * Randomness for ids, drawn from the CSPRNG a few kilobytes at a time (each draw is a call into OpenSSL, a measurable
 * part of a call's CPU when made per id). Bytes are handed out once, in order; the pool is never shown whole.
 */
const pool = Buffer.allocUnsafe(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/**
 * A receipt id (also the call id): `r_` + 9 base-36 characters of time + 12 hex of randomness.
 * Time first, so ids sort roughly by creation; matches the receipt-id rule of sub-mandate ids.
 */
export function newReceiptId(now = Date.now()): string {
  return `r_${now.toString(36).padStart(9, '0')}${randomHex(6)}`;
}
