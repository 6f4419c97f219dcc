/**
 * Files (gateway.md §7 "Files"; the store and the links: shared/files/):
 *   POST /v0/files                 human or agent key (dev mode: the local operator); the body IS the file, any
 *                                  content type, at most 20 MB → 201 {id, handle, size, sha256, content_type, expires_at};
 *                                  too large 413, past the account's live-file quota 409, empty 400
 *   GET  /v0/files/{id}?exp&sig    no key: a signed link (shared/files/links.ts) → the content, as an attachment
 *                                  that no browser renders or sniffs; a bad, expired or other file's signature 403,
 *                                  an unknown, expired or deleted file 404
 *   GET  /v0/files/evals/{capability}/{name}?exp&sig   an evaluation fixture, through a link the evaluator signed
 * The upload's body is streamed into the database (app.ts lets it past the JSON body parser: `isFileUpload`).
 */
import { Router, type Request, type Response } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { OPERATOR_OWNER } from '../../../shared/files/access.js';
import { FILE_ID, fileHandle } from '../../../shared/files/handles.js';
import { verifyFileLink } from '../../../shared/files/links.js';
import { openFile, storeUpload, type FileLimits } from '../../../shared/files/store.js';
import { openFixture, type SuiteCatalog } from '../../../shared/evaluation/suites.js';
import { requireKind } from '../principal.js';
import { defineOperations, mount, type QuerySpec } from '../openapi/operations.js';
import { STORED_FILE } from '../openapi/author-schemas.js';
import { failure } from '../openapi/schemas.js';

const SIGNED: Readonly<Record<string, QuerySpec>> = {
  exp: { description: 'Expiry, Unix seconds (signed)', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
  sig: { description: 'HMAC signature of the link', required: true, schema: { type: 'string' } },
};
const ATTACHMENT = { description: 'The content, as an attachment (nosniff, sandboxing CSP)', contentType: 'application/octet-stream' } as const;
const LINK_ERRORS = { 403: failure('A bad, expired or other file’s signature', 'invalid_link'), 404: failure('No such file', 'not_found') } as const;

export const fileOperations = defineOperations({
  upload: {
    id: 'uploadFile',
    method: 'post',
    path: '/v0/files',
    tag: 'files',
    auth: ['human', 'agent'],
    summary: 'Upload a file (the body is the file, any content type, at most 20 MB); get a `holon://files/<id>` handle',
    // Any media type (`*/*`): the Content-Type sent is stored and served back with the file (none: octet-stream).
    body: {
      schema: { type: 'string', format: 'binary' },
      contentType: '*/*',
      required: true,
      description: 'The file’s bytes, with their own Content-Type (any media type; none is application/octet-stream)',
    },
    responses: {
      201: { description: 'Stored for 24 hours', schema: STORED_FILE },
      400: failure('An empty body or a bad content type', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      409: failure('Past the account’s live-file quota (200 MB)'),
      413: failure('Larger than 20 MB'),
    },
  },
  download: {
    id: 'downloadFile',
    method: 'get',
    path: '/v0/files/{id}',
    tag: 'files',
    auth: ['none'],
    summary: 'Download a file through a signed link (valid 15 minutes)',
    params: { id: { description: 'The file id', example: 'f_abc' } },
    query: SIGNED,
    responses: { 200: ATTACHMENT, ...LINK_ERRORS },
  },
  fixture: {
    id: 'downloadFixture',
    method: 'get',
    path: '/v0/files/evals/{capability}/{name}',
    tag: 'files',
    auth: ['none'],
    summary: 'An evaluation fixture, through a link the evaluator signed for the case it runs',
    params: {
      capability: { description: 'The suite’s capability', example: 'data.profile' },
      name: { description: 'The fixture’s file name', example: 'table.csv' },
    },
    query: SIGNED,
    responses: { 200: ATTACHMENT, ...LINK_ERRORS },
  },
});

export interface FileRouteDeps {
  ctx: ServiceContext;
  /** HOLON_FILE_SECRET, or the dev process's own (services/compose.ts): verifies the links the runners signed. */
  linkSecret: string;
  limits: FileLimits;
  /** The evaluation suites, whose fixtures GET /v0/files/evals/{capability}/{name} serves to agents under evaluation. */
  suites?: SuiteCatalog;
}

/** The upload route, matched as Express matches it (any case, an optional trailing slash): no JSON parsing for it. */
export function isFileUpload(req: Request): boolean {
  return req.method === 'POST' && /^\/v0\/files\/?$/i.test(req.path);
}

/** A content type as sent, or application/octet-stream; printable ASCII, at most 127 characters. */
function contentTypeOf(req: Request): string {
  const declared = req.get('content-type')?.trim();
  if (declared === undefined || declared === '') return 'application/octet-stream';
  if (!/^[\x20-\x7e]{1,127}$/.test(declared) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+/.test(declared)) {
    throw new HolonError('invalid_request', 'the content-type must be a media type such as application/pdf, in at most 127 printable characters');
  }
  return declared;
}

function declaredLength(req: Request): number | undefined {
  const raw = req.get('content-length');
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(raw)) throw new HolonError('invalid_request', 'the content-length is not a number of bytes');
  return Number(raw);
}

/** Refused before the whole body was read: close the connection once answered, so the rest is never read. */
function closeAfterAnswer(req: Request, res: Response): void {
  res.set('connection', 'close');
  res.once('finish', () => req.destroy());
}

/** A file to send: what the headers say of it, and its bytes. */
interface Attachment {
  name: string;
  contentType: string;
  size: number;
  content: AsyncIterable<Buffer | string>;
}

/** A file as an attachment no browser renders or sniffs, streamed; a stream that breaks cuts the response short. */
async function sendAttachment(req: Request, res: Response, ctx: ServiceContext, file: Attachment): Promise<void> {
  const { content } = file;
  res.status(200);
  // setHeader, not res.type: the stored type exactly, nothing added (no charset guessed).
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.size));
  res.setHeader('Content-Disposition', `attachment; filename="${file.name.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
  res.setHeader('Cache-Control', 'private, no-store');
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    for await (const chunk of content) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await drained(res);
    }
    res.end();
  } catch (e) {
    // Headers are gone: cut the response short (its Content-Length is then not met), never finish it wrongly.
    ctx.log.warn({ file: file.name, err: { message: (e as Error).message } }, 'a file download was cut short');
    res.destroy();
  }
}

/** Until the response can take more, or is gone. */
function drained(res: Response): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function fileRoutes(deps: FileRouteDeps): Router {
  const { ctx, linkSecret, limits } = deps;
  const router = Router();

  mount(router, fileOperations.upload, async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'upload files');
    const contentType = contentTypeOf(req);
    const length = declaredLength(req);
    const carries = length !== undefined ? length > 0 : req.get('transfer-encoding') !== undefined;
    if (!carries) throw new HolonError('invalid_request', 'the request body is the file: send its bytes (any content-type, at most 20 MB)');
    let file: Awaited<ReturnType<typeof storeUpload>>;
    try {
      file = await storeUpload(
        ctx,
        { owner: p.kind === 'operator' ? OPERATOR_OWNER : p.account, contentType, ...(length !== undefined ? { declaredBytes: length } : {}), body: req },
        limits,
      );
    } catch (e) {
      if (!req.complete) closeAfterAnswer(req, res);
      throw e;
    }
    res.status(201).json({
      id: file.id,
      handle: fileHandle(file.id),
      size: file.size,
      sha256: file.sha256,
      content_type: file.contentType,
      expires_at: file.expiresAt.toISOString(),
    });
  });

  mount(router, fileOperations.download, async (req, res) => {
    const id = String(req.params.id);
    const { exp, sig } = req.query;
    // The signature first: without a valid one nothing is looked up, so a link says nothing about other files.
    const verdict = FILE_ID.test(id) ? verifyFileLink(linkSecret, { kind: 'upload', id }, { exp, sig }, ctx.now()) : 'invalid';
    if (verdict === 'expired') throw new HolonError('link_expired', 'this file link has expired: links are valid 15 minutes');
    if (verdict !== 'ok') throw new HolonError('invalid_link', 'this file link is not valid: it is not signed for this file');
    const opened = await openFile(ctx.db, id, ctx.now());
    if (!opened) throw new HolonError('not_found', 'there is no such file: it may have been deleted (24 hours after upload)');
    await sendAttachment(req, res, ctx, {
      name: opened.file.id,
      contentType: opened.file.contentType,
      size: opened.file.size,
      content: opened.content,
    });
  });

  // Evaluation fixtures (spec/evals.md): platform files, reachable only through the links the evaluator signs for
  // the cases it runs (kind `eval`, a few minutes); never through a call.
  mount(router, fileOperations.fixture, async (req, res) => {
    const capability = String(req.params.capability);
    const name = String(req.params.name);
    const { exp, sig } = req.query;
    const verdict = verifyFileLink(linkSecret, { kind: 'eval', id: `${capability}/${name}` }, { exp, sig }, ctx.now());
    if (verdict === 'expired') throw new HolonError('link_expired', 'this fixture link has expired: it was valid while its case ran');
    if (verdict !== 'ok') throw new HolonError('invalid_link', 'this fixture link is not valid: it is not signed for this fixture');
    const loaded = deps.suites?.get(capability);
    const opened = loaded ? await openFixture(loaded, name) : null;
    if (!opened) throw new HolonError('not_found', 'there is no such fixture on this gateway');
    const { fixture, stream } = opened;
    res.once('close', () => stream.destroy());
    await sendAttachment(req, res, ctx, { name, contentType: fixture.contentType, size: fixture.size, content: stream });
  });

  return router;
}
