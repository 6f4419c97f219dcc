// @ts-check
// The console's shell: who is signed in, the navigation, and a hash router (#/home, #/calls?status=failed,
// #/receipts/<id>, #/month/2026-12, …). Each page is a module of js/pages/ with `title` and `render(page)`.
// GitHub's sign-in comes back as #login=<code>; that fragment is taken out of the address bar at once.

import { ApiError, get, SignedOut } from './api.js';
import { fill, h, notice } from './dom.js';
import { current, forget, key, mode, returnAfterSignIn, setCurrent, takeReturn } from './session.js';
import { showKeysOnce, signInPage, takeLoginFragment } from './sign-in.js';

/**
 * @typedef {import('./session.js').Who} Who
 * @typedef {Who['kind']} Kind
 */

/**
 * What a page's `render` is given: the route's segments and query, who is signed in, a way to go elsewhere, and a
 * way to stop what the page started (timers, polling) when it is left.
 * @typedef {object} PageContext
 * @property {string[]} params
 * @property {URLSearchParams} query
 * @property {Who} who
 * @property {(hash: string) => void} navigate
 * @property {(fn: () => void) => void} onLeave
 */

/**
 * A page of the console: its route, its title, who may see it, whether the navigation lists it, and its module.
 * @typedef {{ path: string, title: string, kinds: Kind[], nav?: boolean, load: () => Promise<{ render: (page: PageContext) => Promise<Node> }> }} Page
 */

/** @type {Page[]} */
const PAGES = [
  { path: 'try', title: 'Try an agent', kinds: ['operator', 'human'], load: () => import('./pages/try.js') },
  { path: 'home', title: 'Home', kinds: ['operator', 'human'], load: () => import('./pages/home.js') },
  { path: 'mandates', title: 'Mandates and keys', kinds: ['operator', 'human'], load: () => import('./pages/mandates.js') },
  { path: 'approvals', title: 'Approvals', kinds: ['operator', 'human'], load: () => import('./pages/approvals.js') },
  { path: 'calls', title: 'Calls', kinds: ['operator', 'human'], load: () => import('./pages/calls.js') },
  { path: 'receipts', title: 'Receipt', kinds: ['operator', 'human'], nav: false, load: () => import('./pages/receipt.js') },
  { path: 'month', title: 'Month', kinds: ['operator', 'human'], load: () => import('./pages/month.js') },
  { path: 'publish', title: 'Publish', kinds: ['human'], load: () => import('./pages/publish.js') },
  { path: 'operator', title: 'Operator', kinds: ['admin'], load: () => import('./pages/operator.js') },
  { path: 'authorize', title: 'Connect an MCP client', kinds: ['human'], nav: false, load: () => import('./pages/authorize.js') },
];

/** Where a principal starts: a newcomer on a dev gateway tries an agent first. */
const START = { operator: 'try', human: 'home', admin: 'operator' };

/** @param {string} id */
const byId = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
};
const view = byId('view');
const nav = byId('nav');
const whoBox = byId('who');
/** @type {Array<() => void>} */
let leaving = [];

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const segments = (path ?? '').split('/').filter(Boolean).map(decodeURIComponent);
  return { name: segments[0] ?? '', params: segments.slice(1), query: new URLSearchParams(query) };
}

/** @param {string} hash */
export function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

/** @param {Who} who */
function renderNav(who) {
  const here = parseHash().name;
  fill(
    nav,
    h(
      'ul',
      {},
      PAGES.filter((p) => p.nav !== false && p.kinds.includes(who.kind)).map((p) =>
        h(
          'li',
          {},
          h('a', { href: `#/${p.path}`, 'aria-current': p.path === here || (here === 'receipts' && p.path === 'calls') ? 'page' : undefined }, p.title),
        ),
      ),
    ),
  );
  const label = who.kind === 'operator' ? 'Dev gateway: local operator' : who.kind === 'admin' ? 'Operator (admin key)' : `Signed in as ${who.handle}`;
  fill(
    whoBox,
    h('span', {}, label),
    mode === 'hosted'
      ? h(
          'button',
          {
            type: 'button',
            class: 'link',
            on: {
              click: () => {
                forget('You are signed out. The key was forgotten by this tab.');
                route();
              },
            },
          },
          'Sign out',
        )
      : null,
  );
}

function leave() {
  for (const fn of leaving) fn();
  leaving = [];
}

/**
 * Who the console acts as: the dev operator, or what the kept key is (human or admin).
 * @returns {Promise<Who | null>}
 */
async function identify() {
  if (mode === 'dev') return { kind: 'operator' };
  if (!key()) return null;
  const known = current();
  if (known) return known;
  try {
    /** @type {import('./api-types.js').Me} */
    const me = await get('/v0/me');
    if (me.kind === 'human') return { kind: 'human', handle: me.account.handle, me };
    forget('That is an agent key: it acts for an agent under one mandate. Sign in with your human key (hlk_h_…).');
    return null;
  } catch (e) {
    if (e instanceof SignedOut) return null;
    if (e instanceof ApiError && e.status === 403) {
      // Not a human or agent key: the operator's admin key reads the moderation log.
      await get('/v0/admin/log');
      return { kind: 'admin' };
    }
    throw e;
  }
}

async function route() {
  leave();
  const login = takeLoginFragment();
  if (login) {
    fill(nav);
    fill(whoBox);
    await showKeysOnce(view, login, () => navigate(takeReturn() ?? '#/home'));
    return;
  }
  let who;
  try {
    who = await identify();
  } catch (e) {
    fill(view, h('h1', {}, 'The console could not start'), notice('error', messageOf(e)));
    return;
  }
  if (!who) {
    fill(nav);
    fill(whoBox);
    // An MCP client's sign-in request waits for the person to sign in (with GitHub: across the round trip).
    const asking = parseHash().name === 'authorize';
    if (asking) returnAfterSignIn(location.hash);
    signInPage(view, () => route(), asking ? 'An MCP client asks to connect to your Holon account: sign in to answer it.' : undefined);
    document.title = 'Sign in · Holon console';
    return;
  }
  setCurrent(who);
  const { name, params, query } = parseHash();
  const page = PAGES.find((p) => p.path === name && p.kinds.includes(who.kind));
  if (!page) {
    navigate(`#/${START[who.kind]}`);
    return;
  }
  renderNav(who);
  document.title = `${page.title} · Holon console`;
  fill(view, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  view.setAttribute('aria-busy', 'true');
  try {
    const module = await page.load();
    const node = await module.render({ params, query, who, navigate, onLeave: (fn) => leaving.push(fn) });
    fill(view, node);
  } catch (e) {
    if (e instanceof SignedOut) return;
    fill(
      view,
      h('h1', {}, page.title),
      notice('error', e instanceof ApiError ? e.message : `Something went wrong in the page: ${messageOf(e)}`, ' Reload to try again.'),
    );
  } finally {
    view.removeAttribute('aria-busy');
  }
  const heading = view.querySelector('h1');
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  }
}

/** @param {unknown} e */
function messageOf(e) {
  return e instanceof Error ? e.message : String(e);
}

window.addEventListener('hashchange', route);
window.addEventListener('holon:signed-out', () => route());
route();
