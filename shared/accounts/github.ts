/**
 * The GitHub client (gateway.md §7 Accounts and Publishing): the OAuth web flow of a GitHub OAuth app, and the REST
 * API reads the gateway needs — who the user is, their primary verified email, a repository's owner and
 * visibility, and whether an organisation lists a user as a public member.
 *
 * Both base URLs are settings (HOLON_GITHUB_URL, HOLON_GITHUB_API_URL), so tests run a fake GitHub on loopback, and
 * GitHub Enterprise (`https://ghe.example/api/v3`) works. Every request is bounded (`timeoutMs`, 10 s by default):
 * a GitHub that fails, hangs or answers something unexpected is a `GitHubUnavailable`, never a hang. A token is
 * only ever held in memory by the caller; nothing here logs it, nor the client secret.
 */
import { request } from 'undici';
import type { Config } from '../platform/config.js';
import { isJsonObject, type JsonObject } from '../core/json.js';

export interface GitHubSettings {
  /** GitHub's web origin: `<it>/login/oauth/authorize`, `<it>/login/oauth/access_token`. */
  webUrl: string;
  /** GitHub's REST API. */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** The longest wait for one request. */
  timeoutMs: number;
}

/** The client the settings describe, or undefined when the OAuth app is not configured (sign-in is off: 503). */
export function githubSettings(
  c: Pick<Config, 'githubUrl' | 'githubApiUrl' | 'githubClientId' | 'githubClientSecret' | 'githubTimeoutMs'>,
): GitHubSettings | undefined {
  if (!c.githubClientId || !c.githubClientSecret) return undefined;
  return { webUrl: c.githubUrl, apiUrl: c.githubApiUrl, clientId: c.githubClientId, clientSecret: c.githubClientSecret, timeoutMs: c.githubTimeoutMs };
}

/** The scope sign-in asks for: `/user/emails` needs `user:email`; `/user` needs none. */
const SIGN_IN_SCOPE = 'user:email';

/** GitHub failed, timed out or answered something unexpected. The message never carries a token or a secret. */
export class GitHubUnavailable extends Error {
  override readonly name = 'GitHubUnavailable';
  /** `no_answer`: GitHub did not answer (down, timed out); `bad_answer`: it answered an error or something unusable. */
  constructor(
    message: string,
    readonly reason: 'no_answer' | 'bad_answer' = 'bad_answer',
  ) {
    super(message);
  }
}

export interface GitHubUser {
  /** Stable: logins can be renamed, ids cannot. */
  id: number;
  login: string;
}

export interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export interface GitHubRepository {
  fullName: string;
  private: boolean;
  owner: { login: string; id: number; type: string };
}

/** Where the browser is sent to sign in (GitHub's authorize page). */
export function authorizeUrl(s: Pick<GitHubSettings, 'webUrl' | 'clientId'>, options: { state: string; redirectUri: string }): string {
  const q = new URLSearchParams({ client_id: s.clientId, redirect_uri: options.redirectUri, scope: SIGN_IN_SCOPE, state: options.state });
  return `${s.webUrl}/login/oauth/authorize?${q}`;
}

interface Answer {
  status: number;
  body: unknown;
}

async function send(
  s: GitHubSettings,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  what: string,
): Promise<Answer> {
  try {
    const res = await request(url, {
      method: init.method,
      headers: { 'user-agent': 'holon-gateway', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      headersTimeout: s.timeoutMs,
      bodyTimeout: s.timeoutMs,
      signal: AbortSignal.timeout(s.timeoutMs),
    });
    const text = await readBounded(res.body, what);
    let body: unknown = null;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        throw new GitHubUnavailable(`GitHub answered ${what} with something that is not JSON (HTTP ${res.statusCode})`);
      }
    }
    return { status: res.statusCode, body };
  } catch (e) {
    if (e instanceof GitHubUnavailable) throw e;
    const name = (e as Error)?.name ?? 'Error';
    throw new GitHubUnavailable(`GitHub did not answer ${what} (${name === 'TimeoutError' || name.includes('Timeout') ? 'timed out' : name})`, 'no_answer');
  }
}

/** GitHub's answers are small: a larger one is refused rather than buffered. */
const MAX_ANSWER_BYTES = 1_048_576;

async function readBounded(body: AsyncIterable<Buffer>, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new GitHubUnavailable(`GitHub answered ${what} with more than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A REST API read with the user's token (or, for public data, none). */
function api(s: GitHubSettings, path: string, token: string | undefined, what: string): Promise<Answer> {
  return send(
    s,
    `${s.apiUrl}${path}`,
    {
      method: 'GET',
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      },
    },
    what,
  );
}

function unexpected(what: string, a: Answer): GitHubUnavailable {
  return new GitHubUnavailable(`GitHub answered ${what} with HTTP ${a.status}`);
}

/**
 * Trade the code of GitHub's redirect for an access token (`POST <web>/login/oauth/access_token`). GitHub answers
 * 200 `{access_token, token_type, scope}`, or 200 `{error, error_description}` (a used or expired code, wrong client
 * credentials, a redirect_uri mismatch): both failures are `GitHubUnavailable`, naming GitHub's error code.
 */
export async function exchangeCode(s: GitHubSettings, code: string, redirectUri: string): Promise<string> {
  const a = await send(
    s,
    `${s.webUrl}/login/oauth/access_token`,
    {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: s.clientId, client_secret: s.clientSecret, code, redirect_uri: redirectUri }).toString(),
    },
    'the code exchange',
  );
  if (a.status !== 200 || !isJsonObject(a.body)) throw unexpected('the code exchange', a);
  if (typeof a.body.error === 'string') throw new GitHubUnavailable(`GitHub refused the code: ${a.body.error.slice(0, 100)}`);
  const token = a.body.access_token;
  if (typeof token !== 'string' || token === '') throw new GitHubUnavailable('GitHub answered the code exchange without an access token');
  return token;
}

/** `GET /user`: the signed-in user's stable id and login. */
export async function readUser(s: GitHubSettings, token: string): Promise<GitHubUser> {
  const a = await api(s, '/user', token, 'GET /user');
  if (a.status !== 200 || !isJsonObject(a.body)) throw unexpected('GET /user', a);
  const { id, login } = a.body;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0 || typeof login !== 'string' || login === '' || login.length > 100) {
    throw new GitHubUnavailable('GitHub answered GET /user without a usable id and login');
  }
  return { id, login };
}

/** `GET /user/emails` (scope `user:email`): every address of the user, with its primary and verified flags. */
export async function readEmails(s: GitHubSettings, token: string): Promise<GitHubEmail[]> {
  const a = await api(s, '/user/emails', token, 'GET /user/emails');
  if (a.status !== 200 || !Array.isArray(a.body)) throw unexpected('GET /user/emails', a);
  return a.body
    .filter(isJsonObject)
    .filter((e) => typeof e.email === 'string')
    .map((e) => ({ email: e.email as string, primary: e.primary === true, verified: e.verified === true }));
}

/** The primary email, when GitHub has verified it; else null. */
export function primaryVerifiedEmail(emails: readonly GitHubEmail[]): string | null {
  return emails.find((e) => e.primary && e.verified)?.email ?? null;
}

const SEGMENT = /^[A-Za-z0-9._-]{1,100}$/;

function segment(name: string, value: string): string {
  if (!SEGMENT.test(value) || value === '.' || value === '..') throw new TypeError(`${name} is not a GitHub name: ${JSON.stringify(value.slice(0, 100))}`);
  return encodeURIComponent(value);
}

/**
 * `GET /repos/{owner}/{repo}`: the repository as GitHub names it (a renamed or transferred repository answers under
 * its new name), or null when it does not exist or the token may not see it (GitHub answers 404 for both).
 */
export async function readRepository(s: GitHubSettings, owner: string, repo: string, token?: string): Promise<GitHubRepository | null> {
  const what = 'GET /repos/{owner}/{repo}';
  const a = await api(s, `/repos/${segment('owner', owner)}/${segment('repo', repo)}`, token, what);
  if (a.status === 404) return null;
  if (a.status !== 200 || !isJsonObject(a.body) || !isJsonObject(a.body.owner)) throw unexpected(what, a);
  const { full_name: fullName, private: isPrivate, owner: o } = a.body as { full_name: unknown; private: unknown; owner: JsonObject };
  if (typeof fullName !== 'string' || typeof isPrivate !== 'boolean' || typeof o.login !== 'string' || typeof o.id !== 'number') {
    throw new GitHubUnavailable(`GitHub answered ${what} without full_name, private and owner`);
  }
  return { fullName, private: isPrivate, owner: { login: o.login, id: o.id, type: typeof o.type === 'string' ? o.type : 'User' } };
}

/** `GET /orgs/{org}/public_members/{user}`: 204 when the organisation lists the user publicly, 404 when not. */
export async function isPublicMember(s: GitHubSettings, org: string, user: string, token?: string): Promise<boolean> {
  const what = 'GET /orgs/{org}/public_members/{user}';
  const a = await api(s, `/orgs/${segment('org', org)}/public_members/${segment('user', user)}`, token, what);
  if (a.status === 204) return true;
  if (a.status === 404) return false;
  throw unexpected(what, a);
}
