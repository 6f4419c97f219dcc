/**
 * Who may pass a file (gateway.md §7 "Files"), checked at admission and again when the run starts: every
 * `holon://files/<id>` in the input must be ready, unexpired, and owned by the issuer of the ROOT mandate the call
 * runs under — delegated calls included, so an agent cannot hand a child call a file its caller does not own. Any
 * `holon://evals/…` handle is refused: evaluation fixtures are the platform's. Every refusal is `file_not_found`, the
 * same words whether the file never existed, expired or is someone else's (tenants never see each other).
 *
 * Also the `_meta["holon/files"]` map (and the webhook's `x-holon-files` header): per handle, a signed link
 * (links.ts) and what the agent checks after download.
 */
import type { Queryable } from '../db/connect.js';
import { fileHandle, MAX_HANDLES_PER_CALL, scanHandles } from './handles.js';
import { LINK_TTL_S, uploadLinkUrl } from './links.js';
import { liveFiles, type StoredFile } from './store.js';

/** The owner of what the local operator of a dev gateway uploads: never an account handle (handles have no `@`). */
export const OPERATOR_OWNER = '@operator';

const FILE_NOT_FOUND = 'file_not_found';

/** The account a call's files must belong to: a root mandate's id starts with its issuer, `<issuer>/<name>[.…]`. */
export function rootIssuerOf(mandate: { id: string; issuer: string; depth: number }): string {
  return mandate.depth === 0 ? mandate.issuer : mandate.id.slice(0, mandate.id.indexOf('/'));
}

export type FileCheck = { ok: true; files: StoredFile[] } | { ok: false; code: 'file_not_found' | 'too_many_files'; reason: string; handle?: string };

/** The files a call's input names, if it may use them all. */
export async function checkCallFiles(db: Queryable, input: unknown, mandate: { id: string; issuer: string; depth: number }, nowMs: number): Promise<FileCheck> {
  const scan = scanHandles(input);
  if (scan.refused !== undefined) {
    return { ok: false, code: FILE_NOT_FOUND, handle: scan.refused, reason: `the input names ${scan.refused}, which no call can use` };
  }
  if (scan.fileIds.length === 0) return { ok: true, files: [] };
  if (scan.fileIds.length > MAX_HANDLES_PER_CALL) {
    return { ok: false, code: 'too_many_files', reason: `the input names ${scan.fileIds.length} files; a call may name at most ${MAX_HANDLES_PER_CALL}` };
  }
  const owner = rootIssuerOf(mandate);
  const found = await liveFiles(db, scan.fileIds, nowMs);
  const files: StoredFile[] = [];
  for (const id of scan.fileIds) {
    const file = found.get(id);
    // The local operator of a dev gateway acts for every issuer; hosted mode never stores OPERATOR_OWNER files.
    if (!file || (file.owner !== owner && file.owner !== OPERATOR_OWNER)) {
      const handle = fileHandle(id);
      return { ok: false, code: FILE_NOT_FOUND, handle, reason: `there is no file ${handle} for this call: it does not exist, has expired, or is not yours` };
    }
    files.push(file);
  }
  return { ok: true, files };
}

/** What an agent gets for one handle (gateway.md §6). */
export interface FileLink {
  url: string;
  content_type: string;
  size: number;
  sha256: string;
  /** When the link stops working (ISO 8601): 15 minutes from the run's start, or the file's deletion if sooner. */
  expires: string;
}

/** Signs links: HOLON_FILE_SECRET (or a dev process's own), and the origin agents reach the gateway at. */
export interface FileLinkSigner {
  secret: string;
  /** HOLON_PUBLIC_URL, or in dev the API's own listening URL. */
  origin(): string;
}

/** The `_meta["holon/files"]` map for the files of a call, keyed by handle. */
export function fileLinks(signer: FileLinkSigner, files: readonly StoredFile[], nowMs: number): Record<string, FileLink> {
  const out: Record<string, FileLink> = {};
  const origin = signer.origin();
  for (const f of files) {
    const exp = Math.min(Math.floor(nowMs / 1000) + LINK_TTL_S, Math.floor(f.expiresAt.getTime() / 1000));
    out[fileHandle(f.id)] = {
      url: uploadLinkUrl(signer.secret, origin, f.id, exp),
      content_type: f.contentType,
      size: f.size,
      sha256: f.sha256,
      expires: new Date(exp * 1000).toISOString(),
    };
  }
  return out;
}
