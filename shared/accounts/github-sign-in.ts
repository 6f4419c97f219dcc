/**
 * Signing in with GitHub (gateway.md §7 Accounts), in three steps, every one of them in Postgres so that any API
 * process can take any step:
 *
 *   1. `startSignIn`: a random `state` (256 bits), stored as its SHA-256 with the callback URL, the SHA-256 of the
 *      browser's sign-in nonce and an expiry of 10 minutes; the route also sets the state in an HttpOnly,
 *      SameSite=Lax cookie and sends the browser to GitHub. The nonce (256 bits) is made by the console, which keeps
 *      it in the tab's sessionStorage: it binds the sign-in to the tab that started it.
 *   2. `finishSignIn` (GitHub's redirect back): the state must be in the query AND the cookie (that browser only;
 *      compared in constant time), and unused and unexpired in Postgres (marked used in the same statement: once).
 *      The code is traded for a token, the token reads `/user` (stable id, login) and `/user/emails`, and is then
 *      dropped: it is never stored or logged. The account is found by GitHub id, else an email account whose
 *      address is GitHub's primary verified one is linked, else one is created (`createAccount`, the same as email
 *      sign-up: handle = the login in lower case, the same refusals, demo credit and starter mandate). A one-time
 *      login code (256 bits, stored as its SHA-256, 2 minutes) names the account and carries the nonce's hash.
 *   3. `exchangeLoginCode` (`POST /v0/auth/exchange`): the code with the nonce of the tab that started the sign-in
 *      (compared as hashes, in constant time), once, for a new human key that expires after 30 days, plus the
 *      starter agent key when the account has never had a key (it was just made). A code sent to another browser
 *      (`/console#login=<code>` in a link) cannot be traded there: that browser has not the nonce. A wrong nonce is
 *      refused exactly like an unknown code and does not spend it. Keys are minted here, so none is ever at rest in
 *      plaintext. A disabled account gets no key.
 *
 * Refusals of step 2 are `SignInRefused` with the reason the browser is sent back with (`#login_error=<reason>`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db, Tx } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import type { Logger } from '../platform/log.js';
import { createKey, HUMAN_KEY_TTL_MS, type MintedKey } from './keys.js';
import type { WebhookSecrets } from '../webhooks/secrets.js';
import { createAccount, createStarterAgentKey, normaliseEmail, starterMandateId, type SignupSettings } from './signup.js';
import { authorizeUrl, exchangeCode, GitHubUnavailable, primaryVerifiedEmail, readEmails, readUser, type GitHubSettings, type GitHubUser } from './github.js';

/** A state is accepted within 10 minutes of the redirect to GitHub. */
export const STATE_TTL_MS = 10 * 60_000;
/** A login code is traded within 2 minutes of GitHub's redirect back. */
const LOGIN_CODE_TTL_MS = 2 * 60_000;

/** Why the browser is sent back with `#login_error=<reason>`. */
export type SignInError =
  | 'denied'
  | 'invalid_state'
  | 'github_unavailable'
  | 'no_verified_email'
  | 'handle_unavailable'
  | 'email_unavailable'
  | 'account_disabled';

export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
  constructor(
    readonly reason: SignInError,
    message: string,
  ) {
    super(message);
  }
}

export type SignInOutcome = 'created' | 'linked' | 'signed_in';

/** 32 random bytes, base64url: what states, login codes and the console's nonces look like (43 characters). */
export const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const newSecret = (): string => randomBytes(32).toString('base64url');
const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Two secrets (or two hashes) compared in constant time. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

// ------------------------------------------------------------------ 1. the redirect to GitHub

export interface Started {
  /** For the cookie; only its hash is stored. */
  state: string;
  /** GitHub's authorize page, with the state and the callback URL. */
  location: string;
}

/** `nonce` is the browser's (SECRET_SHAPE, checked by the route); only its hash is stored. */
export async function startSignIn(db: Db, github: GitHubSettings, start: { redirectUri: string; nonce: string }, now: number): Promise<Started> {
  const { redirectUri, nonce } = start;
  const at = new Date(now);
  // What has expired can be forgotten: an unknown state or code is refused exactly like an expired one.
  await db('github_oauth_states').where('expires_at', '<=', at).delete();
  await db('github_login_codes').where('expires_at', '<=', at).delete();
  const state = newSecret();
  await db('github_oauth_states').insert({
    state_hash: sha256(state),
    redirect_uri: redirectUri,
    nonce_hash: sha256(nonce),
    expires_at: new Date(now + STATE_TTL_MS),
  });
  return { state, location: authorizeUrl(github, { state, redirectUri }) };
}

// ------------------------------------------------------------------ 2. GitHub's redirect back

export interface Callback {
  /** The query's `state`, `code` and `error` (GitHub's), each only when it is one string. */
  state?: string;
  code?: string;
  error?: string;
  /** The state cookie this browser sent. */
  cookie?: string;
}

export interface SignInContext {
  db: Db;
  log: Logger;
  github: GitHubSettings;
  signup: SignupSettings;
  now: number;
}

/** The one-time login code for the console, or `SignInRefused`. */
export async function finishSignIn(c: SignInContext, cb: Callback): Promise<{ code: string; account: string; outcome: SignInOutcome }> {
  const { redirectUri, nonceHash } = await takeState(c.db, cb, c.now);
  if (cb.error !== undefined) {
    throw cb.error === 'access_denied'
      ? new SignInRefused('denied', 'the sign-in was not authorised on GitHub')
      : new SignInRefused('github_unavailable', `GitHub sent the browser back with ${cb.error.slice(0, 100)}`);
  }
  if (cb.code === undefined || cb.code.length > 200) throw new SignInRefused('github_unavailable', 'GitHub sent the browser back without a code');

  let user: GitHubUser;
  let email: string | null;
  try {
    // The token lives in this block only: it reads the account and is dropped.
    const token = await exchangeCode(c.github, cb.code, redirectUri);
    const [u, emails] = await Promise.all([readUser(c.github, token), readEmails(c.github, token)]);
    user = u;
    email = primaryVerifiedEmail(emails);
  } catch (e) {
    if (!(e instanceof GitHubUnavailable)) throw e;
    c.log.warn({ reason: e.message }, 'GitHub sign-in: GitHub unavailable');
    throw new SignInRefused('github_unavailable', e.message);
  }

  const done = await c.db.transaction(async (trx) => {
    const { handle, outcome } = await accountFor(trx, user, email, c.signup);
    const code = newSecret();
    await trx('github_login_codes').insert({
      code_hash: sha256(code),
      account: handle,
      outcome,
      nonce_hash: nonceHash,
      expires_at: new Date(c.now + LOGIN_CODE_TTL_MS),
    });
    return { code, account: handle, outcome };
  });
  c.log.info({ account: done.account, github_id: user.id, outcome: done.outcome }, 'GitHub sign-in');
  return done;
}

/** The state's callback URL and nonce hash, once: the query's state must be the cookie's, unused and unexpired. */
async function takeState(db: Db, cb: Callback, now: number): Promise<{ redirectUri: string; nonceHash: string }> {
  const refused = new SignInRefused('invalid_state', 'the sign-in link is unknown, used, expired or from another browser: sign in again');
  const { state, cookie } = cb;
  // A state from another browser is refused before it is used, so it stays good for the browser it belongs to.
  if (state === undefined || cookie === undefined || !SECRET_SHAPE.test(state) || !sameSecret(state, cookie)) throw refused;
  const at = new Date(now);
  const rows = (await db('github_oauth_states')
    .where({ state_hash: sha256(state) })
    .whereNull('used_at')
    .where('expires_at', '>', at)
    .update({ used_at: at })
    .returning(['redirect_uri', 'nonce_hash'])) as Array<{ redirect_uri: string; nonce_hash: string }>;
  if (rows.length !== 1) throw refused;
  return { redirectUri: rows[0]!.redirect_uri, nonceHash: rows[0]!.nonce_hash };
}

interface AccountRow {
  handle: string;
  email: string | null;
  github_id: bigint | null;
  github_login: string | null;
  disabled_at: Date | null;
}

const ACCOUNT_COLUMNS = ['handle', 'email', 'github_id', 'github_login', 'disabled_at'] as const;

function lockAccount(trx: Tx, where: { github_id: number } | { email: string } | { handle: string }): Promise<AccountRow | undefined> {
  return trx('accounts')
    .where({ kind: 'user', ...where })
    .forUpdate()
    .first(...ACCOUNT_COLUMNS);
}

function refuseDisabled(a: AccountRow): void {
  if (a.disabled_at) throw new SignInRefused('account_disabled', 'this account is disabled');
}

/** The account this GitHub user signs in to: theirs, an email account GitHub has verified the address of, or a new one. */
async function accountFor(trx: Tx, user: GitHubUser, email: string | null, settings: SignupSettings): Promise<{ handle: string; outcome: SignInOutcome }> {
  const mine = await lockAccount(trx, { github_id: user.id });
  if (mine) {
    refuseDisabled(mine);
    // Logins can be renamed on GitHub; the handle (a namespace) never changes.
    if (mine.github_login !== user.login) await trx('accounts').where({ handle: mine.handle }).update({ github_login: user.login });
    return { handle: mine.handle, outcome: 'signed_in' };
  }
  const address = email === null ? null : normaliseEmail(email);
  if (address === null) throw new SignInRefused('no_verified_email', 'GitHub has no verified primary email for this account');

  const byEmail = await lockAccount(trx, { email: address });
  if (byEmail) {
    refuseDisabled(byEmail);
    if (byEmail.github_id !== null) throw new SignInRefused('email_unavailable', 'the account with this email is linked to another GitHub account');
    await trx('accounts').where({ handle: byEmail.handle }).update({ github_id: user.id, github_login: user.login });
    return { handle: byEmail.handle, outcome: 'linked' };
  }

  try {
    const made = await createAccount(trx, { handle: user.login, email: address, github: user }, settings);
    return { handle: made.account.handle, outcome: 'created' };
  } catch (e) {
    if (!(e instanceof HolonError)) throw e;
    // A refused insert wrote nothing. The same GitHub user signing in at the same instant elsewhere made the account.
    const raced =
      e.code === 'handle_taken' || e.code === 'email_taken' || e.code === 'github_linked' ? await lockAccount(trx, { github_id: user.id }) : undefined;
    if (raced) {
      refuseDisabled(raced);
      return { handle: raced.handle, outcome: 'signed_in' };
    }
    if (e.code === 'email_blocked') throw new SignInRefused('account_disabled', e.message);
    if (e.code === 'email_taken') throw new SignInRefused('email_unavailable', e.message);
    if (e.code === 'invalid_handle' || e.code === 'handle_taken') throw new SignInRefused('handle_unavailable', e.message);
    throw e;
  }
}

// ------------------------------------------------------------------ 3. the console trades the code for keys

export interface Exchanged {
  handle: string;
  outcome: SignInOutcome;
  account: { handle: string; email: string | null; github: { id: number; login: string } };
  /** The human key expires after 30 days; the agent key (the starter sandbox's, for a new account) does not. */
  keys: { human: MintedKey; agent?: MintedKey };
  /** A new account's webhook signing secret, shown once (docs/webhooks.md); null when the gateway cannot keep one. */
  webhook_secret?: string | null;
}

/** One answer for a code that is unknown, used, expired or not this browser's: a planted code cannot be probed. */
const invalidCode = () => new HolonError('invalid_code', 'the sign-in code is unknown, used, expired or was not started in this browser: sign in again');

/**
 * The code and the nonce of the browser that started the sign-in, for keys. The code is spent only with its own
 * nonce: a wrong one is refused without spending it (as a state from another browser is), so whoever holds a leaked
 * code cannot spoil the sign-in of the browser it belongs to, and with 256 bits it cannot be guessed.
 */
export async function exchangeLoginCode(
  db: Db,
  proof: { code: string; nonce: string },
  now: number,
  webhooks?: Pick<WebhookSecrets, 'mint'>,
): Promise<Exchanged> {
  const { code, nonce } = proof;
  if (!SECRET_SHAPE.test(code) || !SECRET_SHAPE.test(nonce)) throw invalidCode();
  const at = new Date(now);
  const done = await db.transaction(async (trx) => {
    // Locked: the code is found, its nonce compared here in constant time, and marked used, by one exchange at a time.
    const found = (await trx('github_login_codes')
      .where({ code_hash: sha256(code) })
      .whereNull('used_at')
      .where('expires_at', '>', at)
      .forUpdate()
      .first('account', 'outcome', 'nonce_hash')) as { account: string; outcome: SignInOutcome; nonce_hash: string } | undefined;
    if (!found || !sameSecret(sha256(nonce), found.nonce_hash)) throw invalidCode();
    await trx('github_login_codes')
      .where({ code_hash: sha256(code) })
      .update({ used_at: at });
    const used = found;
    // Locked: two codes of one account traded at once mint one starter agent key, not two.
    const account = (await lockAccount(trx, { handle: used.account }))!;
    // The code is used up either way (committed), but a disabled account gets no key.
    if (account.disabled_at) return null;
    // The starter agent key goes with an account's first keys: a new account's (even when its first code expired).
    const first =
      !(await trx('api_keys').where({ account: account.handle }).first('prefix')) &&
      Boolean(
        await trx('mandates')
          .where({ id: starterMandateId(account.handle) })
          .first('id'),
      );
    const human = await createKey(trx, { kind: 'human', account: account.handle, expiresAt: new Date(now + HUMAN_KEY_TTL_MS) });
    const agent = first ? await createStarterAgentKey(trx, account.handle) : undefined;
    // The webhook secret goes with them, once.
    const webhookSecret = first && webhooks ? ((await webhooks.mint(trx, account.handle)) ?? null) : undefined;
    return {
      handle: account.handle,
      outcome: used.outcome,
      account: { handle: account.handle, email: account.email, github: { id: Number(account.github_id), login: account.github_login! } },
      keys: { human, ...(agent ? { agent } : {}) },
      ...(webhookSecret !== undefined ? { webhook_secret: webhookSecret } : {}),
    };
  });
  if (!done) throw new HolonError('account_disabled', 'this account is disabled: it gets no key');
  return done;
}
