import { randomBytes } from 'node:crypto';

/**
 * A receipt id (also the call id): `r_` + 9 base-36 characters of time + 12 hex of randomness.
 * Time first, so ids sort roughly by creation; matches the receipt-id rule of sub-mandate ids.
 */
export function newReceiptId(now = Date.now()): string {
  return `r_${now.toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;
}
