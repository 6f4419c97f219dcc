// @ts-check
// Signing in (gateway.md §7): with GitHub — the tab makes a nonce and keeps it (session.js), the callback sends the
// browser to /console#login=<code> (or #login_error=<reason>) and the code is traded once with POST
// /v0/auth/exchange with that nonce; a code that comes back to a tab that started no sign-in (a link someone sent)
// is not used — or by pasting a key: a human key (email accounts) or the operator's admin key. The key is kept in
// sessionStorage for this tab only.

import { ApiError, post, request } from './api.js';
import { copyButton, field, fill, h, notice, setFieldError } from './dom.js';
import { keep, key, setCurrent, startSignIn, takeReason, takeSignIn } from './session.js';
import { SIGN_IN_ERRORS, wordsFor } from './error-words.js';

/**
 * @typedef {import('./api-types.js').Me} Me
 * @typedef {import('./api-types.js').Answer<'exchangeLoginCode'>} Exchanged
 * @typedef {{ code: string } | { error: string }} Login
 */

/** The GitHub return, read from the fragment and removed from the address bar before anything else runs. */
export function takeLoginFragment() {
  if (!/^#login(_error)?=/.test(location.hash)) return null;
  const fragment = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
  const code = fragment.get('login');
  if (code) return { code };
  return { error: wordsFor(SIGN_IN_ERRORS, fragment.get('login_error')) || 'The sign-in was refused. Sign in again.' };
}

/**
 * The button that starts a GitHub sign-in bound to this tab (its nonce), then goes to GitHub.
 * @param {string} label
 * @param {string} [id]
 */
export function gitHubButton(label, id) {
  return h('button', { type: 'button', id, on: { click: () => location.assign(`/v0/auth/github?nonce=${startSignIn()}`) } }, label);
}

const AGENT_KEY = 'That is an agent key: it acts for an agent under one mandate. Paste your human key (hlk_h_…).';

/**
 * A pasted key: a human key is kept and signs in; else the operator's admin key; else what is wrong, at the field.
 * @param {import('./dom.js').Field} keyField
 * @param {() => void} done
 */
async function signInWithKey(keyField, done) {
  const value = keyField.input.value.trim();
  setFieldError(keyField, '');
  if (!value) return setFieldError(keyField, 'Paste your key here.');
  if (value.startsWith('hlk_a_')) return setFieldError(keyField, AGENT_KEY);
  /** @type {import('./api.js').Answer<Me>} */
  const me = await request('GET', '/v0/me', undefined, { key: value, any: true });
  if (me.status === 401) return setFieldError(keyField, 'This key is unknown, expired or revoked. Sign in with GitHub for a new one.');
  if (me.status === 200 && me.body.kind === 'agent') return setFieldError(keyField, AGENT_KEY);
  if (me.status === 200 && me.body.kind === 'human') {
    keep(value);
    setCurrent({ kind: 'human', handle: me.body.account.handle, me: me.body });
    done();
    return;
  }
  const admin = await request('GET', '/v0/admin/log', undefined, { key: value, any: true });
  if (admin.status === 200) {
    keep(value);
    setCurrent({ kind: 'admin' });
    done();
    return;
  }
  setFieldError(keyField, 'The gateway did not accept this key.');
}

/**
 * The sign-in page: GitHub, or a pasted key.
 * @param {HTMLElement} view
 * @param {() => void} done
 * @param {string} [why] why the person is asked to sign in now (an MCP client waits), when the page says it
 */
export function signInPage(view, done, why) {
  const reason = takeReason() || why;
  const keyField = field({
    label: 'Your key',
    name: 'key',
    type: 'password',
    hint: 'A human key (hlk_h_…) from signing up by email, or the operator’s admin key. It is kept in this tab only and forgotten when you sign out or close it.',
    required: true,
  });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'paste-heading',
      on: {
        submit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          return signInWithKey(keyField, done);
        },
      },
    },
    h('h2', { id: 'paste-heading' }, 'Or paste a key'),
    keyField.row,
    h('button', { type: 'submit' }, 'Sign in with this key'),
  );
  fill(
    view,
    h(
      'section',
      { id: 'signed-out' },
      h('h1', {}, 'Sign in to Holon'),
      reason ? notice('info', reason) : null,
      h('p', {}, 'Set budgets, approve held calls, read what a month cost, publish agents and watch what they earn.'),
      h(
        'div',
        { class: 'card' },
        h('h2', {}, 'With GitHub'),
        h('p', {}, 'Required to publish agents.'),
        h('p', {}, gitHubButton('Sign in with GitHub', 'sign-in')),
      ),
      form,
      status,
    ),
  );
}

/**
 * After GitHub: trade the code once with this tab's nonce, show the keys once, keep the human key for this tab. A
 * code this tab did not ask for is not traded, and the key the tab kept stays.
 */
/**
 * @param {HTMLElement} view
 * @param {Login} login
 * @param {() => void} proceed
 */
export async function showKeysOnce(view, login, proceed) {
  const nonce = takeSignIn();
  if ('error' in login) return failed(view, login.error);
  if (!nonce) return notStartedHere(view, proceed);
  fill(view, h('section', { id: 'working' }, h('h1', {}, 'Signing you in…'), h('p', { role: 'status' }, 'Trading the one-time code for your keys.')));
  /** @type {Exchanged} */
  let body;
  try {
    body = await post('/v0/auth/exchange', { code: login.code, nonce }, { key: '' });
  } catch (e) {
    return failed(view, e instanceof ApiError ? e.message : 'The gateway could not be reached. Sign in again.');
  }
  keep(body.keys.human.key);
  setCurrent(null);
  /** @type {(label: string, id: string, value: string) => import('./dom.js').Child} */
  const row = (label, id, value) => [h('dt', {}, label), h('dd', {}, h('code', { id }, value), ' ', copyButton(value))];
  fill(
    view,
    h(
      'section',
      { id: 'signed-in' },
      h('h1', {}, 'Signed in as ', h('span', { id: 'handle' }, body.handle)),
      notice('info', h('span', { id: 'note' }, body.note || 'The keys are shown once: keep them now.')),
      h(
        'dl',
        { class: 'keys' },
        row(`Human key (expires ${new Date(body.keys.human.expires_at ?? 0).toUTCString()})`, 'human-key', body.keys.human.key),
        body.keys.agent ? row('Agent key (acts under the sandbox mandate)', 'agent-key', body.keys.agent.key) : null,
      ),
      h('p', {}, 'Publish from a terminal with ', h('code', {}, 'holon publish holon.yaml --key <human key>'), '.'),
      h('p', {}, h('button', { type: 'button', id: 'continue', on: { click: proceed } }, 'I have kept them: open the console')),
    ),
  );
  view.querySelector('h1')?.focus();
}

/**
 * A #login= link this tab did not start: said, and nothing replaced; signing in here is the person's choice.
 * @param {HTMLElement} view
 * @param {() => void} proceed
 */
function notStartedHere(view, proceed) {
  const kept = Boolean(key());
  fill(
    view,
    h(
      'section',
      { id: 'not-started' },
      h('h1', { tabindex: '-1' }, 'This sign-in was not started here'),
      h(
        'p',
        { id: 'not-started-reason', role: 'alert' },
        'The sign-in link you opened was not started in this browser tab, so Holon did not use it. A link like this, sent by someone else, would sign you in to their account.',
      ),
      h('p', {}, kept ? 'You are still signed in with the key this tab kept: nothing changed.' : 'Nothing changed: you are not signed in.'),
      h(
        'p',
        {},
        gitHubButton('Sign in with GitHub here', 'sign-in-here'),
        h('button', { type: 'button', class: 'secondary', id: 'stay', on: { click: proceed } }, kept ? 'Go on with the key I have' : 'Back to sign-in'),
      ),
    ),
  );
  view.querySelector('h1')?.focus();
}

/**
 * @param {HTMLElement} view
 * @param {string} message
 */
function failed(view, message) {
  fill(
    view,
    h(
      'section',
      { id: 'failed' },
      h('h1', {}, 'The sign-in did not work'),
      h('p', { id: 'failure', role: 'alert' }, message),
      h('p', {}, gitHubButton('Sign in again')),
    ),
  );
}
