/**
 * Where an author's payouts go (docs/payments.md): an EVM address on the accounts row, stored checksummed (EIP-55),
 * shown masked (`0x1234…abcd`) wherever it is read back.
 */
import { getAddress, isAddress } from 'viem';
import type { Queryable } from '../db/connect.js';
import { HolonError } from '../core/errors.js';

export async function setPayoutAddress(db: Queryable, account: string, address: string): Promise<string> {
  if (typeof address !== 'string' || !isAddress(address, { strict: false }))
    throw new HolonError('invalid_request', 'a payout address is an EVM address: 0x and 40 hex digits');
  const checksummed = getAddress(address);
  if (/^0x0{40}$/i.test(checksummed)) throw new HolonError('invalid_request', 'the zero address burns what is sent to it');
  await db('accounts').where({ handle: account }).update({ payout_address: checksummed });
  return checksummed;
}

export async function payoutAddress(db: Queryable, account: string): Promise<string | null> {
  const row = (await db('accounts').where({ handle: account }).first('payout_address')) as { payout_address: string | null } | undefined;
  return row?.payout_address ?? null;
}

export const maskAddress = (address: string): string => `${address.slice(0, 6)}…${address.slice(-4)}`;
