// Who is using the console. The key lives in sessionStorage only (this tab, gone when it closes) — never in a URL,
// a cookie or local storage, and never logged. A dev gateway (`npm start`) has no keys: the page acts as the local
// operator, who sees the dev mandates.

const STORE = 'holon.console.key';

export const mode = document.querySelector('meta[name="holon-mode"]')?.content === 'hosted' ? 'hosted' : 'dev';

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

export function keep(value) {
  sessionStorage.setItem(STORE, value);
  reason = '';
}

/** The principal the console acts as: { kind: 'operator' | 'human' | 'admin', handle?, me? }. */
export const current = () => who;
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
