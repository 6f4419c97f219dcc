/**
 * The receipt log's audit (part of `holon audit` and of the audit every integration test ends with): the tree is
 * rebuilt from the receipts themselves and compared with what the log stored and signed.
 *
 * 1. the leaves are 0 … n−1, each the leaf hash of its receipt as it reads now (a changed receipt shows here);
 * 2. every signed receipt is in the log;
 * 3. the root rebuilt from the receipts equals the stored tree's root, and the newest checkpoint's root at its size;
 * 4. every checkpoint's root equals the stored tree's root at its size, and its note names that size and root.
 */
import { rootFromLeaves } from '../core/merkle.js';
import type { Queryable } from '../db/connect.js';
import { parseCheckpointBody } from '../signing/signed-note.js';
import { rootAt, treeSize } from './log.js';
import { receiptLeaf } from './signing.js';
import { eachLoggedReceipt } from './store.js';

export async function auditLog(db: Queryable): Promise<string[]> {
  const problems: string[] = [];
  const size = await treeSize(db);
  const leaves: Buffer[] = [];
  const stored = new Map<number, Buffer>();
  for (const r of (await db('receipt_log_nodes').where({ level: 0 }).select('idx', 'hash')) as Array<{ idx: string | number; hash: Uint8Array }>) {
    stored.set(Number(r.idx), Buffer.from(r.hash));
  }
  for await (const page of eachLoggedReceipt(db)) {
    for (const { index, receipt } of page) {
      if (index !== leaves.length) problems.push(`receipt log: leaf ${leaves.length} is missing (the next one is ${index})`);
      const leaf = receiptLeaf(receipt);
      if (!stored.get(index)?.equals(leaf)) problems.push(`receipt log: leaf ${index} (receipt ${receipt.id}) does not hash to the receipt as it reads now`);
      leaves[index] = leaf;
    }
  }
  if (leaves.length !== size) problems.push(`receipt log: ${leaves.length} receipts are logged but the tree has ${size} leaves`);
  const unlogged = await db('receipts')
    .whereNotNull('signature')
    .whereNotExists(db('receipt_log_leaves').whereRaw('receipt_log_leaves.receipt_id = receipts.id'))
    .limit(10)
    .select('id');
  for (const r of unlogged as Array<{ id: string }>) problems.push(`receipt ${r.id}: signed but not in the log`);
  if (problems.length) return problems;

  const rebuilt = rootFromLeaves(leaves);
  if (!rebuilt.equals(await rootAt(db, size))) problems.push('receipt log: the root rebuilt from the receipts is not the stored tree’s root');
  const checkpoints = (await db('receipt_log_checkpoints').orderBy('size').select('size', 'root', 'note')) as Array<{
    size: string | number;
    root: Uint8Array;
    note: string;
  }>;
  for (const c of checkpoints) {
    const n = Number(c.size);
    const root = Buffer.from(c.root);
    if (n > size) {
      problems.push(`checkpoint of ${n}: the log has only ${size} leaves`);
      continue;
    }
    if (!root.equals(await rootAt(db, n))) problems.push(`checkpoint of ${n}: its root is not the stored tree’s root at that size`);
    let body: ReturnType<typeof parseCheckpointBody> | null = null;
    try {
      body = parseCheckpointBody(c.note.slice(0, c.note.indexOf('\n\n') + 1));
    } catch {
      body = null;
    }
    if (!body || body.size !== n || !body.rootHash.equals(root)) problems.push(`checkpoint of ${n}: its note does not say that size and root`);
  }
  const newest = checkpoints[checkpoints.length - 1];
  if (newest && Number(newest.size) <= size && !rootFromLeaves(leaves.slice(0, Number(newest.size))).equals(Buffer.from(newest.root))) {
    problems.push(`checkpoint of ${newest.size}: the tree rebuilt from the receipts has another root`);
  }
  return problems;
}
