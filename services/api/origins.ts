/**
 * Who may talk to the gateway from a browser (the MCP transport spec makes Origin validation a MUST; gateway.md §7):
 *   - Origin: a request to /mcp, or a write to /v0/*, that carries an Origin header is accepted only from the
 *     gateway's own origins (HOLON_PUBLIC_URL, HOLON_SITE_URL) and, in dev mode, from loopback pages
 *     (http://localhost:*, 127.0.0.1, [::1]). Clients that are not browsers send no Origin and are not affected.
 *   - Host (dev mode on a loopback address only): every request must name a loopback host, so a DNS-rebinding page
 *     (evil.example.com resolving to 127.0.0.1) reaches nothing.
 * Refusals are 403 with plain words (JSON-RPC shaped on /mcp, by app.ts).
 */
import type { Request, RequestHandler } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import { READS } from './bodies.js';

export interface OriginPolicy {
  /** Origins always allowed (the gateway's public URL and its site). */
  allowed: readonly string[];
  /** Dev mode: pages served from loopback addresses may call too. */
  loopbackPages: boolean;
  /** Dev mode on a loopback address: the Host header must name a loopback host. */
  loopbackHostOnly: boolean;
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

const guarded = (req: Request) => req.path === '/mcp' || (req.path.startsWith('/v0/') && !READS.has(req.method));

export function originGuard(policy: OriginPolicy): RequestHandler {
  const allowed = new Set(policy.allowed.map(originOf).filter((o): o is string => o !== undefined));
  return (req, _res, next) => {
    if (policy.loopbackHostOnly) {
      const host = req.get('host') ?? '';
      const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
      if (!isLoopbackName(hostname)) {
        next(new HolonError('host_not_allowed', 403, 'this dev gateway answers only requests addressed to localhost, 127.0.0.1 or [::1]'));
        return;
      }
    }
    const origin = req.get('origin');
    if (origin !== undefined && guarded(req)) {
      const o = originOf(origin);
      const ok = o !== undefined && (allowed.has(o) || (policy.loopbackPages && isLoopbackName(new URL(o).hostname)));
      if (!ok) {
        next(new HolonError('origin_not_allowed', 403, `requests from the web page at ${origin.slice(0, 200)} are not accepted here`));
        return;
      }
    }
    next();
  };
}
