/**
 * Signing in with GitHub (gateway.md §7 Accounts), hosted only; no key needed (the principal `none`):
 *   GET  /v0/auth/github            → 302 to GitHub's authorize page, the state also in an HttpOnly, SameSite=Lax cookie
 *   GET  /v0/auth/github/callback   → 302 to /console#login=<code> or /console#login_error=<reason> (on HOLON_SITE_URL when set)
 *   POST /v0/auth/exchange {code}   → handle, a human key expiring in 30 days (and the agent key for a new account), once
 * Without HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET all three answer 503; the rest of the gateway works.
 * The flow itself is shared/hosted/github-sign-in.ts.
 */
import { Router, type Request, type Response } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import type { GitHubSettings } from '../../../shared/hosted/github.js';
import { exchangeLoginCode, finishSignIn, SignInRefused, startSignIn, STATE_TTL_MS } from '../../../shared/hosted/github-sign-in.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';

export interface GitHubSignInOptions {
  /** The OAuth app (HOLON_GITHUB_*); undefined = sign-in is off (503). */
  client?: GitHubSettings;
  /** HOLON_PUBLIC_URL: the callback URL is `<it>/v0/auth/github/callback` (else the request's own host). */
  publicUrl?: string;
  /** HOLON_SITE_URL: where the console is (else the gateway itself). */
  siteUrl?: string;
}

export interface AuthDeps {
  ctx: ServiceContext;
  hosted: boolean;
  signupCredit: bigint;
  github?: GitHubSignInOptions;
}

const CALLBACK_PATH = '/v0/auth/github/callback';
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

export function authRoutes(deps: AuthDeps): Router {
  const router = Router();
  if (!deps.hosted) return router;
  const { ctx } = deps;
  const options = deps.github ?? {};
  const client = options.client;
  if (!client) ctx.log.info('GitHub sign-in is off: set HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET to turn it on');

  /** The OAuth app, or a 503: a setting that only turns a feature off never stops the gateway. */
  const configured = (): GitHubSettings => {
    if (!client) throw new HolonError('github_sign_in_off', 503, 'signing in with GitHub is not configured on this gateway');
    return client;
  };
  const noStore = (res: Response) => res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
  const consoleUrl = (fragment: string) => `${options.siteUrl ?? ''}/console#${fragment}`;

  router.get(
    '/v0/auth/github',
    asyncRoute(async (req, res) => {
      const github = configured();
      const origin = originOf(req, options);
      const started = await startSignIn(ctx.db, github, `${origin}${CALLBACK_PATH}`, ctx.now());
      const cookie = stateCookie(origin.startsWith('https:'));
      noStore(res);
      res.set('Set-Cookie', `${cookie.name}=${started.state}; Max-Age=${STATE_TTL_MS / 1000}; ${cookie.attributes}`);
      res.redirect(302, started.location);
    }),
  );

  router.get(
    CALLBACK_PATH,
    asyncRoute(async (req, res) => {
      const github = configured();
      const cookie = stateCookie(originOf(req, options).startsWith('https:'));
      const state = queryString(req, 'state');
      const code = queryString(req, 'code');
      const error = queryString(req, 'error');
      let fragment: string;
      try {
        const signedIn = await finishSignIn(
          { db: ctx.db, log: ctx.log, github, signup: { credit: deps.signupCredit, registry: ctx.registry }, now: ctx.now() },
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
    }),
  );

  router.post(
    '/v0/auth/exchange',
    asyncRoute(async (req, res) => {
      configured();
      const r = new BodyReader(requireObject(req.body), ['code']);
      const code = r.string('code', { required: true, max: 200 });
      r.done();
      const exchanged = await exchangeLoginCode(ctx.db, code!, ctx.now());
      noStore(res);
      res.json({
        ...exchanged,
        note: exchanged.keys.agent
          ? 'the keys are shown once: keep them now. The human key expires after 30 days (sign in again for a new one); the agent key acts under the sandbox mandate.'
          : 'the key is shown once: keep it now. It expires after 30 days: sign in again for a new one.',
      });
    }),
  );

  return router;
}
