/**
 * Who may talk to the gateway from a browser (the MCP transport spec makes Origin validation a MUST; gateway.md §7):
 *   - Origin: a request to /mcp, or a write to /v0/*, that carries an Origin header is accepted only from the
 *     gateway's own origins (HOLON_PUBLIC_URL, HOLON_SITE_URL) and, in dev mode, from loopback pages
 *     (http://localhost:*, 127.0.0.1, [::1]). Clients that are not browsers send no Origin and are not affected.
 *     Paths are matched in any letter case, as Express routes them.
 *   - The demo (/v0/demo/*, routes/demo.ts), its own rule: any method carrying an Origin is accepted only from the site
 *     (HOLON_SITE_URL; no site, no browser), loopback pages and the gateway's own origin included. The site gets CORS:
 *     `Access-Control-Allow-Origin: <site>` on every answer, and a preflight (OPTIONS) for the demo route is answered
 *     204 with the method and header it may send. No other route sends CORS headers, so nothing else is readable
 *     cross-origin.
 *   - Host (dev mode on a loopback address only): every request must name a loopback host, so a DNS-rebinding page
 *     (evil.example.com resolving to 127.0.0.1) reaches nothing.
 * Refusals are 403 with plain words (JSON-RPC shaped on /mcp, by app.ts).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import { READS } from './body-guard.js';

export interface OriginPolicy {
  /** Origins always allowed (the gateway's public URL and its site). */
  allowed: readonly string[];
  /** Dev mode: pages served from loopback addresses may call too. */
  loopbackPages: boolean;
  /** Dev mode on a loopback address: the Host header must name a loopback host. */
  loopbackHostOnly: boolean;
  /** HOLON_SITE_URL: the one origin the demo answers from a browser (CORS). */
  site?: string;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackName(hostname: string): boolean {
  return LOOPBACK_NAMES.has(hostname.toLowerCase()) || /^127(?:\.\d{1,3}){3}$/.test(hostname) || hostname.toLowerCase().endsWith('.localhost');
}

function originOf(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

const guarded = (req: Request) => {
  const path = req.path.toLowerCase();
  return path === '/mcp' || path === '/mcp/' || (path.startsWith('/v0/') && !READS.has(req.method));
};

const DEMO_PATH = /^\/v0\/demo(?:\/|$)/i;
/** The one demo route, `/v0/demo/{ns}/{name}` (routes/demo.ts): only its preflight is answered. */
const DEMO_ROUTE = /^\/v0\/demo\/[^/]+\/[^/]+\/?$/i;

/** The demo's rule: the site only, with CORS; a preflight answered here. */
function demoOrigin(site: string | undefined, req: Request, res: Response, next: NextFunction): void {
  res.vary('Origin');
  const origin = req.get('origin');
  if (origin === undefined) {
    next();
    return;
  }
  if (site === undefined || originOf(origin) !== site) {
    next(new HolonError('origin_not_allowed', `the demo answers web pages of the Holon site only, not ${origin.slice(0, 200)}`));
    return;
  }
  res.set({ 'Access-Control-Allow-Origin': site, 'Access-Control-Expose-Headers': 'Retry-After' });
  if (req.method === 'OPTIONS' && DEMO_ROUTE.test(req.path)) {
    res.set({ 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Content-Type', 'Access-Control-Max-Age': '600' }).status(204).end();
    return;
  }
  next();
}

export function originGuard(policy: OriginPolicy): RequestHandler {
  const allowed = new Set(policy.allowed.map(originOf).filter((o): o is string => o !== undefined));
  const site = policy.site === undefined ? undefined : originOf(policy.site);
  return (req, res, next) => {
    if (policy.loopbackHostOnly) {
      const host = req.get('host') ?? '';
      const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
      if (!isLoopbackName(hostname)) {
        next(new HolonError('host_not_allowed', 'this dev gateway answers only requests addressed to localhost, 127.0.0.1 or [::1]'));
        return;
      }
    }
    if (DEMO_PATH.test(req.path)) {
      demoOrigin(site, req, res, next);
      return;
    }
    const origin = req.get('origin');
    if (origin !== undefined && guarded(req)) {
      const o = originOf(origin);
      const ok = o !== undefined && (allowed.has(o) || (policy.loopbackPages && isLoopbackName(new URL(o).hostname)));
      if (!ok) {
        next(new HolonError('origin_not_allowed', `requests from the web page at ${origin.slice(0, 200)} are not accepted here`));
        return;
      }
    }
    next();
  };
}
