/**
 * Paying authors out (docs/payments.md): what an account holds in the asset's currency leaves it for its payout
 * address, as an ERC-20 transfer from the treasury. Each step is written before the next starts, so a crash at any
 * point is finished by `recoverPayouts`, exactly once:
 * 1. `pending`: the entry `payout:<id>` (account → `payouts:pending`) and the row, in one transaction (an overdraw is
 *    refused there, under the balance row's lock: two payouts of the whole balance, one goes through);
 * 2. `sent`: the transfer signed, its hash and bytes recorded, then broadcast (one treasury signer at a time, under a
 *    Postgres advisory lock, so no two transfers share a nonce); recovery broadcasts the same bytes again;
 * 3. `paid`: mined → `payout-paid:<id>` (payouts:pending → external:x402:<network>); or `reversed`: reverted, or
 *    dropped (its nonce taken by another transaction) → `payout-reversed:<id>` (payouts:pending → the account).
 */
import { randomBytes } from 'node:crypto';
import { type Hex, parseTransaction } from 'viem';
import type { ServiceContext } from '../context.js';
import { microsToUnits } from '../core/asset-units.js';
import { HolonError } from '../core/errors.js';
import type { Queryable } from '../db/connect.js';
import { ensureAccount } from '../ledger/accounts.js';
import { postEntry } from '../ledger/entries.js';
import { ensureBalanceRow } from '../ledger/holds.js';
import { payoutAddress } from './payout-address.js';
import type { PaymentRails } from './rails.js';
import type { Treasury } from './treasury.js';

const PAYOUTS_PENDING = 'payouts:pending';
const PAYOUT_KIND = 'payout';
/** The advisory lock of the treasury's signer (any fixed number, Holon's alone). */
const TREASURY_LOCK = 7_340_034_402;
/** How long a request waits for its transfer to be mined before answering `sent` (recovery finishes it). */
const MINED_WAIT_MS = 30_000;

type PayoutState = 'pending' | 'sent' | 'paid' | 'reversed';

export interface Payout {
  id: string;
  account: string;
  amount: bigint;
  currency: string;
  address: string;
  state: PayoutState;
  txHash: string | null;
  error: string | null;
  createdAt: Date;
}

interface Row {
  id: string;
  account: string;
  amount: string | bigint;
  units: string;
  currency: string;
  address: string;
  state: PayoutState;
  tx_hash: string | null;
  raw_tx: string | null;
  error: string | null;
  created_at: Date;
}

const fromRow = (r: Row): Payout => ({
  id: r.id,
  account: r.account,
  amount: BigInt(r.amount),
  currency: r.currency,
  address: r.address,
  state: r.state,
  txHash: r.tx_hash,
  error: r.error,
  createdAt: new Date(r.created_at),
});

function railsOf(ctx: ServiceContext): PaymentRails & { treasury: Treasury } {
  const rails = ctx.payments;
  if (!rails?.treasury)
    throw new HolonError('payments_off', 'payouts are off on this gateway: it has no treasury (HOLON_X402_RPC_URL and HOLON_X402_FACILITATOR_KEY)');
  return rails as PaymentRails & { treasury: Treasury };
}

export async function listPayouts(db: Queryable, account: string): Promise<Payout[]> {
  const rows = (await db('payouts').where({ account }).orderBy('created_at', 'desc').limit(200)) as Row[];
  return rows.map(fromRow);
}

/** Step 1, then the rest at once: the payout as it stands when its transfer is mined, or after MINED_WAIT_MS. */
export async function requestPayout(ctx: ServiceContext, account: string, amount: bigint, waitMs = MINED_WAIT_MS): Promise<Payout> {
  const rails = railsOf(ctx);
  if (amount <= 0n) throw new HolonError('invalid_request', 'a payout is more than nothing');
  const address = await payoutAddress(ctx.db, account);
  if (!address) throw new HolonError('invalid_request', 'set a payout address first: PUT /v0/me/payout-address {address}');
  const currency = rails.asset.currency;
  await ensureAccount(ctx.db, PAYOUTS_PENDING, 'platform');
  for (const a of [account, PAYOUTS_PENDING, rails.externalAccount]) await ensureBalanceRow(ctx.db, a, currency);
  const id = `po_${randomBytes(12).toString('hex')}`;
  await ctx.db.transaction(async (trx) => {
    await trx('payouts').insert({
      id,
      account,
      network: rails.network,
      currency,
      amount: amount.toString(),
      units: microsToUnits(amount, rails.asset.decimals).toString(),
      address,
      state: 'pending',
    });
    await postEntry(trx, {
      key: `payout:${id}`,
      kind: PAYOUT_KIND,
      lines: [
        { account, currency, amount: -amount },
        { account: PAYOUTS_PENDING, currency, amount },
      ],
    });
  });
  // From here the payout happens whatever this request sees: a failure to reach the chain is left to recovery, and
  // the answer is the payout as it stands (a client that retried on an error would pay out twice).
  try {
    await sendPayout(ctx, id);
    return await advancePayout(ctx, id, waitMs);
  } catch (e) {
    ctx.log.warn({ payout: id, err: { message: (e as Error).message } }, 'payout not finished now; recovery finishes it');
    return fromRow(await rowOf(ctx.db, id));
  }
}

async function rowOf(db: Queryable, id: string): Promise<Row> {
  return (await db('payouts').where({ id }).first()) as Row;
}

/**
 * Step 2: sign and record (committed), then broadcast. Signing is one at a time (the treasury's advisory lock), each
 * transfer with the next nonce neither the chain nor a recorded transfer has used, so two never share one.
 */
async function sendPayout(ctx: ServiceContext, id: string): Promise<void> {
  const { treasury } = railsOf(ctx);
  const raw = await ctx.db.transaction(async (trx): Promise<Hex | null> => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [TREASURY_LOCK]);
    const row = (await trx('payouts').where({ id }).forUpdate().first()) as Row | undefined;
    if (row?.state !== 'pending') return null;
    const recorded = (await trx('payouts').where({ state: 'sent' }).whereNotNull('raw_tx').select('raw_tx')) as Array<{ raw_tx: string }>;
    const nextRecorded = Math.max(-1, ...recorded.map((r) => parseTransaction(r.raw_tx as Hex).nonce ?? -1)) + 1;
    const signed = await treasury.sign(row.address as Hex, BigInt(row.units), Math.max(nextRecorded, await treasury.pendingNonce()));
    // Recorded before anything leaves: after a crash the same bytes are sent again, never a second transfer.
    await trx('payouts').where({ id, state: 'pending' }).update({ state: 'sent', tx_hash: signed.hash, raw_tx: signed.raw, updated_at: trx.fn.now() });
    return signed.raw;
  });
  if (raw) await treasury.broadcast(raw);
}

/** Step 3 for a `sent` payout: mined → paid; reverted or dropped → reversed; else it stays `sent`. */
async function advancePayout(ctx: ServiceContext, id: string, waitMs: number): Promise<Payout> {
  const rails = railsOf(ctx);
  const row = await rowOf(ctx.db, id);
  if (row.state !== 'sent' || !row.tx_hash || !row.raw_tx) return fromRow(row);
  const state = await rails.treasury.await(row.tx_hash as Hex, waitMs);
  if (state === 'succeeded') return finish(ctx, row, 'paid', null);
  if (state === 'reverted') return finish(ctx, row, 'reversed', 'the transfer reverted on chain');
  const { nonce } = parseTransaction(row.raw_tx as Hex);
  if (nonce !== undefined && (await rails.treasury.confirmedNonce()) > nonce) {
    // Its nonce is used and it is not mined: another transaction took its place, so it never will be.
    if ((await rails.treasury.await(row.tx_hash as Hex, 1)) === 'not_found') return finish(ctx, row, 'reversed', 'the transfer was dropped');
  }
  return fromRow(row);
}

async function finish(ctx: ServiceContext, row: Row, to: 'paid' | 'reversed', error: string | null): Promise<Payout> {
  const rails = railsOf(ctx);
  const amount = BigInt(row.amount);
  await ctx.db.transaction(async (trx) => {
    const moved = await trx('payouts').where({ id: row.id, state: 'sent' }).update({ state: to, error, raw_tx: null, updated_at: trx.fn.now() });
    if (moved === 0) return;
    await postEntry(trx, {
      key: `payout-${to}:${row.id}`,
      kind: PAYOUT_KIND,
      lines: [
        { account: PAYOUTS_PENDING, currency: row.currency, amount: -amount },
        { account: to === 'paid' ? rails.externalAccount : row.account, currency: row.currency, amount },
      ],
    });
  });
  return fromRow(await rowOf(ctx.db, row.id));
}

/** Every payout a crash left unfinished: `pending` ones are sent, `sent` ones sent again (the same bytes) and followed. */
export async function recoverPayouts(ctx: ServiceContext, waitMs = 5_000): Promise<number> {
  if (!ctx.payments?.treasury) return 0;
  const rows = (await ctx.db('payouts').whereIn('state', ['pending', 'sent']).orderBy('created_at').select('id', 'state', 'raw_tx')) as Row[];
  let finished = 0;
  for (const r of rows) {
    // One payout that cannot go on now (the node refuses its bytes, the treasury has no gas) holds up no other.
    try {
      if (r.state === 'pending') await sendPayout(ctx, r.id);
      else if (r.raw_tx) await ctx.payments.treasury.broadcast(r.raw_tx as Hex);
      const after = await advancePayout(ctx, r.id, waitMs);
      if (after.state === 'paid' || after.state === 'reversed') finished++;
    } catch (e) {
      ctx.log.warn({ payout: r.id, err: { message: (e as Error).message } }, 'payout recovery failed; tried again at the next sweep');
    }
  }
  return finished;
}
