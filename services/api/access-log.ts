/**
 * One structured JSON line per request (pino, shared/platform/log.ts), written when the response ends:
 *
 *   {"msg":"request","request_id":"…","method":"GET","path":"/v0/calls/call_…","route":"/v0/calls/:id","status":200,
 *    "duration_ms":3.2,"call_id":"call_…"}
 *
 * The request id is the caller's `X-Request-Id` when it is 1 to 64 safe characters (letters, digits, `-`, `_`, `.`,
 * `:`), else a fresh UUID; it is echoed in the response's `X-Request-Id`. The path is logged WITHOUT its query string
 * (signed file links carry their signature there), and without the id of an MCP client's sign-in request
 * (`/v0/oauth/requests/…`: a secret of the browser tab that answers it); bodies and headers never are. `call_id` is the call the request
 * created or read (`res.locals.callId`, set by routes/calls.ts). Probes and scrapes (/healthz, /metrics) log at debug.
 */
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../../shared/platform/log.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const QUIET = new Set(['/healthz', '/metrics']);
/** Paths whose last segment is a secret: logged with it cut. */
const SECRET_SEGMENT = /^(\/v0\/oauth\/requests\/)[^/]+/i;

/** Runs `fn` once, when the response has been sent or the connection closed before that. */
export function afterResponse(res: Response, fn: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    fn();
  };
  res.once('finish', once);
  res.once('close', once);
}

function requestIdOf(req: Request): string {
  const sent = req.get('x-request-id');
  return sent !== undefined && REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** The matched route's template (`/v0/calls/:id`), when the router matched one with a string path. */
function routeOf(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? req.baseUrl + path : undefined;
}

export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    const path = req.originalUrl.split('?', 1)[0]!.replace(SECRET_SEGMENT, '$1…');
    afterResponse(res, () => {
      const route = routeOf(req);
      const callId = res.locals.callId as string | undefined;
      const line = {
        request_id: requestId,
        method: req.method,
        path: path.slice(0, 512),
        ...(route ? { route } : {}),
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        ...(callId ? { call_id: callId } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (QUIET.has(path)) log.debug(line, 'request');
      else log.info(line, 'request');
    });
    next();
  };
}
