/**
 * A receipt's inclusion proof (GET /v0/receipts/{id}/proof, docs/receipts.md "Proving a receipt"): its leaf index,
 * its leaf hash, the audit path and the signed checkpoint it is proved against — the one asked for, or the newest,
 * signed on the spot when no checkpoint covers the receipt yet.
 */
import type { ServiceContext } from '../../shared/context.js';
import { HolonError } from '../../shared/core/errors.js';
import { checkpointNow, checkpointOfSize, type CheckpointView } from '../../shared/receipts/checkpoints.js';
import { inclusionProof, leafIndexOf } from '../../shared/receipts/log.js';
import { receiptLeaf } from '../../shared/receipts/signing.js';
import type { ReceiptView } from '../../shared/receipts/store.js';
import { badQuery } from './query.js';

export interface ReceiptProof {
  receipt: string;
  leaf_index: number;
  leaf_hash: string;
  inclusion: string[];
  checkpoint: CheckpointView;
}

export async function receiptProof(ctx: ServiceContext, receipt: ReceiptView, checkpointSize: number | undefined): Promise<ReceiptProof> {
  const index = await leafIndexOf(ctx.db, receipt.id);
  if (index === null) throw new HolonError('not_found', `receipt ${receipt.id} is not in the log: it was written before receipts were logged`);
  let checkpoint: CheckpointView;
  if (checkpointSize === undefined) checkpoint = await checkpointNow(ctx, index + 1);
  else {
    const found = await checkpointOfSize(ctx.db, checkpointSize);
    if (!found) throw badQuery('checkpoint', `names no checkpoint the gateway signed: there is none of ${checkpointSize} receipts`);
    if (found.size <= index) throw badQuery('checkpoint', `is too small: receipt ${receipt.id} is leaf ${index}, after the first ${found.size}`);
    checkpoint = found;
  }
  const path = await inclusionProof(ctx.db, index, checkpoint.size);
  return {
    receipt: receipt.id,
    leaf_index: index,
    leaf_hash: receiptLeaf(receipt).toString('base64'),
    inclusion: path.map((h) => h.toString('base64')),
    checkpoint,
  };
}
