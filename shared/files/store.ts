/**
 * Uploaded files in Postgres (migration 012): a `files` row (owner, content type, size, SHA-256, created_at,
 * expires_at = created_at + 24 h) and the content in `file_chunks` rows of at most CHUNK_BYTES (bytea), on Postgres
 * and on PGlite alike.
 *
 * An upload is streamed: the body is read chunk by chunk, hashed as it goes, and each CHUNK_BYTES written as one row
 * before more is read, so at most one chunk is held in memory, never the file. The rows are written outside a
 * transaction (a 20 MB upload from a slow client must not hold PGlite's only connection): the row is `uploading`
 * until the last chunk is in, then `ready` — quota checked once more under a per-owner lock. Any failure (too large,
 * over quota, the client gone, the database) deletes the row and its chunks; a process killed mid-upload leaves an
 * `uploading` row that nothing reads and that deleteExpiredFiles removes after an hour.
 *
 * Nothing here logs, and the content is never copied anywhere but these rows and the download's response.
 */
import { createHash, randomBytes } from 'node:crypto';
import { HolonError } from '../core/errors.js';
import type { Db, DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';

const MiB = 1024 * 1024;
/** The largest file (gateway.md §7): 20 MB. */
export const MAX_FILE_BYTES = 20 * MiB;
/** Files are deleted this long after upload (gateway.md §7): 24 hours. */
export const FILE_TTL_MS = 24 * 60 * 60_000;
/** Content rows hold at most this many bytes. */
const CHUNK_BYTES = 512 * 1024;
/** An upload still `uploading` after this long was abandoned by a process that died. */
const ABANDONED_UPLOAD_MS = 60 * 60_000;

export interface FileLimits {
  maxBytes: number;
  quotaBytes: number;
}

export interface StoredFile {
  id: string;
  owner: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: Date;
  expiresAt: Date;
}

interface Ctx {
  db: Db;
  now(): number;
}

export function newFileId(): string {
  return `f_${randomBytes(16).toString('base64url')}`;
}

const tooLarge = (max: number) => new HolonError('file_too_large', `a file may be at most ${describeBytes(max)} (${max} bytes)`);
const overQuota = (quota: number) =>
  new HolonError(
    'file_quota_exceeded',
    `this upload would take your account past ${describeBytes(quota)} of live files; files are deleted 24 hours after upload`,
  );

function describeBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MB` : `${n} bytes`;
}

/** Bytes of the owner's ready, unexpired files (optionally not counting one of them). */
async function liveBytes(db: Queryable, owner: string, nowMs: number, except?: string): Promise<number> {
  const q = db('files').where({ owner, status: 'ready' }).where('expires_at', '>', new Date(nowMs));
  if (except) q.whereNot({ id: except });
  const row = (await q.sum({ total: 'size' }).first()) as { total: unknown } | undefined;
  return Number(toBigInt(row?.total ?? 0));
}

function asBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  throw new TypeError('an upload body yields bytes');
}

export interface Upload {
  owner: string;
  contentType: string;
  /** Content-Length, when the client declared one. */
  declaredBytes?: number;
  body: AsyncIterable<unknown>;
}

/**
 * Store an upload; answers the stored file, or throws HolonError 413 (too large), 409 (over quota) or 400 (empty).
 * Nothing is left behind by a refusal.
 */
export async function storeUpload(ctx: Ctx, upload: Upload, limits: FileLimits): Promise<StoredFile> {
  const { db } = ctx;
  const { owner } = upload;
  if (upload.declaredBytes !== undefined && upload.declaredBytes > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const created = ctx.now();
  const used = await liveBytes(db, owner, created);
  if (used + (upload.declaredBytes ?? 0) > limits.quotaBytes) throw overQuota(limits.quotaBytes);

  const id = newFileId();
  const expiresAt = new Date(created + FILE_TTL_MS);
  await db('files').insert({
    id,
    owner,
    content_type: upload.contentType,
    status: 'uploading',
    size: 0,
    created_at: new Date(created),
    expires_at: expiresAt,
  });
  try {
    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async (): Promise<void> => {
      if (pendingBytes === 0) return;
      const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await db('file_chunks').insert({ file_id: id, seq: seq++, data });
    };
    for await (const raw of upload.body) {
      let chunk = asBuffer(raw);
      size += chunk.length;
      if (size > limits.maxBytes) throw tooLarge(limits.maxBytes);
      if (used + size > limits.quotaBytes) throw overQuota(limits.quotaBytes);
      hash.update(chunk);
      // Cut at CHUNK_BYTES: a row never holds more, whatever sizes the body arrives in.
      while (pendingBytes + chunk.length >= CHUNK_BYTES) {
        const room = CHUNK_BYTES - pendingBytes;
        pending.push(chunk.subarray(0, room));
        pendingBytes += room;
        chunk = chunk.subarray(room);
        await flush();
      }
      if (chunk.length > 0) {
        pending.push(chunk);
        pendingBytes += chunk.length;
      }
    }
    await flush();
    if (size === 0) throw new HolonError('invalid_request', 'the request body is the file, and it is empty');
    const sha256 = hash.digest('hex');
    await db.transaction(async (trx) => {
      // One owner's uploads finish one at a time, so two concurrent ones cannot both fit in the last bytes of quota.
      await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('holon files'), hashtext(?))`, [owner]);
      if ((await liveBytes(trx, owner, ctx.now(), id)) + size > limits.quotaBytes) throw overQuota(limits.quotaBytes);
      await trx('files').where({ id }).update({ status: 'ready', size, sha256 });
    });
    return { id, owner, contentType: upload.contentType, size, sha256, createdAt: new Date(created), expiresAt };
  } catch (e) {
    await deleteFile(db, id).catch(() => undefined);
    throw e;
  }
}

/** A ready `files` row as the drivers return it (shared/db/connect.ts); its `sha256` is set once it is ready. */
interface FileRow {
  id: string;
  owner: string;
  content_type: string;
  size: DbBigInt;
  sha256: string;
  created_at: Date;
  expires_at: Date;
}

function fileFromRow(row: FileRow): StoredFile {
  return {
    id: row.id,
    owner: row.owner,
    contentType: row.content_type,
    size: Number(toBigInt(row.size)),
    sha256: row.sha256,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
  };
}

/** The ready, unexpired files among `ids`, by id (absent: unknown, deleted, expired or still uploading). */
export async function liveFiles(db: Queryable, ids: readonly string[], nowMs: number): Promise<Map<string, StoredFile>> {
  if (ids.length === 0) return new Map();
  const rows: FileRow[] = await db('files')
    .whereIn('id', [...ids])
    .where({ status: 'ready' })
    .where('expires_at', '>', new Date(nowMs))
    .select('id', 'owner', 'content_type', 'size', 'sha256', 'created_at', 'expires_at');
  return new Map(rows.map((r) => [r.id, fileFromRow(r)]));
}

/**
 * A live file and its content, chunk by chunk, each read from the database as the previous one is consumed. A file
 * deleted while it is read ends the iteration with an error (the download is then cut short, never completed wrongly).
 */
export async function openFile(db: Queryable, id: string, nowMs: number): Promise<{ file: StoredFile; content: AsyncIterable<Buffer> } | null> {
  const file = (await liveFiles(db, [id], nowMs)).get(id);
  if (!file) return null;
  async function* content(): AsyncGenerator<Buffer> {
    let sent = 0;
    for (let seq = 0; sent < file!.size; seq++) {
      const row = (await db('file_chunks').where({ file_id: id, seq }).first('data')) as { data: unknown } | undefined;
      if (!row) throw new Error('the file was deleted while it was read');
      const data = asBuffer(row.data);
      sent += data.length;
      yield data;
    }
  }
  return { file, content: content() };
}

async function deleteFile(db: Queryable, id: string): Promise<void> {
  await db('files').where({ id }).delete();
}

/**
 * Delete what has expired at `nowMs` (24 h after upload) and uploads abandoned mid-way, at most `batch` files per
 * statement until none is left; chunks go with their file (ON DELETE CASCADE). Answers how many files went.
 */
export async function deleteExpiredFiles(db: Queryable, nowMs: number, batch = 200): Promise<number> {
  const now = new Date(nowMs);
  const abandoned = new Date(nowMs - ABANDONED_UPLOAD_MS);
  let deleted = 0;
  for (;;) {
    const r = await db.raw<{ rows: unknown[] }>(
      `DELETE FROM files WHERE id IN (
         SELECT id FROM files WHERE expires_at <= ? OR (status = 'uploading' AND created_at < ?) LIMIT ?
       ) RETURNING id`,
      [now, abandoned, batch],
    );
    deleted += r.rows.length;
    if (r.rows.length < batch) return deleted;
  }
}
