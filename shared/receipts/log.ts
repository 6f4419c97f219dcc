/**
 * The transparency log of receipts, kept in Postgres (docs/receipts.md "The log"; the append:
 * shared/calls/sql/holon_log_append.sql): an RFC 6962 Merkle tree whose leaves are the receipts in the commit order
 * of the transactions that wrote them. Every complete subtree's hash is stored when its last leaf is appended, so a
 * root or a proof reads O(log n) rows in one query, whatever the log's size. The tree's shape is the pure core's (shared/core/merkle.ts).
 */
import { EMPTY_ROOT, inclusionRanges, consistencyRanges, neededNodes, proofFrom, rangeHash, rangeNodes, type NodeId } from '../core/merkle.js';
import { namedStatement } from '../db/prepared.js';
import type { Queryable } from '../db/connect.js';
import { signAndHash } from './signing.js';
import type { ReceiptView } from './store.js';
import type { SigningKey } from '../signing/keys.js';

/**
 * Append receipts to the log in the caller's transaction, in this order, as its LAST lock: every other row it
 * changes is locked already (docs/ledger.md, "Lock order"). Answers the first one's leaf index.
 */
async function appendToLog(trx: Queryable, receipts: ReadonlyArray<{ id: string; leaf: Buffer }>): Promise<number> {
  const r = await trx
    .raw<{ rows: Array<{ base: string | number }> }>('SELECT holon_log_append(?::text[], ?::text[]) AS base', [
      receipts.map((x) => x.id),
      receipts.map((x) => x.leaf.toString('hex')),
    ])
    .options(namedStatement('log_append'));
  return Number(r.rows[0]!.base);
}

/**
 * Sign receipts and append them to the log, in the transaction that writes them (`at`: its `now()`, the receipts'
 * `created_at`). `write` inserts the rows, given each one's signature; the views answered carry the signatures.
 */
export async function signAndLog(
  trx: Queryable,
  key: SigningKey,
  receipts: readonly ReceiptView[],
  write: (signatures: readonly string[]) => Promise<void>,
): Promise<ReceiptView[]> {
  // Several at once (a settlement batch): signed on the thread pool, in parallel, while this thread goes on.
  const signed = await Promise.all(receipts.map((r) => signAndHash(key, r, receipts.length > 1)));
  await write(signed.map((x) => x.signature));
  if (signed.length > 0)
    await appendToLog(
      trx,
      receipts.map((r, i) => ({ id: r.id, leaf: signed[i]!.leaf })),
    );
  return receipts.map((r, i) => ({ ...r, signature: signed[i]!.signature }));
}

/** The number of leaves: every committed append is a prefix of the log (appends commit in their index order). */
export async function treeSize(db: Queryable): Promise<number> {
  const r = await db.raw<{ rows: Array<{ size: string | number }> }>('SELECT coalesce(max(idx) + 1, 0) AS size FROM receipt_log_leaves');
  return Number(r.rows[0]!.size);
}

/** A receipt's leaf index, or null: not logged (written before receipts were logged) or not a receipt. */
export async function leafIndexOf(db: Queryable, receiptId: string): Promise<number | null> {
  const row = (await db('receipt_log_leaves').where({ receipt_id: receiptId }).first('idx')) as { idx: string | number } | undefined;
  return row ? Number(row.idx) : null;
}

/** The stored nodes asked for, as a lookup; a missing one means the log's rows are damaged (thrown). */
async function nodes(db: Queryable, ids: readonly NodeId[]): Promise<(id: NodeId) => Buffer> {
  const found = new Map<string, Buffer>();
  if (ids.length > 0) {
    const r = await db.raw<{ rows: Array<{ level: number; idx: string | number; hash: Uint8Array }> }>(
      `SELECT n.level, n.idx, n.hash FROM receipt_log_nodes n
         JOIN unnest(?::int[], ?::bigint[]) AS w(level, idx) ON n.level = w.level AND n.idx = w.idx`,
      [ids.map((n) => n.level), ids.map((n) => String(n.index))],
    );
    for (const row of r.rows) found.set(`${row.level}:${Number(row.idx)}`, Buffer.from(row.hash));
  }
  return (id) => {
    const hash = found.get(`${id.level}:${id.index}`);
    if (!hash) throw new Error(`the receipt log has no node ${id.level}:${id.index}: its rows are damaged`);
    return hash;
  };
}

/** The root hash of the tree of the first `size` leaves. */
export async function rootAt(db: Queryable, size: number): Promise<Buffer> {
  if (size === 0) return Buffer.from(EMPTY_ROOT);
  return rangeHash(0, size, await nodes(db, rangeNodes(0, size)));
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3), leaf to root. */
export async function inclusionProof(db: Queryable, index: number, size: number): Promise<Buffer[]> {
  const ranges = inclusionRanges(index, size);
  return proofFrom(ranges, await nodes(db, neededNodes(ranges)));
}

/** The consistency proof between the trees of `from` and `to` leaves (RFC 9162 §2.1.4). */
export async function consistencyProof(db: Queryable, from: number, to: number): Promise<Buffer[]> {
  const ranges = consistencyRanges(from, to);
  return proofFrom(ranges, await nodes(db, neededNodes(ranges)));
}
