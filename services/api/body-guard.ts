/**
 * Request bodies, before any route sees them (gateway.md §7, "Bad input"):
 *   - a body is JSON: any request that says it carries something else, or carries bytes without saying, is refused
 *     `415` — so a web page cannot spend a dev gateway's money with a "simple" cross-site request (text/plain,
 *     form posts), which browsers send without asking;
 *   - parsed bodies are storable and bounded: no NUL, no lone UTF-16 surrogate, at most MAX_JSON_DEPTH levels
 *     (shared/core/json-limits.ts) → `400` with the path, before admission, before anything is hashed or stored.
 * On /mcp the same refusals are JSON-RPC errors (services/api/app.ts answers them).
 */
import type { Request, RequestHandler } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import { jsonProblem } from '../../shared/core/json-limits.js';

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/i;

function carriesBytes(req: Request): boolean {
  const length = req.get('content-length');
  return req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

/** Methods that carry no body and change nothing. */
export const READS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 415 unless the body of a write is declared JSON (a bodiless one may omit the type; reads carry no body). */
export function requireJson(): RequestHandler {
  return (req, _res, next) => {
    if (READS.has(req.method)) {
      next();
      return;
    }
    const declared = req.get('content-type');
    const type = declared?.split(';')[0]?.trim() ?? '';
    if ((declared !== undefined || carriesBytes(req)) && !JSON_TYPE.test(type)) {
      next(
        new HolonError(
          'unsupported_media_type',
          `request bodies are JSON: send "content-type: application/json"${declared ? `, not "${type.slice(0, 100)}"` : ''}`,
        ),
      );
      return;
    }
    next();
  };
}

/** 400 for a parsed body that cannot be stored or nests too deep, naming where. */
export function checkBody(): RequestHandler {
  return (req, _res, next) => {
    const problem = req.body === undefined ? undefined : jsonProblem(req.body);
    next(problem ? new HolonError('invalid_request', `the request body ${problem.message} at ${problem.path}`, [problem]) : undefined);
  };
}
