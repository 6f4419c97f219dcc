/**
 * Sign in with GitHub (gateway.md §7 Accounts) against a fake GitHub on loopback (tests/support/fake-github.ts):
 * the whole redirect flow with a browser that follows redirects, keeps cookies and starts each sign-in with its own
 * nonce (the console's, in the tab's sessionStorage), then the exchange of the one-time code for keys, which needs
 * that nonce (a code planted in another browser is refused); every refusal's reason; sign-in off without an OAuth
 * app; several API processes on one database; and nothing secret at rest. Real Postgres and Redis; the ledger audit runs after every gateway test.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { fetch } from 'undici';
import type { Knex } from 'knex';
import { isPublicMember, readRepository, readUser, GitHubUnavailable, type GitHubSettings } from '../../shared/accounts/github.js';
import { ConfigError, loadConfig, type Config } from '../../shared/platform/config.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';

const DAY_MS = 24 * 3600 * 1000;
/** GitHub that hangs is given up on this fast here (HOLON_GITHUB_TIMEOUT_MS); the default is 10 s. */
const TIMEOUT_MS = 400;

// ------------------------------------------------------------------ a browser: follows redirects, keeps cookies

interface Visit {
  /** Where the browser ended: the console's URL, fragment included. */
  url: string;
  /** The fragment's parameters (`login`, `login_error`). */
  hash: URLSearchParams;
  /** Every response on the way, in order. */
  hops: Array<{ url: string; status: number; location: string | null; setCookie: string[] }>;
}

/**
 * A cookie jar per host name (as in browsers, ports do not separate cookies), honouring Path and Max-Age=0, and the
 * sign-in nonce the console keeps in this browser's sessionStorage.
 */
class Browser {
  private readonly jar = new Map<string, { value: string; path: string }>();
  readonly nonce = newNonce();

  constructor(private readonly route: (url: string) => string = (u) => u) {}

  cookie(name: string): string | undefined {
    return this.jar.get(name)?.value;
  }

  /** A cookie this browser did not get from the gateway (one copied from another browser). */
  plant(name: string, value: string, path = '/v0/auth/github'): void {
    this.jar.set(name, { value, path });
  }

  /**
   * Open `url` and follow redirects until a page that is not a redirect, the console (a fragment, not fetched), or
   * a URL `stopBefore` names (not fetched either: `url` is where the browser was about to go).
   */
  async open(start: string, stopBefore: (u: URL) => boolean = () => false): Promise<Visit> {
    const hops: Visit['hops'] = [];
    let url = start;
    for (let i = 0; i < 10; i++) {
      const target = new URL(this.route(url));
      if (target.pathname === '/console' || stopBefore(target)) return { url: target.toString(), hash: new URLSearchParams(target.hash.slice(1)), hops };
      const cookies = [...this.jar.entries()].filter(([, c]) => target.pathname.startsWith(c.path)).map(([n, c]) => `${n}=${c.value}`);
      const res = await fetch(target, { redirect: 'manual', headers: cookies.length ? { cookie: cookies.join('; ') } : {} });
      await res.arrayBuffer();
      const setCookie = res.headers.getSetCookie();
      for (const c of setCookie) this.store(c);
      const location = res.headers.get('location');
      hops.push({ url: target.toString(), status: res.status, location, setCookie });
      if (res.status < 300 || res.status >= 400 || !location) return { url: target.toString(), hash: new URLSearchParams(), hops };
      url = new URL(location, target).toString();
    }
    throw new Error('too many redirects');
  }

  private store(header: string): void {
    const [pair, ...attributes] = header.split(';').map((s) => s.trim());
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq);
    const attr = new Map(attributes.map((a) => [a.split('=')[0]!.toLowerCase(), a.split('=')[1] ?? '']));
    if (attr.get('max-age') === '0') this.jar.delete(name);
    else this.jar.set(name, { value: pair!.slice(eq + 1), path: attr.get('path') || '/' });
  }
}

const COOKIE = 'holon_github_state';

/** What the console makes: 32 random bytes, base64url. */
function newNonce(): string {
  return randomBytes(32).toString('base64url');
}

const startUrl = (browser: Browser, base: string) => `${base}/v0/auth/github?nonce=${browser.nonce}`;

async function signIn(browser: Browser, base: string): Promise<Visit> {
  return browser.open(startUrl(browser, base));
}

/** A login code and the nonce of the browser it came back to. */
interface Login {
  code: unknown;
  nonce?: unknown;
}

/** The code the sign-in came back with, and this browser's nonce. */
function loginOf(browser: Browser, v: Visit): { code: string; nonce: string } {
  const code = v.hash.get('login');
  if (!code) throw new Error(`no login code: ${v.url}`);
  return { code, nonce: browser.nonce };
}

async function loginCode(browser: Browser, base: string): Promise<{ code: string; nonce: string }> {
  return loginOf(browser, await signIn(browser, base));
}

/** Up to GitHub's redirect back, not taking it: the callback URL, with GitHub's code and the state. */
async function callbackOf(browser: Browser, base: string): Promise<string> {
  return (await browser.open(startUrl(browser, base), (u) => u.pathname === '/v0/auth/github/callback')).url;
}

const exchange = (base: string, login: Login) => send(base, 'POST', '/v0/auth/exchange', { body: login });

/** The human key (and the agent key, for a new account) of a whole sign-in. */
async function signedIn(browser: Browser, base: string): Promise<any> {
  const r = await exchange(base, await loginCode(browser, base));
  if (r.status !== 200) throw new Error(`exchange refused: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

// ------------------------------------------------------------------ a hosted gateway pointed at the fake

let github: FakeGitHub;
beforeEach(async () => {
  github = await startFakeGitHub();
});
afterEach(async () => {
  await github.close();
});

const withGitHub = (extra: Partial<Config> = {}): Partial<Config> => ({ ...github.config, githubTimeoutMs: TIMEOUT_MS, ...extra });

async function withGateway(use: (g: TestGateway) => Promise<void>, extra: Partial<Config> = {}): Promise<void> {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub(extra) }), use);
}

/** The GitHub user most tests sign in as, signed in to GitHub in the browser. */
function octocat(): void {
  github.addUser({ id: 583231, login: 'Octo-Cat', emails: [{ email: 'Octo@Example.test', primary: true, verified: true }] });
  github.signIn('Octo-Cat');
}

async function rowCount(knex: Knex, table: string): Promise<number> {
  return Number((await knex(table).count<Array<{ n: bigint }>>('* as n'))[0]!.n);
}

/** The text of every row of every table contains none of `secrets`: the tables (and how many rows) that do. */
async function rowsHolding(knex: Knex, secrets: readonly string[]): Promise<string[]> {
  const tables: string[] = await knex('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).pluck('table_name');
  expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'github_oauth_states', 'github_login_codes', 'journal_entries']));
  const hits: string[] = [];
  for (const table of tables) {
    for (const secret of secrets) {
      const r = await knex.raw<{ rows: Array<{ n: number }> }>('SELECT count(*)::int AS n FROM ?? AS t WHERE strpos(row_to_json(t)::text, ?) > 0', [
        table,
        secret,
      ]);
      if (r.rows[0]!.n > 0) hits.push(`${table} (${r.rows[0]!.n})`);
    }
  }
  return hits;
}

describe('Sign in with GitHub', () => {
  test('a first sign-in makes the account: handle = login in lower case, starter mandate, credit, a 30-day human key and the agent key', async () => {
    await withGateway(async (g) => {
      octocat();
      const browser = new Browser();
      const v = await signIn(browser, g.url);

      // The gateway sends the browser to GitHub with a state, also set in an HttpOnly, SameSite=Lax cookie.
      const [start, authorize, callback] = v.hops;
      expect(start!.url).toBe(`${g.url}/v0/auth/github?nonce=${browser.nonce}`);
      expect(start!.status).toBe(302);
      const to = new URL(start!.location!);
      expect(`${to.origin}${to.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
      const state = to.searchParams.get('state')!;
      expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Object.fromEntries(to.searchParams)).toEqual({
        client_id: github.clientId,
        redirect_uri: `${g.url}/v0/auth/github/callback`,
        scope: 'user:email',
        state,
      });
      expect(start!.setCookie).toEqual([`${COOKIE}=${state}; Max-Age=600; Path=/v0/auth/github; HttpOnly; SameSite=Lax`]);
      expect(authorize!.location).toContain(`${g.url}/v0/auth/github/callback?code=`);
      // GitHub's redirect back lands on the console with a one-time code (no key in any URL); the cookie is spent.
      expect(callback!.status).toBe(302);
      expect(callback!.location).toMatch(/^\/console#login=[A-Za-z0-9_-]{43}$/);
      expect(callback!.setCookie).toEqual([`${COOKIE}=; Max-Age=0; Path=/v0/auth/github; HttpOnly; SameSite=Lax`]);
      expect(browser.cookie(COOKIE)).toBeUndefined();
      for (const hop of v.hops) expect(hop.location ?? '').not.toContain('hlk_');

      const login = loginOf(browser, v);
      const r = await exchange(g.url, login);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.body).toMatchObject({
        handle: 'octo-cat',
        outcome: 'created',
        account: { handle: 'octo-cat', email: 'octo@example.test', github: { id: 583231, login: 'Octo-Cat' } },
        keys: {
          human: { kind: 'human', key: expect.stringMatching(/^hlk_h_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}$/) },
          agent: { kind: 'agent', key: expect.stringMatching(/^hlk_a_/), mandate: 'octo-cat/sandbox', ask_in_client: true, expires_at: null },
        },
      });
      const ttl = Date.parse(r.body.keys.human.expires_at) - Date.now();
      expect(ttl).toBeGreaterThan(30 * DAY_MS - 3600_000);
      expect(ttl).toBeLessThanOrEqual(30 * DAY_MS);

      // The keys work: the starter mandate and the demo credit are there, as after an email sign-up.
      const me = await send(g.url, 'GET', '/v0/me', { key: r.body.keys.human.key });
      expect(me.body).toMatchObject({
        kind: 'human',
        account: { handle: 'octo-cat', email: 'octo@example.test', github: 'Octo-Cat' },
        balances: [{ currency: 'EUR', balance: '5.00' }],
        mandates: [{ id: 'octo-cat/sandbox', total: '5.00' }],
      });
      expect(me.body.keys.find((k: any) => k.kind === 'human').expires_at).toBe(r.body.keys.human.expires_at);
      expect((await send(g.url, 'GET', '/v0/me', { key: r.body.keys.agent.key })).body).toMatchObject({ kind: 'agent', mandate: { id: 'octo-cat/sandbox' } });
      expect(await g.db.knex('accounts').where({ handle: 'octo-cat' }).first('github_id', 'github_login')).toEqual({
        github_id: 583231n,
        github_login: 'Octo-Cat',
      });

      // The code is good once.
      expect([(await exchange(g.url, login)).status, (await exchange(g.url, login)).body.error.code]).toEqual([400, 'invalid_code']);

      // GitHub was asked the way its API wants: the code traded for JSON, the token as a Bearer with the API version.
      const token = github.requests.find((q) => q.path === '/login/oauth/access_token')!;
      expect(token.headers.accept).toBe('application/json');
      for (const path of ['/api/v3/user', '/api/v3/user/emails']) {
        const q = github.requests.find((x) => x.path === path)!;
        expect(q.headers).toMatchObject({
          authorization: `Bearer ${github.tokens[0]}`,
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
        });
      }
    });
  });

  test('a second sign-in: a new human key for the same account, no second agent key nor credit; a renamed login keeps its handle', async () => {
    await withGateway(async (g) => {
      octocat();
      const first = await signedIn(new Browser(), g.url);
      github.addUser({ id: 583231, login: 'Octo-Renamed', emails: [{ email: 'new@example.test', primary: true, verified: true }] });
      github.signIn('Octo-Renamed');
      const second = await signedIn(new Browser(), g.url);
      expect(second).toMatchObject({
        handle: 'octo-cat',
        outcome: 'signed_in',
        account: { email: 'octo@example.test', github: { id: 583231, login: 'Octo-Renamed' } },
      });
      expect(second.keys.agent).toBeUndefined();
      expect(second.keys.human.key).not.toBe(first.keys.human.key);
      // Both human keys work; one agent key, one credit, one account.
      for (const key of [first.keys.human.key, second.keys.human.key]) expect((await send(g.url, 'GET', '/v0/me', { key })).status).toBe(200);
      const keys = await g.db.knex('api_keys').where({ account: 'octo-cat' }).select('kind');
      expect(keys.map((k) => k.kind).sort()).toEqual(['agent', 'human', 'human']);
      expect(await g.db.knex('journal_entries').where({ kind: 'signup' }).pluck('key')).toEqual(['signup:octo-cat']);
      expect(await g.db.knex('accounts').where({ kind: 'user' }).pluck('handle')).toEqual(['octo-cat']);
    });
  });

  test('an email account whose address GitHub verified is linked; an unverified address is not', async () => {
    await withGateway(async (g) => {
      const alice = await signUp(g.url, 'alice');
      github.addUser({ id: 1001, login: 'alice-gh', emails: [{ email: 'ALICE@example.test', primary: true, verified: true }] });
      github.signIn('alice-gh');
      const linked = await signedIn(new Browser(), g.url);
      expect(linked).toMatchObject({ handle: 'alice', outcome: 'linked', account: { email: 'alice@example.test', github: { id: 1001, login: 'alice-gh' } } });
      expect(linked.keys.agent).toBeUndefined();
      // The email sign-up's keys still work; no second credit.
      expect((await send(g.url, 'GET', '/v0/me', { key: alice.sandboxAgent })).status).toBe(200);
      expect(await g.db.knex('journal_entries').where({ kind: 'signup' }).pluck('key')).toEqual(['signup:alice']);
      // Signing in again finds the account by its GitHub id.
      expect((await signedIn(new Browser(), g.url)).outcome).toBe('signed_in');

      // carol signed up with carol@…; a GitHub user whose primary address is verified but whose carol@… is not
      // gets an account of their own, not carol's.
      await signUp(g.url, 'carol');
      github.addUser({
        id: 1002,
        login: 'mallory',
        emails: [
          { email: 'mallory@example.test', primary: true, verified: true },
          { email: 'carol@example.test', primary: false, verified: false },
        ],
      });
      github.signIn('mallory');
      expect(await signedIn(new Browser(), g.url)).toMatchObject({ handle: 'mallory', outcome: 'created', account: { email: 'mallory@example.test' } });
      // One whose primary address is carol's but unverified gets nothing.
      github.addUser({ id: 1003, login: 'trudy', emails: [{ email: 'carol@example.test', primary: true, verified: false }] });
      github.signIn('trudy');
      expect((await signIn(new Browser(), g.url)).hash.get('login_error')).toBe('no_verified_email');
      expect(await g.db.knex('accounts').where({ handle: 'carol' }).first('github_id')).toEqual({ github_id: null });
      // The same login as an email account's handle, with another address: the handle is someone else's.
      github.addUser({ id: 1004, login: 'Carol', emails: [{ email: 'other-carol@example.test', primary: true, verified: true }] });
      github.signIn('Carol');
      expect((await signIn(new Browser(), g.url)).hash.get('login_error')).toBe('handle_unavailable');
      expect((await g.db.knex('accounts').where({ kind: 'user' }).orderBy('handle').pluck('handle')).sort()).toEqual(['alice', 'carol', 'mallory']);
    });
  });

  test('the state is accepted once, from the browser it was given to, within 10 minutes', async () => {
    await withGateway(async (g) => {
      octocat();
      // Replayed: the first use wins, the second is refused (even with the cookie).
      const mine = new Browser();
      const callback = await callbackOf(mine, g.url);
      const state = new URL(callback).searchParams.get('state')!;
      expect(mine.cookie(COOKIE)).toBe(state);
      expect((await mine.open(callback)).hash.get('login')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const replay = new Browser();
      replay.plant(COOKIE, state);
      expect((await replay.open(callback)).hash.get('login_error')).toBe('invalid_state');

      // Another browser (no cookie, or another state's cookie) is refused, and does not spend the state: the
      // browser it belongs to can still finish.
      const victim = new Browser();
      const link = await callbackOf(victim, g.url);
      expect((await new Browser().open(link)).hash.get('login_error')).toBe('invalid_state');
      const other = new Browser();
      await callbackOf(other, g.url);
      expect((await other.open(link)).hash.get('login_error')).toBe('invalid_state');
      expect((await victim.open(link)).hash.get('login')).toBeTruthy();

      // Expired: ten minutes later it is refused.
      const late = new Browser();
      const lateLink = await callbackOf(late, g.url);
      await g.db
        .knex('github_oauth_states')
        .whereNull('used_at')
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await late.open(lateLink)).hash.get('login_error')).toBe('invalid_state');

      // Tampered or missing: refused.
      const t = new Browser();
      const tampered = new URL(await callbackOf(t, g.url));
      tampered.searchParams.set('state', 'x'.repeat(43));
      expect((await t.open(tampered.toString())).hash.get('login_error')).toBe('invalid_state');
      expect((await new Browser().open(`${g.url}/v0/auth/github/callback?code=abc`)).hash.get('login_error')).toBe('invalid_state');
      expect((await new Browser().open(`${g.url}/v0/auth/github/callback?code=a&state=b&state=c`)).hash.get('login_error')).toBe('invalid_state');
    });
  });

  test('the login code is traded once, within 2 minutes', async () => {
    await withGateway(async (g) => {
      octocat();
      const used = await loginCode(new Browser(), g.url);
      expect((await exchange(g.url, used)).status).toBe(200);
      expect((await exchange(g.url, used)).body.error.code).toBe('invalid_code');

      const late = await loginCode(new Browser(), g.url);
      await g.db
        .knex('github_login_codes')
        .whereNull('used_at')
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await exchange(g.url, late)).body.error.code).toBe('invalid_code');
      // An expired code is not traded later either, and costs no key.
      expect(await rowCount(g.db.knex, 'api_keys')).toBe(2);

      for (const code of ['A'.repeat(43), 'short', 42, '']) {
        const r = await exchange(g.url, { code, nonce: used.nonce });
        expect([r.status, r.body.error.code], String(code)).toEqual([400, typeof code === 'string' && code !== '' ? 'invalid_code' : 'invalid_request']);
      }
      expect((await send(g.url, 'POST', '/v0/auth/exchange', { body: { ...used, extra: 1 } })).status).toBe(400);
      expect((await send(g.url, 'POST', '/v0/auth/exchange', { body: '{' })).status).toBe(400);
    });
  });

  test('a code is traded only with the nonce of the browser that started the sign-in; a wrong one does not spend it', async () => {
    await withGateway(async (g) => {
      octocat();
      // Starting needs a nonce: without one (or a malformed one, or two) the browser is not sent to GitHub.
      for (const query of ['', '?nonce=', '?nonce=short', `?nonce=${'A'.repeat(42)}!`, `?nonce=${newNonce()}&nonce=${newNonce()}`]) {
        const r = await send(g.url, 'GET', `/v0/auth/github${query}`);
        expect([r.status, r.body.error.code, r.body.error.problems[0].path], query).toEqual([400, 'invalid_request', 'query.nonce']);
      }
      expect(await rowCount(g.db.knex, 'github_oauth_states')).toBe(0);
      expect(github.requests).toEqual([]);

      // The attacker signs in in their browser and sends the code (/console#login=<code>) to someone else.
      const attacker = new Browser();
      const planted = await loginCode(attacker, g.url);
      const victim = new Browser();
      const unknown = await exchange(g.url, { code: newNonce(), nonce: victim.nonce });
      expect([unknown.status, unknown.body.error.code]).toEqual([400, 'invalid_code']);
      // No nonce is a bad body; another browser's nonce, or one of no shape, is answered exactly as an unknown code.
      const none = await exchange(g.url, { code: planted.code });
      expect([none.status, none.body.error.code]).toEqual([400, 'invalid_request']);
      expect((await exchange(g.url, { code: planted.code, nonce: 42 })).body.error.code).toBe('invalid_request');
      for (const nonce of [victim.nonce, newNonce(), 'short', `${planted.nonce.slice(0, 42)}x`]) {
        const r = await exchange(g.url, { code: planted.code, nonce });
        expect([r.status, r.body.error], nonce).toEqual([400, unknown.body.error]);
      }
      // The victim started a sign-in of their own (their nonce is bound to it), and was sent the attacker's code.
      const theirs = new Browser();
      await callbackOf(theirs, g.url);
      expect((await exchange(g.url, { code: planted.code, nonce: theirs.nonce })).body.error.code).toBe('invalid_code');
      expect(await rowCount(g.db.knex, 'api_keys')).toBe(0);

      // None of that spent the code: the attacker's own browser trades it, once, even when asked at once.
      const answers = await Promise.all(Array.from({ length: 4 }, () => exchange(g.url, planted)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400]);
      expect(answers.find((a) => a.status === 200)!.body.handle).toBe('octo-cat');
      expect((await exchange(g.url, planted)).body.error.code).toBe('invalid_code');
      expect(await g.db.knex('api_keys').pluck('kind')).toEqual(expect.arrayContaining(['human', 'agent']));
      expect(await rowCount(g.db.knex, 'api_keys')).toBe(2);
    });
  });

  test('a new account whose first code expired gets its agent key at its next sign-in', async () => {
    await withGateway(async (g) => {
      octocat();
      await loginCode(new Browser(), g.url);
      await g.db.knex('github_login_codes').update({ expires_at: new Date(Date.now() - 1000) });
      const next = await signedIn(new Browser(), g.url);
      expect(next).toMatchObject({ handle: 'octo-cat', outcome: 'signed_in', keys: { agent: { mandate: 'octo-cat/sandbox' } } });
    });
  });

  test('denied consent, and GitHub failing, refusing the code or hanging: the browser comes back with a reason, never a 5xx', async () => {
    await withGateway(async (g) => {
      octocat();
      github.signIn('Octo-Cat', 'deny');
      const denied = await signIn(new Browser(), g.url);
      expect(denied.hash.get('login_error')).toBe('denied');
      expect(denied.url).toMatch(/\/console#login_error=denied$/);

      github.signIn('Octo-Cat');
      const cases: Array<[Parameters<FakeGitHub['fail']>[0], Parameters<FakeGitHub['fail']>[1]]> = [
        ['token', 500],
        ['token', 'oauth_error'],
        ['token', 'hang'],
        ['user', 500],
        ['user', 'hang'],
        ['emails', 500],
        ['emails', 'hang'],
      ];
      for (const [endpoint, mode] of cases) {
        github.fail(endpoint, mode);
        const v = await signIn(new Browser(), g.url);
        expect(v.hops.every((h) => h.status < 500)).toBe(true);
        expect(v.hash.get('login_error'), `${endpoint} ${mode}`).toBe('github_unavailable');
        github.fail(endpoint, undefined);
      }
      // Nothing was made, and GitHub working again works again.
      expect(await g.db.knex('accounts').where({ kind: 'user' }).pluck('handle')).toEqual([]);
      expect((await signedIn(new Browser(), g.url)).handle).toBe('octo-cat');
      // GitHub sending the browser back with another error, or without a code.
      for (const query of ['error=application_suspended', '']) {
        const browser = new Browser();
        const state = new URL(await callbackOf(browser, g.url)).searchParams.get('state')!;
        const v = await browser.open(`${g.url}/v0/auth/github/callback?state=${state}&${query}`);
        expect(v.hash.get('login_error'), query).toBe('github_unavailable');
      }
    });
  });

  test('a disabled account gets no key: not at sign-in, not with a code it had, not through its email', async () => {
    await withGateway(async (g) => {
      octocat();
      await signedIn(new Browser(), g.url);
      const pending = await loginCode(new Browser(), g.url);
      const disabled = await send(g.url, 'POST', '/v0/admin/accounts/octo-cat/disable', { key: ADMIN_KEY, body: { reason: 'spam' } });
      expect(disabled.status).toBe(200);

      const r = await exchange(g.url, pending);
      expect([r.status, r.body.error.code]).toEqual([403, 'account_disabled']);
      expect((await exchange(g.url, pending)).body.error.code).toBe('invalid_code');
      expect((await signIn(new Browser(), g.url)).hash.get('login_error')).toBe('account_disabled');
      // Another GitHub account with the disabled account's (verified) email does not get in either.
      github.addUser({ id: 77, login: 'octo-two', emails: [{ email: 'octo@example.test', primary: true, verified: true }] });
      github.signIn('octo-two');
      expect((await signIn(new Browser(), g.url)).hash.get('login_error')).toBe('account_disabled');
      expect(await g.db.knex('api_keys').whereNull('revoked_at').pluck('prefix')).toEqual([]);
      expect(await g.db.knex('accounts').where({ kind: 'user' }).pluck('handle')).toEqual(['octo-cat']);
    });
  });

  test("a login that is not a free handle (reserved, an author's namespace, taken) is refused, and nothing is half-made", async () => {
    await withGateway(async (g) => {
      await signUp(g.url, 'taken');
      let id = 500;
      for (const login of ['Admin', 'holon', 'examples', 'fixtures', 'Taken', 'bad--login']) {
        github.addUser({ id: id++, login, emails: [{ email: `${login.toLowerCase()}-gh@example.test`, primary: true, verified: true }] });
        github.signIn(login);
        expect((await signIn(new Browser(), g.url)).hash.get('login_error'), login).toBe('handle_unavailable');
      }
      expect(await g.db.knex('accounts').where({ kind: 'user' }).pluck('handle')).toEqual(['taken']);
      expect(await rowCount(g.db.knex, 'github_login_codes')).toBe(0);
    });
  });

  test('without a client id and secret sign-in answers 503 and the rest of the hosted gateway works; dev mode has no such routes', async () => {
    const { githubClientId, githubClientSecret, ...urls } = github.config;
    for (const partial of [{}, { githubClientId }, { githubClientSecret }]) {
      await useAudited(await startTestGateway({ hosted: true, config: { ...urls, ...partial } }), async (g) => {
        for (const [method, path] of [
          ['GET', '/v0/auth/github'],
          ['GET', '/v0/auth/github/callback?code=a&state=b'],
          ['POST', '/v0/auth/exchange'],
        ] as const) {
          const r = await send(g.url, method, path, method === 'POST' ? { body: { code: 'x'.repeat(43) } } : {});
          expect([r.status, r.body.error?.code], `${method} ${path}`).toEqual([503, 'github_sign_in_off']);
        }
        const a = await signUp(g.url, 'bob');
        const work = await workMandate(g.url, a);
        const call = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'hi' } } });
        expect([call.status, call.body.output]).toEqual([200, { text: 'HI' }]);
      });
    }
    expect(github.requests).toEqual([]);

    // Dev mode: the routes do not exist, whatever the settings.
    await useAudited(await startTestGateway({ config: withGitHub() }), async (g) => {
      expect((await send(g.url, 'GET', '/v0/auth/github')).status).toBe(404);
      expect((await send(g.url, 'POST', '/v0/auth/exchange', { body: { code: 'x' } })).status).toBe(404);
    });
  });

  test('across API processes on one database: the redirect on one, the callback on another, the exchange on the first', async () => {
    await withGateway(async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: withGitHub() });
      try {
        octocat();
        // A load balancer sends GitHub's redirect back to the other process.
        const callbackOnOther = (u: string) => (u.startsWith(`${g.url}/v0/auth/github/callback`) ? u.replace(g.url, other.url) : u);
        const browser = new Browser(callbackOnOther);
        const v = await signIn(browser, g.url);
        expect(v.hops.map((h) => new URL(h.url).origin)).toEqual([g.url, github.url, other.url]);
        const r = await exchange(g.url, loginOf(browser, v));
        expect(r.body).toMatchObject({ handle: 'octo-cat', outcome: 'created' });
        expect((await send(other.url, 'GET', '/v0/me', { key: r.body.keys.human.key })).status).toBe(200);
        // A code from one process is good once on all of them.
        const code = await loginCode(new Browser(), other.url);
        expect((await exchange(other.url, code)).status).toBe(200);
        expect((await exchange(g.url, code)).status).toBe(400);
      } finally {
        await other.stop();
      }
    });
  });

  test('the callback lands on the console the gateway serves (HOLON_PUBLIC_URL), never on HOLON_SITE_URL, the public site', async () => {
    await withGateway(
      async (g) => {
        octocat();
        const start = await fetch(`${g.url}/v0/auth/github?nonce=${newNonce()}`, { redirect: 'manual' });
        expect(new URL(start.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://api.holon.example/v0/auth/github/callback');
        // Over https the cookie is Secure and __Host- prefixed.
        expect(start.headers.getSetCookie()[0]).toMatch(/^__Host-holon_github_state=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
        // The public URL is not this test's address: the browser goes there, and the callback is brought back here.
        const browser = new Browser((u) => u.replace('https://api.holon.example', g.url));
        const v = await signIn(browser, g.url);
        // HOLON_SITE_URL serves no console: the browser comes back to the gateway's own /console.
        expect(v.hops.at(-1)!.location).toMatch(/^https:\/\/api\.holon\.example\/console#login=[A-Za-z0-9_-]{43}$/);
        expect((await exchange(g.url, loginOf(browser, v))).status).toBe(200);
      },
      { publicUrl: 'https://api.holon.example', siteUrl: 'https://holon.example' },
    );
  });

  test('no GitHub token, state, nonce, login code or plaintext key is stored in any table', async () => {
    await withGateway(async (g) => {
      const alice = await signUp(g.url, 'alice');
      github.addUser({ id: 1001, login: 'alice', emails: [{ email: 'alice@example.test', primary: true, verified: true }] });
      octocat();
      const secrets: string[] = [alice.human.slice(15), alice.sandboxAgent.slice(15)];
      for (const who of ['Octo-Cat', 'Octo-Cat', 'alice']) {
        github.signIn(who);
        const browser = new Browser();
        const v = await signIn(browser, g.url);
        secrets.push(new URL(v.hops[0]!.location!).searchParams.get('state')!);
        const login = loginOf(browser, v);
        const r = await exchange(g.url, login);
        expect(r.status).toBe(200);
        secrets.push(login.code, login.nonce, r.body.keys.human.key.slice(15), ...(r.body.keys.agent ? [r.body.keys.agent.key.slice(15)] : []));
      }
      expect(github.tokens).toHaveLength(3);
      secrets.push(...github.tokens, github.clientSecret);
      expect(secrets.length).toBeGreaterThan(12);
      expect(await rowsHolding(g.db.knex, secrets)).toEqual([]);
      // What is kept: hashes, and each account's GitHub id and login.
      expect(await g.db.knex('accounts').where({ kind: 'user' }).orderBy('handle').select('handle', 'github_id', 'github_login')).toEqual([
        { handle: 'alice', github_id: 1001n, github_login: 'alice' },
        { handle: 'octo-cat', github_id: 583231n, github_login: 'Octo-Cat' },
      ]);
      for (const [table, columns] of [
        ['github_oauth_states', ['state_hash', 'nonce_hash']],
        ['github_login_codes', ['code_hash', 'nonce_hash']],
      ] as const) {
        const rows: Array<Record<string, string>> = await g.db.knex(table).select(...columns);
        expect(rows).toHaveLength(3);
        for (const row of rows) for (const column of columns) expect(row[column], `${table}.${column}`).toMatch(/^[0-9a-f]{64}$/);
      }
    });
  });
});

// ------------------------------------------------------------------ the client, against the fake

describe('the GitHub client', () => {
  const settings = (): GitHubSettings => ({
    webUrl: github.url,
    apiUrl: github.apiUrl,
    clientId: github.clientId,
    clientSecret: github.clientSecret,
    timeoutMs: TIMEOUT_MS,
  });

  test('repositories: public, private (seen by its owner only), renamed case, unknown; public organisation members', async () => {
    github.addUser({ id: 1, login: 'lena' });
    github.addRepository({ owner: 'lena', name: 'scraper' });
    github.addRepository({ owner: 'lena', name: 'secret', private: true });
    github.addRepository({ owner: 'acme', name: 'tools', ownerType: 'Organization' });
    github.addPublicMember('acme', 'lena');
    const s = settings();

    expect(await readRepository(s, 'Lena', 'Scraper')).toMatchObject({
      fullName: 'lena/scraper',
      private: false,
      owner: { login: 'lena', id: 1, type: 'User' },
    });
    expect(await readRepository(s, 'acme', 'tools')).toMatchObject({ fullName: 'acme/tools', owner: { login: 'acme', type: 'Organization' } });
    expect(await readRepository(s, 'lena', 'secret')).toBeNull();
    expect(await readRepository(s, 'lena', 'nothing')).toBeNull();
    expect(await isPublicMember(s, 'acme', 'lena')).toBe(true);
    expect(await isPublicMember(s, 'acme', 'mallory')).toBe(false);
    expect(await isPublicMember(s, 'nobody', 'lena')).toBe(false);
    await expect(readRepository(s, '../orgs', 'x')).rejects.toThrow(TypeError);
    const q = github.requests.find((r) => r.path === '/api/v3/repos/Lena/Scraper')!;
    expect(q.headers).toMatchObject({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
    expect(q.headers.authorization).toBeUndefined();
  });

  test('GitHub failing or hanging is GitHubUnavailable, bounded; a bad token too', async () => {
    github.addRepository({ owner: 'lena', name: 'scraper' });
    const s = settings();
    for (const mode of [500, 'hang'] as const) {
      github.fail('repos', mode);
      github.fail('members', mode);
      await expect(readRepository(s, 'lena', 'scraper')).rejects.toBeInstanceOf(GitHubUnavailable);
      await expect(isPublicMember(s, 'acme', 'lena')).rejects.toBeInstanceOf(GitHubUnavailable);
    }
    await expect(readUser(s, 'gho_not-a-token')).rejects.toThrow(/HTTP 401/);
    // Nothing listens there: unavailable too.
    await expect(readUser({ ...s, apiUrl: 'http://127.0.0.1:1' }, 'x')).rejects.toBeInstanceOf(GitHubUnavailable);
  });
});

describe('settings', () => {
  test('HOLON_GITHUB_URL, HOLON_GITHUB_API_URL, HOLON_GITHUB_CLIENT_ID, HOLON_GITHUB_CLIENT_SECRET; never required, the secret never echoed', () => {
    expect(loadConfig({})).toMatchObject({ githubUrl: 'https://github.com', githubApiUrl: 'https://api.github.com', githubTimeoutMs: 10_000 });
    expect(loadConfig({}).githubClientId).toBeUndefined();
    const c = loadConfig({
      HOLON_GITHUB_URL: 'https://ghe.example/',
      HOLON_GITHUB_API_URL: 'https://ghe.example/api/v3',
      HOLON_GITHUB_CLIENT_ID: 'Iv1.abc',
      HOLON_GITHUB_CLIENT_SECRET: 'shh-very-secret',
      HOLON_GITHUB_TIMEOUT_MS: '2500',
    });
    expect(c).toMatchObject({
      githubUrl: 'https://ghe.example',
      githubApiUrl: 'https://ghe.example/api/v3',
      githubClientId: 'Iv1.abc',
      githubClientSecret: 'shh-very-secret',
      githubTimeoutMs: 2500,
    });
    // Production does not need them.
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/holon',
      HOLON_PUBLIC_URL: 'https://api.holon.example',
      HOLON_FILE_SECRET: 'e6QWQhaIuBY2Zi8BD4Vk0JG2RDft5VNn',
      HOLON_ADMIN_KEY: 'vUAyf3hE6AM2Wxu5xzrec3fPwzk10S2zshHTL98J',
      HOLON_TRUST_PROXY: '1',
      HOLON_SITE_URL: 'https://holon.example',
      HOLON_HOSTED: '1',
      HOLON_PRIVATE_EVALS: '/srv/holon/private-evals',
      HOLON_SIGNING_KEY: '{"kty":"OKP","crv":"Ed25519","d":"…","x":"…"}',
    };
    expect(loadConfig(production).githubClientId).toBeUndefined();
    // Malformed URLs are named; the secret is never repeated in a problem.
    let message = '';
    try {
      loadConfig({ ...production, HOLON_GITHUB_URL: 'http://github.example', HOLON_GITHUB_API_URL: 'nope', HOLON_GITHUB_CLIENT_SECRET: 'shh-very-secret' });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain('HOLON_GITHUB_URL must be an https URL in production');
    expect(message).toContain('HOLON_GITHUB_API_URL must be an absolute URL');
    expect(message).not.toContain('shh-very-secret');
  });
});
