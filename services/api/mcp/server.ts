/**
 * The gateway's own MCP server at `/mcp` (spec/mcp.md), over Streamable HTTP with the SDK's low-level Server
 * (the tools' schemas are plain JSON Schema; session-server.ts). Sessions are stateful: an approval form
 * (elicitation) is a request from the server whose answer arrives as a later POST of the same session, so a session
 * lives in the API process that opened it (put a load balancer's affinity on the `Mcp-Session-Id` header when
 * running several). How many, for whom and for how long: sessions.ts.
 *
 * Each session is bound at `initialize` to one principal: the mandate everything runs under, and whether approval
 * forms may be shown. Hosted: the agent key's mandate and its `ask_in_client`; every later request of the session
 * must carry the same live key (a revoked key ends the session's use at once). In dev mode the local principal is
 * `ask_in_client` and the mandate is chosen per connection with the `X-Holon-Mandate` header or `?mandate=`
 * (default HOLON_MCP_MANDATE, `demo/sandbox`). Which browser origins may call: services/api/origins.ts.
 *
 * Everything refused here (no key, no session, too many sessions) is a JSON-RPC error body with plain words; a
 * 401 also names the Bearer scheme in `WWW-Authenticate`.
 */
import { httpStatusOf } from '../http-status.js';
import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { HolonError } from '../../../shared/core/errors.js';
import { loadMandate } from '../../../shared/mandates/store.js';
import { clientAddress } from '../client-address.js';
import { bearerChallenge, principalOf, requireKind, type Principal } from '../principal.js';
import { sendJsonRpcError, SESSION_NOT_FOUND } from './errors.js';
import { compileTools, createSessionServer, interpose } from './session-server.js';
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
  transport: StreamableHTTPServerTransport;
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

/** Hosted, without a key: 401 naming the scheme, so that an MCP client asks for a key instead of looking for OAuth. */
function keyless(res: Response, paying: boolean): boolean {
  // With payments from outside on, a session without a key pays per call (docs/payments.md).
  if (principalOf(res).kind !== 'none' || paying) return false;
  const message = '/mcp takes an agent key: Authorization: Bearer hlk_a_...';
  sendJsonRpcError(res, 401, message, { headers: { 'WWW-Authenticate': bearerChallenge(message) } });
  return true;
}

/** What the endpoint's handlers share: its dependencies, the compiled tools, the session table. */
interface Endpoint {
  deps: McpServerDeps;
  compiled: ReturnType<typeof compileTools>;
  sessions: SessionTable<Session>;
}

/**
 * Hosted: an agent key, under its one mandate, asking in the client only when the key says so.
 * Dev mode: the local operator, ask_in_client, under the mandate the connection names.
 */
async function principalFor(deps: McpServerDeps, req: Request, p: Extract<Principal, { kind: 'agent' | 'operator' | 'none' }>): Promise<McpPrincipal> {
  if (p.kind === 'none') return { mandateId: '', askInClient: false, owner: 'payer', paying: true };
  if (p.kind === 'agent') return { mandateId: p.mandateId, askInClient: p.askInClient, owner: `key:${p.keyPrefix}` };
  const named = req.get('x-holon-mandate') ?? (typeof req.query.mandate === 'string' ? req.query.mandate : undefined);
  const mandateId = named?.trim() || deps.defaultMandate;
  if (mandateId.length > 300 || !(await loadMandate(deps.ctx.db, mandateId))) {
    throw new HolonError('not_found', `there is no mandate ${mandateId.slice(0, 300)}: name one with the X-Holon-Mandate header or ?mandate=`);
  }
  return { mandateId, askInClient: true, owner: 'operator' };
}

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
    const server = createSessionServer(deps, who, compiled);
    let session: Session | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
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

  const sweep = setInterval(() => sessions.sweep(), Math.min(SWEEP_MS, limits.idleMs));
  sweep.unref();

  router.post('/mcp', async (req, res) => {
    if (keyless(res, deps.ctx.payments !== undefined)) return;
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
      await Promise.all(sessions.drain().map((s) => s.server.close().catch(() => undefined)));
    },
  };
}
