/**
 * A fake GitHub on loopback (node:http) for the sign-in flow and the ownership checks, with GitHub's own shapes:
 *   web   GET  /login/oauth/authorize        the browser is signed in as a configurable user, who approves (302 back
 *                                            to redirect_uri with `code` and `state`) or denies (`error=access_denied`)
 *         POST /login/oauth/access_token     checks client id, secret, code (once) and redirect_uri; JSON with
 *                                            `Accept: application/json` (`{access_token, token_type, scope}` or
 *                                            `{error, error_description}`), form-encoded otherwise
 *   API   GET  /user, /user/emails            with `Authorization: Bearer <token>`
 *         GET  /repos/{owner}/{repo}          `{full_name, private, owner: {login, id, type}, …}`; 404 when unknown, or
 *                                            private and not the token's owner
 *         GET  /orgs/{org}/public_members/{user}  204 / 404
 * The API lives under `/api/v3` (as on GitHub Enterprise), so the web and API base URLs are really two settings.
 * Any endpoint can be made to fail: 500, or hang (never answer; closed with the server).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Config } from '../../shared/platform/config.js';

interface FakeGitHubUser {
  id: number;
  login: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

interface FakeRepository {
  owner: string;
  name: string;
  private?: boolean;
  ownerType?: 'User' | 'Organization';
}

type Endpoint = 'authorize' | 'token' | 'user' | 'emails' | 'repos' | 'members';
/** 500: an error page; hang: the request is never answered; oauth_error: the token endpoint's 200 `{error}`. */
type FailureMode = 500 | 'hang' | 'oauth_error';

export interface FakeGitHub {
  /** The web origin (HOLON_GITHUB_URL). */
  url: string;
  /** The REST API (HOLON_GITHUB_API_URL). */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** The gateway settings that point at this fake. */
  config: Pick<Config, 'githubUrl' | 'githubApiUrl' | 'githubClientId' | 'githubClientSecret'>;
  addUser(user: Omit<FakeGitHubUser, 'emails'> & { emails?: FakeGitHubUser['emails'] }): FakeGitHubUser;
  /** Who the browser is signed in to GitHub as, and what they answer on the consent page. */
  signIn(login: string, consent?: 'approve' | 'deny'): void;
  addRepository(repo: FakeRepository): void;
  addPublicMember(org: string, login: string): void;
  fail(endpoint: Endpoint, mode: FailureMode | undefined): void;
  /** Every access token handed out, to check that none is kept. */
  tokens: string[];
  /** Every request, in order: method, path (query included) and headers. */
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

const API = '/api/v3';

export async function startFakeGitHub(options: { clientId?: string; clientSecret?: string } = {}): Promise<FakeGitHub> {
  const clientId = options.clientId ?? 'Iv1.fakeclientid';
  const clientSecret = options.clientSecret ?? `secret-${randomBytes(12).toString('hex')}`;
  const users = new Map<string, FakeGitHubUser>();
  const repos = new Map<string, FakeRepository>();
  const members = new Map<string, Set<string>>();
  const failures = new Map<Endpoint, FailureMode>();
  const codes = new Map<string, { login: string; redirectUri: string }>();
  const tokenOwners = new Map<string, string>();
  const tokens: string[] = [];
  const requests: FakeGitHub['requests'] = [];
  const sockets = new Set<Socket>();
  let browser: { login: string; consent: 'approve' | 'deny' } | undefined;

  const key = (s: string) => s.toLowerCase();
  /** What the fake answers: a response, or nothing ever (a hang). */
  type Answer = { status: number; headers?: Record<string, string>; text?: string } | 'hang';
  const json = (status: number, body: unknown): Answer => ({
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    text: JSON.stringify(body),
  });
  const notFound = (): Answer => json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  /** The failure set for the endpoint, if any. */
  const failure = (endpoint: Endpoint): Answer | undefined => {
    const mode = failures.get(endpoint);
    return mode === 500 ? json(500, { message: 'Server Error' }) : mode === 'hang' ? 'hang' : undefined;
  };

  const tokenUser = (req: IncomingMessage): FakeGitHubUser | undefined => {
    const m = /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? '');
    const login = m ? tokenOwners.get(m[1]!) : undefined;
    return login === undefined ? undefined : users.get(key(login));
  };

  const readBody = async (req: IncomingMessage): Promise<Record<string, string>> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if ((req.headers['content-type'] ?? '').includes('json')) return JSON.parse(text || '{}');
    return Object.fromEntries(new URLSearchParams(text));
  };

  function authorize(url: URL): Answer {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    if (q.get('client_id') !== clientId || !redirectUri) return json(400, { message: 'unknown client_id or no redirect_uri' });
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (!browser || browser.consent === 'deny') {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user has denied your application access.');
    } else {
      const code = randomBytes(10).toString('hex');
      codes.set(code, { login: browser.login, redirectUri });
      back.searchParams.set('code', code);
    }
    if (state !== null) back.searchParams.set('state', state);
    return { status: 302, headers: { location: back.toString() } };
  }

  /** The token endpoint's answer: `{access_token, token_type, scope}` or GitHub's `{error, error_description}`. */
  function grantToken(p: Record<string, string>): Record<string, string> {
    const badCode = { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
    if (failures.get('token') === 'oauth_error') return badCode;
    if (p.client_id !== clientId || p.client_secret !== clientSecret) {
      return { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' };
    }
    const grant = p.code === undefined ? undefined : codes.get(p.code);
    if (!grant) return badCode;
    if (p.redirect_uri !== undefined && p.redirect_uri !== grant.redirectUri) {
      return { error: 'redirect_uri_mismatch', error_description: 'The redirect_uri MUST match the registered callback URL for this application.' };
    }
    codes.delete(p.code!);
    const token = `gho_${randomBytes(18).toString('base64url')}`;
    tokens.push(token);
    tokenOwners.set(token, grant.login);
    return { access_token: token, token_type: 'bearer', scope: 'user:email' };
  }

  async function accessToken(req: IncomingMessage): Promise<Answer> {
    const body = grantToken(await readBody(req));
    if ((req.headers.accept ?? '').includes('application/json')) return json(200, body);
    return { status: 200, headers: { 'content-type': 'application/x-www-form-urlencoded' }, text: new URLSearchParams(body).toString() };
  }

  function repository(owner: string, name: string, user: FakeGitHubUser | undefined): Answer {
    const r = repos.get(key(`${owner}/${name}`));
    if (!r || (r.private && (!user || key(user.login) !== key(r.owner)))) return notFound();
    return json(200, {
      id: 1000 + repos.size,
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      private: r.private ?? false,
      owner: { login: r.owner, id: users.get(key(r.owner))?.id ?? 9_000_000 + r.owner.length, type: r.ownerType ?? 'User' },
      html_url: `https://github.com/${r.owner}/${r.name}`,
    });
  }

  function api(path: string, req: IncomingMessage): Answer {
    const user = tokenUser(req);
    const repo = /^\/repos\/([^/]+)\/([^/]+)$/.exec(path);
    const member = /^\/orgs\/([^/]+)\/public_members\/([^/]+)$/.exec(path);
    if (path === '/user' || path === '/user/emails') {
      const failed = failure(path === '/user' ? 'user' : 'emails');
      if (failed) return failed;
      if (!user) return json(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      if (path === '/user/emails')
        return json(
          200,
          user.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null })),
        );
      return json(200, { login: user.login, id: user.id, node_id: `U_${user.id}`, type: 'User', site_admin: false, name: null });
    }
    if (repo) return failure('repos') ?? repository(decodeURIComponent(repo[1]!), decodeURIComponent(repo[2]!), user);
    if (member) {
      const listed = members.get(key(decodeURIComponent(member[1]!)))?.has(key(decodeURIComponent(member[2]!)));
      return failure('members') ?? (listed ? { status: 204 } : notFound());
    }
    return notFound();
  }

  const route = async (req: IncomingMessage, url: URL): Promise<Answer> => {
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') return failure('authorize') ?? authorize(url);
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') return failure('token') ?? accessToken(req);
    if (req.method === 'GET' && url.pathname.startsWith(`${API}/`)) return api(url.pathname.slice(API.length), req);
    return notFound();
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake-github');
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers });
    route(req, url)
      .catch((e) => json(500, { message: String(e) }))
      .then((a) => {
        if (a !== 'hang') res.writeHead(a.status, a.headers ?? {}).end(a.text ?? '');
      });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiUrl: `${url}${API}`,
    clientId,
    clientSecret,
    config: { githubUrl: url, githubApiUrl: `${url}${API}`, githubClientId: clientId, githubClientSecret: clientSecret },
    addUser(u) {
      const user = { ...u, emails: u.emails ?? [{ email: `${u.login.toLowerCase()}@users.example.test`, primary: true, verified: true }] };
      users.set(key(u.login), user);
      return user;
    },
    signIn(login, consent = 'approve') {
      browser = { login, consent };
    },
    addRepository(r) {
      repos.set(key(`${r.owner}/${r.name}`), r);
    },
    addPublicMember(org, login) {
      const set = members.get(key(org)) ?? new Set<string>();
      set.add(key(login));
      members.set(key(org), set);
    },
    fail(endpoint, mode) {
      if (mode === undefined) failures.delete(endpoint);
      else failures.set(endpoint, mode);
    },
    tokens,
    requests,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
