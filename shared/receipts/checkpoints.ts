/**
 * Checkpoints of the receipt log (docs/receipts.md "Checkpoints"): a C2SP `tlog-checkpoint` — the log's origin, its
 * size, its root hash — signed as a C2SP signed note with the gateway's Ed25519 key (shared/signing/signed-note.ts),
 * the note's key name being the origin. Stored once per size (`receipt_log_checkpoints`, append-only): two processes
 * that sign the same size keep the first.
 */
import type { ServiceContext } from '../context.js';
import type { Queryable } from '../db/connect.js';
import { checkpointBody, signNote } from '../signing/signed-note.js';
import { rootAt, treeSize } from './log.js';

/** A checkpoint as the API shows it. */
export interface CheckpointView {
  origin: string;
  size: number;
  /** The root hash, base64 (as in the note). */
  root_hash: string;
  /** The signed note itself: what a verifier checks, byte for byte. */
  note: string;
  created_at: string;
}

interface CheckpointRow {
  size: string | number;
  root: Uint8Array;
  note: string;
  created_at: Date | string;
}

function viewOf(row: CheckpointRow): CheckpointView {
  return {
    origin: row.note.slice(0, row.note.indexOf('\n')),
    size: Number(row.size),
    root_hash: Buffer.from(row.root).toString('base64'),
    note: row.note,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** The newest checkpoint, or null before the first. */
export async function latestCheckpoint(db: Queryable): Promise<CheckpointView | null> {
  const row = (await db('receipt_log_checkpoints').orderBy('size', 'desc').first()) as CheckpointRow | undefined;
  return row ? viewOf(row) : null;
}

/** The checkpoint of exactly `size` leaves, or null when none was signed at that size. */
export async function checkpointOfSize(db: Queryable, size: number): Promise<CheckpointView | null> {
  const row = (await db('receipt_log_checkpoints')
    .where({ size: String(size) })
    .first()) as CheckpointRow | undefined;
  return row ? viewOf(row) : null;
}

type CheckpointContext = Pick<ServiceContext, 'db' | 'signingKey'> & { settings: Pick<ServiceContext['settings'], 'logOrigin'> };

/**
 * A signed checkpoint. `covering`: one of at least that many leaves — the newest when it does (a receipt's proof),
 * else a new one of the whole log. Without it (the settler's timer, the first GET): the newest when no leaf came
 * since, else a new one of the whole log.
 */
export async function checkpointNow(ctx: CheckpointContext, covering?: number): Promise<CheckpointView> {
  const latest = await latestCheckpoint(ctx.db);
  if (latest && covering !== undefined && latest.size >= covering) return latest;
  const size = await treeSize(ctx.db);
  if (latest && latest.size >= size) return latest;
  const root = await rootAt(ctx.db, size);
  const origin = ctx.settings.logOrigin;
  const note = signNote(checkpointBody({ origin, size, rootHash: root }), origin, {
    publicKey: Buffer.from(ctx.signingKey.publicJwk.x, 'base64url'),
    sign: (data) => ctx.signingKey.signBytes(data),
  });
  await ctx.db.raw(`INSERT INTO receipt_log_checkpoints (size, root, note) VALUES (?, decode(?, 'hex'), ?) ON CONFLICT (size) DO NOTHING`, [
    String(size),
    root.toString('hex'),
    note,
  ]);
  return (await checkpointOfSize(ctx.db, size))!;
}
