/**
 * Uploaded files (gateway.md §7 "Files"): one `files` row per upload, its content in `file_chunks` rows of at most
 * 512 KiB each (shared/files/store.ts streams them in and out, one chunk at a time). `owner` is the uploading
 * account's handle (`@operator` for the local operator of a dev gateway), with no foreign key: files are deleted 24 h
 * after upload (`expires_at`), by the settler's file sweeper. A row is `uploading` until its last chunk is written;
 * only `ready` rows are ever read or counted against the owner's quota.
 */
export const name = '012_files';

export const statements = [
  `CREATE TABLE files (
     id            text PRIMARY KEY,
     owner         text NOT NULL,
     content_type  text NOT NULL,
     status        text NOT NULL CHECK (status IN ('uploading', 'ready')),
     size          bigint NOT NULL CHECK (size >= 0),
     sha256        text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
     created_at    timestamptz NOT NULL,
     expires_at    timestamptz NOT NULL,
     CHECK (status = 'uploading' OR sha256 IS NOT NULL)
   )`,
  `CREATE INDEX files_owner_live ON files (owner, expires_at) WHERE status = 'ready'`,
  `CREATE INDEX files_expiry ON files (expires_at)`,
  `CREATE TABLE file_chunks (
     file_id  text NOT NULL REFERENCES files(id) ON DELETE CASCADE,
     seq      integer NOT NULL CHECK (seq >= 0),
     data     bytea NOT NULL,
     PRIMARY KEY (file_id, seq)
   )`,
];
