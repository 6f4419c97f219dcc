// @ts-check
// Who is using the console. The key lives in sessionStorage only (this tab, gone when it closes) — never in a URL,
// a cookie or local storage, and never logged. A dev gateway (`npm start`) has no keys: the page acts as the local
// operator, who sees the dev mandates.

const STORE = 'holon.console.key';
/** The nonce of the GitHub sign-in this tab started, until the code comes back (docs/hosted.md). */
const SIGN_IN = 'holon.console.sign-in';
/** Where to go once signed in: an MCP client's sign-in request waiting in this tab (pages/authorize.js). */
const RETURN = 'holon.console.return';

export const mode = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="holon-mode"]'))?.content === 'hosted' ? 'hosted' : 'dev';

/**
 * Who the console acts as: the dev operator, a human (their handle and GET /v0/me), or the operator's admin key.
 * @typedef {{ kind: 'operator' } | { kind: 'human', handle: string, me?: import('./api-types.js').HumanMe } | { kind: 'admin' }} Who
 */

/** @type {Who | null} */
let who = null;
let reason = '';

export function key() {
  if (mode === 'dev') return null;
  try {
    return sessionStorage.getItem(STORE);
  } catch {
    return null;
  }
}

/** @param {string} value */
export function keep(value) {
  sessionStorage.setItem(STORE, value);
  reason = '';
}

/** The principal the console acts as: { kind: 'operator' | 'human' | 'admin', handle?, me? }. */
export const current = () => who;
/** @param {Who | null} value */
export const setCurrent = (value) => {
  who = value;
};

/** Forget the key (sign out, or a key the gateway refused) and say why on the sign-in page. */
export function forget(why = '') {
  try {
    sessionStorage.removeItem(STORE);
  } catch {
    /* storage off: nothing was kept */
  }
  who = null;
  reason = why;
}

/** Why the person is on the sign-in page (a refused key, signing out), until they sign in again. */
export const takeReason = () => reason;

/**
 * A GitHub sign-in starts in this tab: a new random nonce (32 bytes, base64url), kept in this tab until the code comes
 * back. The gateway binds the sign-in to it: a /console#login=<code> link opened anywhere else cannot be traded.
 */
export function startSignIn() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const nonce = btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  sessionStorage.setItem(SIGN_IN, nonce);
  return nonce;
}

/** The nonce of the sign-in this tab started, once (it is forgotten here), or null when none is pending. */
export function takeSignIn() {
  try {
    const nonce = sessionStorage.getItem(SIGN_IN);
    sessionStorage.removeItem(SIGN_IN);
    return nonce;
  } catch {
    return null;
  }
}

/**
 * Come back to this console address once signed in (a sign-in request of an MCP client, `#/authorize/<id>`), even
 * across the round trip to GitHub: kept in this tab only.
 * @param {string} hash
 */
export function returnAfterSignIn(hash) {
  try {
    sessionStorage.setItem(RETURN, hash);
  } catch {
    /* storage off: the person opens the address again */
  }
}

/** The address to come back to, once (it is forgotten here), or null. */
export function takeReturn() {
  try {
    const hash = sessionStorage.getItem(RETURN);
    sessionStorage.removeItem(RETURN);
    return hash && /^#\/authorize\/[A-Za-z0-9_-]{43}$/.test(hash) ? hash : null;
  } catch {
    return null;
  }
}
