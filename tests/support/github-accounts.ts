/**
 * Accounts signed in with GitHub, for tests: the whole redirect flow against the fake GitHub
 * (tests/support/fake-github.ts), carrying the state cookie and the browser's sign-in nonce by hand, then the exchange
 * of the one-time code with that nonce.
 */
import { randomBytes } from 'node:crypto';
import type { FakeGitHub } from './fake-github.js';
import { send, type Account } from './http.js';

/** Follow one redirect without following it: the Location and the cookies set. */
async function hop(url: string, cookie?: string): Promise<{ location: string; cookies: string[] }> {
  const res = await fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
  await res.arrayBuffer();
  const location = res.headers.get('location');
  if (res.status < 300 || res.status >= 400 || !location) throw new Error(`expected a redirect from ${url}, got ${res.status}`);
  return { location: new URL(location, url).toString(), cookies: res.headers.getSetCookie() };
}

/**
 * Add `login` to the fake GitHub (with `emails`, else GitHub's default address) and sign in to the gateway as them: a
 * new account (handle = the login in lower case) the first time, with a human key and the sandbox's agent key; or,
 * when an email account has the login's verified primary address, that account, now linked.
 */
export async function signInWithGitHub(
  base: string,
  github: FakeGitHub,
  login: string,
  id: number,
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>,
): Promise<Account & { githubId: number; webhookSecret?: string | null }> {
  github.addUser({ id, login, ...(emails ? { emails } : {}) });
  github.signIn(login);
  // What the console keeps in the tab's sessionStorage: 32 random bytes, base64url.
  const nonce = randomBytes(32).toString('base64url');
  const start = await hop(`${base}/v0/auth/github?nonce=${nonce}`);
  const cookie = start.cookies.map((c) => c.split(';')[0]!).join('; ');
  const back = await hop(start.location);
  const done = await hop(back.location, cookie);
  const code = new URLSearchParams(new URL(done.location).hash.slice(1)).get('login');
  if (!code) throw new Error(`sign-in of ${login} failed: ${done.location}`);
  const r = await send(base, 'POST', '/v0/auth/exchange', { body: { code, nonce } });
  if (r.status !== 200) throw new Error(`exchange refused: ${r.status} ${JSON.stringify(r.body)}`);
  return { handle: r.body.handle, human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent?.key, githubId: id, webhookSecret: r.body.webhook_secret };
}
