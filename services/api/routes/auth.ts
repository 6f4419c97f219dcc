/**
 * Signing in with GitHub (gateway.md §7 Accounts), hosted only; no key needed (the principal `none`):
 *   GET  /v0/auth/github?nonce=     → 302 to GitHub's authorize page, the state also in an HttpOnly, SameSite=Lax cookie;
 *                                     the nonce is the console tab's (sessionStorage), bound to the sign-in by its hash
 *   GET  /v0/auth/github/callback   → 302 to the console the gateway serves (HOLON_PUBLIC_URL/console, else the request's
 *                                     own origin) #login=<code> or #login_error=<reason>; never HOLON_SITE_URL, the public site
 *   POST /v0/auth/exchange {code, nonce} → handle, a human key expiring in 30 days (and the agent key for a new account),
 *                                     once, to the browser tab that started the sign-in (its nonce)
 * Without HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET all three answer 503; the rest of the gateway works.
 * The flow itself is shared/accounts/github-sign-in.ts.
 */
import { Router, type Request, type Response } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import type { GitHubSettings } from '../../../shared/accounts/github.js';
import { exchangeLoginCode, finishSignIn, SECRET_SHAPE, SignInRefused, startSignIn, STATE_TTL_MS } from '../../../shared/accounts/github-sign-in.js';
import type { WebhookSecrets } from '../../../shared/webhooks/secrets.js';
import { badQuery, queryString as oneQueryValue } from '../query.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { SIGNED_IN } from '../openapi/author-schemas.js';
import { failure, text } from '../openapi/schemas.js';

const NONCE_SHAPE = '43 base64url characters: 32 random bytes';

const EXCHANGE_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'nonce'],
  properties: {
    code: text(200, 'The one-time code from /console#login=<code>'),
    nonce: text(200, `The nonce the sign-in was started with (GET /v0/auth/github?nonce=), kept by the browser tab that started it (${NONCE_SHAPE})`),
  },
} as const;

const OFF = failure('Sign-in with GitHub is not configured on this gateway', 'github_sign_in_off');
const REDIRECT = { description: 'A redirect', headers: { Location: 'Where the browser goes' } };

export const authOperations = defineOperations({
  start: {
    id: 'startGitHubSignIn',
    method: 'get',
    path: '/v0/auth/github',
    tag: 'auth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'Start signing in with GitHub: a redirect to GitHub, the state in an HttpOnly cookie',
    description:
      'The sign-in is bound to the browser tab that starts it: the console makes a random nonce, keeps it in the tab’s sessionStorage and sends it here; only its SHA-256 is stored, and POST /v0/auth/exchange needs the nonce again, so a /console#login=<code> link opened in another browser signs nobody in.',
    query: {
      nonce: {
        description: `The browser’s sign-in nonce (${NONCE_SHAPE}), kept by the tab until the exchange`,
        required: true,
        schema: { type: 'string', pattern: SECRET_SHAPE.source },
      },
    },
    responses: { 302: REDIRECT, 400: failure('No nonce, or a malformed one: start signing in from the console', 'invalid_request'), 503: OFF },
  },
  callback: {
    id: 'finishGitHubSignIn',
    method: 'get',
    path: '/v0/auth/github/callback',
    tag: 'auth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'GitHub’s return: a redirect to /console#login=<code> or #login_error=<reason>',
    query: {
      state: { description: 'The state GitHub sends back', schema: { type: 'string' } },
      code: { description: 'GitHub’s authorization code', schema: { type: 'string' } },
      error: { description: 'GitHub’s refusal', schema: { type: 'string' } },
    },
    responses: { 302: REDIRECT, 503: OFF },
  },
  exchange: {
    id: 'exchangeLoginCode',
    method: 'post',
    path: '/v0/auth/exchange',
    tag: 'auth',
    auth: ['none'],
    hostedOnly: true,
    summary: 'Trade the one-time login code for the handle and a human key expiring in 30 days (once)',
    description:
      'Only with the nonce the sign-in was started with. A wrong nonce is answered exactly like an unknown code (`invalid_code`) and does not spend the code; the code is spent by the one exchange that succeeds (or by one for a disabled account).',
    body: { schema: EXCHANGE_BODY, example: { code: 'c0ffee', nonce: 'n0nce' } },
    responses: {
      200: { description: 'Signed in; keys shown once', schema: SIGNED_IN },
      400: failure(
        'A bad body (`invalid_request`: no nonce), or a code that is unknown, used, expired or not this nonce’s (`invalid_code`)',
        'invalid_request',
        'invalid_code',
      ),
      403: failure('The account is disabled', 'account_disabled'),
      503: OFF,
    },
  },
});

const readExchange = bodyReader<{ code: string; nonce: string }>(EXCHANGE_BODY);

export interface GitHubSignInOptions {
  /** The OAuth app (HOLON_GITHUB_*); undefined = sign-in is off (503). */
  client?: GitHubSettings;
  /** HOLON_PUBLIC_URL: the callback URL is `<it>/v0/auth/github/callback` (else the request's own host). */
  publicUrl?: string;
}

export interface AuthDeps {
  ctx: ServiceContext;
  hosted: boolean;
  signupCredit: bigint;
  github?: GitHubSignInOptions;
  /** A new account's webhook signing secret is minted with its first keys (shared/webhooks/secrets.ts). */
  webhooks?: WebhookSecrets;
}

const CALLBACK_PATH = authOperations.callback.path;
const COOKIE_PATH = '/v0/auth/github';

/** The gateway's origin as the browser sees it: HOLON_PUBLIC_URL, else the request's own (tests, local trials). */
function originOf(req: Request, options: GitHubSignInOptions): string {
  return options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** Over https the cookie is `__Host-` (Secure, Path=/, no Domain): no sibling site can plant one. */
function stateCookie(secure: boolean): { name: string; attributes: string } {
  return secure
    ? { name: '__Host-holon_github_state', attributes: 'Path=/; HttpOnly; SameSite=Lax; Secure' }
    : { name: 'holon_github_state', attributes: `Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax` };
}

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const queryString = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' ? v : undefined;
};

/** The browser's sign-in nonce, or a 400: without one the code the sign-in ends with could never be traded. */
function nonceOf(req: Request): string {
  const nonce = oneQueryValue(req, 'nonce', 200);
  if (nonce === undefined || !SECRET_SHAPE.test(nonce)) {
    throw badQuery('nonce', `is required: ${NONCE_SHAPE}, made by the browser that signs in (start signing in from the console)`);
  }
  return nonce;
}

export function authRoutes(deps: AuthDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;
  const options = deps.github ?? {};
  const client = options.client;
  if (!client) ctx.log.info('GitHub sign-in is off: set HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET to turn it on');

  /** The OAuth app, or a 503: a setting that only turns a feature off never stops the gateway. */
  const configured = (): GitHubSettings => {
    if (!client) throw new HolonError('github_sign_in_off', 'signing in with GitHub is not configured on this gateway');
    return client;
  };
  const noStore = (res: Response) => res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  /** The console is served by the gateway itself (routes/console.ts), at its public origin: not on HOLON_SITE_URL. */
  const consoleUrl = (fragment: string) => `${options.publicUrl ?? ''}/console#${fragment}`;

  mount(router, authOperations.start, async (req, res) => {
    const github = configured();
    const nonce = nonceOf(req);
    const origin = originOf(req, options);
    const started = await startSignIn(ctx.db, github, { redirectUri: `${origin}${CALLBACK_PATH}`, nonce }, ctx.now());
    const cookie = stateCookie(origin.startsWith('https:'));
    noStore(res);
    res.set('Set-Cookie', `${cookie.name}=${started.state}; Max-Age=${STATE_TTL_MS / 1000}; ${cookie.attributes}`);
    res.redirect(302, started.location);
  });

  mount(router, authOperations.callback, async (req, res) => {
    const github = configured();
    const cookie = stateCookie(originOf(req, options).startsWith('https:'));
    const state = queryString(req, 'state');
    const code = queryString(req, 'code');
    const error = queryString(req, 'error');
    let fragment: string;
    try {
      const signedIn = await finishSignIn(
        { db: ctx.db, log: ctx.log, github, signup: { credit: deps.signupCredit, registry: ctx.registry, signingKey: ctx.signingKey }, now: ctx.now() },
        { state, code, error, cookie: readCookie(req, cookie.name) },
      );
      fragment = `login=${signedIn.code}`;
    } catch (e) {
      if (!(e instanceof SignInRefused)) throw e;
      fragment = `login_error=${e.reason}`;
    }
    noStore(res);
    // The state is spent (or refused): the cookie goes.
    res.set('Set-Cookie', `${cookie.name}=; Max-Age=0; ${cookie.attributes}`);
    res.redirect(302, consoleUrl(fragment));
  });

  mount(router, authOperations.exchange, async (req, res) => {
    configured();
    const r = readExchange(req.body);
    r.done();
    const exchanged = await exchangeLoginCode(ctx.db, r.body, ctx.now(), deps.webhooks);
    noStore(res);
    res.json({
      ...exchanged,
      note: exchanged.keys.agent
        ? 'the keys are shown once: keep them now. The human key expires after 30 days (sign in again for a new one); the agent key acts under the sandbox mandate.'
        : 'the key is shown once: keep it now. It expires after 30 days: sign in again for a new one.',
    });
  });

  return router;
}
