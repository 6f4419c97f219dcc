/**
 * The 2026-07-28 standard headers read before the body (docs/mcp.md, "Headers first"): a request to `/mcp` that names
 * its method in `Mcp-Method` (and its tool in `Mcp-Name`) is refused from them alone, before its body is read or
 * parsed, when its principal could not use it anyway: hosted, without a key, a 401 (the same answer as `/mcp`'s own,
 * `WWW-Authenticate` naming the Bearer scheme) — unless payments from outside are on and it asks for what a keyless
 * caller may use (discovery, the tool list, `call_agent` and `get_agent`). That the headers agree with the body is the
 * SDK's check, once the body is read (`HeaderMismatch`, -32020). 2025 clients send no `Mcp-Method`: the gate lets them
 * through to the same refusals after the body.
 */
import type { RequestHandler } from 'express';
import { keylessRefusal } from './server.js';
import { KEYLESS_TOOLS } from './tool-server.js';

/** What a caller without a key may ask, by method (and by tool for tools/call), when payments from outside are on. */
const KEYLESS_METHODS: ReadonlySet<string> = new Set(['server/discover', 'tools/list', 'ping', 'subscriptions/listen']);

export function mcpHeaderGate(options: { hosted: boolean; paying: () => boolean }): RequestHandler {
  return (req, res, next) => {
    const method = req.get('mcp-method');
    if (!options.hosted || req.method !== 'POST' || req.path !== '/mcp' || method === undefined || req.get('authorization') !== undefined) {
      next();
      return;
    }
    const name = req.get('mcp-name') ?? '';
    const allowed = options.paying() && (KEYLESS_METHODS.has(method) || (method === 'tools/call' && KEYLESS_TOOLS.has(name)));
    if (allowed) {
      next();
      return;
    }
    // The body is never read: the connection is closed once the answer is sent, so nobody waits on it.
    res.set('Connection', 'close');
    keylessRefusal(res, options.paying() ? `${name || method} needs an agent key` : undefined);
  };
}
