/**
 * The gateway's own MCP server at `/mcp` (spec/mcp.md, docs/mcp.md), on the MCP SDK v2, serving both protocol eras
 * from one set of tools (tool-server.ts):
 *
 *   2025-11-25 and earlier  sessions: `initialize` opens one (SDK's NodeStreamableHTTPServerTransport); the session
 *                           lives in the API process that opened it (put a load balancer's affinity on
 *                           `Mcp-Session-Id` when running several). How many, for whom, how long: sessions.ts.
 *   2026-07-28              stateless: every request carries its version and capabilities in `_meta`, and any API
 *                           process answers it (the SDK's createMcpHandler, one server instance per request). What a
 *                           request needs from an earlier one travels in its sealed `requestState` or the calls table.
 *
 * Which era a request is: the SDK's own classification (`isLegacyRequest`: no per-request envelope is 2025).
 *
 * The principal: hosted, the agent key's mandate and its `ask_in_client` (a 2025 session is bound to the key that
 * opened it; every later request must carry the same live key). In dev mode the local principal is `ask_in_client`
 * and the mandate is chosen with the `X-Holon-Mandate` header or `?mandate=` (default HOLON_MCP_MANDATE,
 * `demo/sandbox`). With payments from outside on, a request without a key pays per call. Which browser origins may
 * call: services/api/origins.ts.
 *
 * Everything refused here (no key, no session, too many sessions) is a JSON-RPC error body with plain words; a
 * 401 also names the Bearer scheme in `WWW-Authenticate`.
 */
import { httpStatusOf } from '../http-status.js';
import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type AuthInfo, type Server } from '@modelcontextprotocol/server';
import { HolonError } from '../../../shared/core/errors.js';
import { keyMandateOf } from '../key-mandate.js';
import { clientAddress } from '../client-address.js';
import { resourceMetadataOf } from '../oauth-urls.js';
import { bearerChallenge, principalOf, requireKind, type Principal } from '../principal.js';
import { sendJsonRpcError, SESSION_NOT_FOUND } from './errors.js';
import { compileTools, createToolServer } from './tool-server.js';
import { interpose } from './session-transport.js';
import { SESSION_LIMITS, SessionTable, type SessionEntry, type SessionLimits } from './sessions.js';
import type { McpDeps, McpPrincipal } from './tools.js';

/** How often idle sessions are looked for. */
const SWEEP_MS = 30_000;

export interface McpServerDeps extends McpDeps {
  /** Dev mode: the mandate when the connection names none. */
  defaultMandate: string;
  /** Defaults: SESSION_LIMITS (sessions.ts). */
  sessionLimits?: Partial<SessionLimits>;
}

interface Session extends SessionEntry {
  transport: NodeStreamableHTTPServerTransport;
  server: Server;
  /** Who may use it: the agent key's prefix, or 'operator' in dev mode. */
  owner: string;
}

export interface McpEndpoint {
  router: Router;
  /** Close every session (gateway stop). */
  close(): Promise<void>;
  sessionCount(): number;
}

const ownerOf = (p: Principal): string => (p.kind === 'agent' ? p.keyPrefix : p.kind);

/** Whose session quota a request counts against: the account (hosted) or the client address (dev mode). */
const quotaOf = (req: Request, p: Principal): string => (p.kind === 'agent' ? `account:${p.account}` : `address:${clientAddress(req, false)}`);

/**
 * Hosted, without a key: 401 naming the Bearer scheme and the protected resource metadata (RFC 9728 §5.1), where an
 * MCP client finds the gateway's authorization server and signs in (docs/mcp.md, "Signing in from an MCP client").
 * Also the header gate's answer (header-gate.ts).
 */
export function keylessRefusal(res: Response, why?: string): void {
  const message = `${why ? `${why}: ` : ''}/mcp takes an agent key: sign in from your MCP client, or send Authorization: Bearer hlk_a_...`;
  sendJsonRpcError(res, 401, message, { headers: { 'WWW-Authenticate': bearerChallenge(message, undefined, resourceMetadataOf(res)) } });
}

/** Refused when hosted and without a key, unless payments from outside are on (a keyless caller then pays per call). */
function keyless(res: Response, paying: boolean): boolean {
  if (principalOf(res).kind !== 'none' || paying) return false;
  keylessRefusal(res);
  return true;
}

/** What the endpoint's handlers share: its dependencies, the compiled tools, the session table. */
interface Endpoint {
  deps: McpServerDeps;
  compiled: ReturnType<typeof compileTools>;
  sessions: SessionTable<Session>;
}

/** A keyless payer (payments from outside), or the key's mandate (key-mandate.ts). */
async function principalFor(deps: McpServerDeps, req: Request, p: Extract<Principal, { kind: 'agent' | 'operator' | 'none' }>): Promise<McpPrincipal> {
  if (p.kind === 'none') return { mandateId: '', askInClient: false, owner: 'payer', paying: true };
  return keyMandateOf(deps.ctx.db, deps.defaultMandate, req, p);
}

/** Who a request of a 2026-07-28 client is: as a 2025 session's `initialize` decides it, but for this request only. */
async function modernPrincipal(deps: McpServerDeps, req: Request, res: Response): Promise<McpPrincipal> {
  const p =
    principalOf(res).kind === 'none' && deps.ctx.payments
      ? { kind: 'none' as const }
      : requireKind(res, ['agent', 'operator'], 'call /mcp (it takes an agent key: Authorization: Bearer hlk_a_…)');
  return principalFor(deps, req, p);
}

/** The principal handed to the per-request server through the SDK's AuthInfo (its `extra`). */
const authInfoOf = (who: McpPrincipal): AuthInfo => ({ token: 'holon', clientId: who.owner ?? 'payer', scopes: [], extra: { who } });
const principalIn = (auth: AuthInfo | undefined): McpPrincipal => {
  const who = auth?.extra?.who as McpPrincipal | undefined;
  if (!who) throw new Error('a 2026-07-28 request reached the MCP server without its principal');
  return who;
};

/** Open a session; a HolonError thrown is the answer (a key that may not, an unknown mandate). */
async function initialize(ep: Endpoint, req: Request, res: Response): Promise<void> {
  const { deps, sessions, compiled } = ep;
  const p =
    principalOf(res).kind === 'none' && deps.ctx.payments
      ? { kind: 'none' as const }
      : requireKind(res, ['agent', 'operator'], 'connect to /mcp (it takes an agent key: Authorization: Bearer hlk_a_…)');
  const principal = quotaOf(req, p);
  // The slot is taken before anything awaits: the table never holds more than its limits.
  const admitted = sessions.admit(principal);
  if (!admitted.ok) {
    const headers = { 'Retry-After': String(admitted.retryAfterS) };
    return sendJsonRpcError(res, admitted.status, admitted.message, { id: (req.body as { id?: unknown }).id, headers });
  }
  const { slot } = admitted;
  try {
    const who = await principalFor(deps, req, p);
    const server = createToolServer(deps, who, compiled, 'legacy');
    let session: Session | undefined;
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        session = {
          transport,
          server,
          owner: ownerOf(p),
          principal,
          lastUsed: 0,
          seq: 0,
          inFlight: 0,
          close: () => void transport.close().catch(() => undefined),
        };
        slot.fill(sessionId, session);
      },
    });
    // Set before connect: the server chains its own close handler after this one.
    transport.onclose = () => {
      if (transport.sessionId && session) sessions.remove(transport.sessionId, session);
    };
    await server.connect(transport);
    interpose(transport, () => (session ? sessions.begin(session) : () => undefined));
    await transport.handleRequest(req, res, req.body);
  } finally {
    slot.release();
  }
}

/** The session a request names, if its principal opened it; else answered 404 (an unknown session or another's). */
function sessionOf(ep: Endpoint, req: Request, res: Response): Session | undefined {
  const session = ep.sessions.get(req.get('mcp-session-id') ?? '');
  if (session && session.owner === ownerOf(principalOf(res))) return session;
  sendJsonRpcError(res, 404, 'unknown or expired MCP session: initialize a new one', {
    code: SESSION_NOT_FOUND,
    id: (req.body as { id?: unknown } | undefined)?.id,
  });
  return undefined;
}

export function createMcpEndpoint(deps: McpServerDeps): McpEndpoint {
  const limits = { ...SESSION_LIMITS, ...deps.sessionLimits };
  const sessions = new SessionTable<Session>(limits);
  const ep: Endpoint = { deps, compiled: compileTools(), sessions };
  const router = Router();
  // 2026-07-28: one server per request; 2025 requests never reach it (they are routed to sessions below).
  const modern = createMcpHandler(({ authInfo }) => createToolServer(deps, principalIn(authInfo), ep.compiled, 'modern'), {
    legacy: 'reject',
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    onerror: (e) => deps.ctx.log.warn({ err: { message: e.message } }, 'MCP request failed'),
  });
  const modernNode = toNodeHandler(modern);
  const serveModern = async (req: Request, res: Response): Promise<void> => {
    const who = await modernPrincipal(deps, req, res);
    (req as Request & { auth?: AuthInfo }).auth = authInfoOf(who);
    await modernNode(req, res, req.body);
  };

  const sweep = setInterval(() => sessions.sweep(), Math.min(SWEEP_MS, limits.idleMs));
  sweep.unref();

  router.post('/mcp', async (req, res) => {
    if (keyless(res, deps.ctx.payments !== undefined)) return;
    if (!req.get('mcp-session-id') && !(await isLegacyRequest(await toWebRequest(req, req.body), req.body))) {
      return serveModern(req, res).catch((e: unknown) => {
        if (!(e instanceof HolonError) || res.headersSent) throw e;
        sendJsonRpcError(res, httpStatusOf(e.code), e.message, { id: (req.body as { id?: unknown }).id });
      });
    }
    if (!req.get('mcp-session-id')) {
      if (!isInitializeRequest(req.body)) return sendJsonRpcError(res, 400, 'no MCP session: the first request must be initialize');
      return initialize(ep, req, res).catch((e: unknown) => {
        if (!(e instanceof HolonError) || res.headersSent) throw e;
        sendJsonRpcError(res, httpStatusOf(e.code), e.message, { id: req.body.id });
      });
    }
    const session = sessionOf(ep, req, res);
    if (!session) return;
    sessions.touch(session);
    await session.transport.handleRequest(req, res, req.body);
  });

  // GET opens the session's stream for server-initiated messages (an open stream is not use); DELETE ends the session.
  const existing: RequestHandler = async (req, res) => {
    if (keyless(res, deps.ctx.payments !== undefined)) return;
    const session = sessionOf(ep, req, res);
    if (!session) return;
    sessions.touch(session);
    await session.transport.handleRequest(req, res);
  };
  router.get('/mcp', existing);
  router.delete('/mcp', existing);

  return {
    router,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await modern.close().catch(() => undefined);
      await Promise.all(sessions.drain().map((s) => s.server.close().catch(() => undefined)));
    },
  };
}
