/**
 * A2A routes (docs/a2a.md): the signed cards (`/.well-known/agent-card.json` for the gateway,
 * `/a2a/{ns}/{name}/.well-known/agent-card.json` for each listed agent), and each card's interfaces at its base path
 * (`/a2a/{ns}/{name}`, `/a2a/_gateway`): JSON-RPC at the base (POST), HTTP+JSON under it (`/message:send`, `/tasks/…`), both the SDK's
 * transports over one request handler (handler.ts). Requests pass the API's guards first (body, key, rate limits);
 * they need an agent key (dev mode: the local operator under `X-Holon-Mandate` or the default mandate).
 */
import { AgentCard } from '@a2a-js/sdk';
import { jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { type Request, type RequestHandler, type Response, Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { type KeyMandate, keyMandateOf } from '../key-mandate.js';
import { hitPayLimit, type PayLimits } from '../rate-limit.js';
import { issuerOf } from '../oauth-urls.js';
import { principalOf, requireKind } from '../principal.js';
import { type A2aTarget, A2aUser } from './caller.js';
import { agentCard, type CardJson, gatewayCard, GATEWAY_A2A_PATH, signCard } from './cards.js';
import type { A2aDeps } from './deps.js';
import { HolonA2aHandler } from './handler.js';
import { pushTokenKey } from '../../../shared/a2a/push.js';

export interface A2aRouteDeps extends Omit<A2aDeps, 'versionCard' | 'pushKey'> {
  /** Dev mode: the mandate a request names none. */
  defaultMandate: string;
  publicUrl?: string;
  /** HOLON_FILE_SECRET: push tokens are sealed under a key derived from it. */
  fileSecret?: string;
  /** Keyless paid calls' limits (per address), as REST's. */
  payLimits?: PayLimits;
}

const CARD_PATH = '/.well-known/agent-card.json';
/** `/a2a/{ns}/{name}` or `/a2a/_gateway`, then what is left (the card, or an interface's path). */
const A2A_PATH = /^\/a2a\/(?:(_gateway)|([a-z0-9][a-z0-9-]{0,37}[a-z0-9])\/([a-z0-9][a-z0-9-]{0,37}[a-z0-9]))(\/.*)?$/;

const sendCard = (res: Response, card: CardJson): void => {
  res.set({ 'Cache-Control': 'public, max-age=60', 'Access-Control-Allow-Origin': '*' }).type('application/json').send(JSON.stringify(card));
};

export function a2aRoutes(deps: A2aRouteDeps): Router {
  const router = Router();
  const { ctx } = deps;
  const baseOf = (req: Request) => issuerOf(req, deps.publicUrl);
  const versionCard = AgentCard.fromJSON({
    supportedInterfaces: [
      { url: GATEWAY_A2A_PATH, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: GATEWAY_A2A_PATH, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ],
  });
  const pushKey = pushTokenKey(deps.fileSecret);
  const handler = new HolonA2aHandler({ ...deps, versionCard, ...(pushKey ? { pushKey } : {}) });
  const users = new WeakMap<Request, A2aUser>();
  const userBuilder = async (req: Request) => {
    const user = users.get(req);
    if (!user) throw new Error('an A2A request reached the transport without its caller');
    return user;
  };
  const jsonRpc = jsonRpcHandler({ requestHandler: handler, userBuilder });
  const rest = restHandler({ requestHandler: handler, userBuilder });

  router.get(CARD_PATH, (req, res, next) => {
    const base = baseOf(req);
    gatewayCard(ctx, base)
      .then((card) => signCard(ctx, card, base))
      .then((card) => sendCard(res, card))
      .catch(next);
  });

  const a2a: RequestHandler = (req, res, next) => {
    const m = A2A_PATH.exec(req.path);
    if (!m) return next(new HolonError('not_found', 'no such A2A agent: /a2a/{namespace}/{name}'));
    const rest_ = m[4] ?? '/';
    const target: A2aTarget = m[1] ? { kind: 'gateway' } : { kind: 'agent', id: `${m[2]}/${m[3]}` };
    const found = target.kind === 'agent' ? ctx.registry.resolve(target.id) : undefined;
    if (found && !found.ok) return next(new HolonError('not_found', `there is no listed agent ${m[2]}/${m[3]}`));
    const base = baseOf(req);
    if (rest_ === CARD_PATH && req.method === 'GET') {
      const card = found?.ok ? agentCard(ctx, found.agent, base) : gatewayCard(ctx, base);
      card
        .then((c) => signCard(ctx, c, base))
        .then((c) => sendCard(res, c))
        .catch(next);
      return;
    }
    callerFor(req, res)
      .then((who) => {
        users.set(req, new A2aUser({ ...who, target, base }));
        req.url = rest_ + (req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '');
        const transport = rest_ === '/' && req.method === 'POST' ? jsonRpc : rest;
        transport(req, res, next);
      })
      .catch(next);
  };
  /** An agent key's (or dev mode's) mandate; without a key, when payments from outside are on, a payer (paid.ts). */
  async function callerFor(req: Request, res: Response): Promise<KeyMandate & { paying?: boolean }> {
    if (principalOf(res).kind === 'none' && ctx.payments) {
      if (deps.payLimits) await hitPayLimit(deps.payLimits, req, res, { perMin: ctx.payments.keylessPerMin });
      return { mandateId: '', askInClient: false, owner: 'payer', paying: true };
    }
    const p = requireKind(res, ['agent', 'operator'], 'call an agent over A2A (it takes an agent key: Authorization: Bearer hlk_a_…)');
    return keyMandateOf(ctx.db, deps.defaultMandate, req, p);
  }

  router.use('/a2a', (req, res, next) => {
    req.url = `/a2a${req.url}`;
    a2a(req, res, next);
  });
  return router;
}
