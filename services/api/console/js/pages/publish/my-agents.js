// @ts-check
// Publish, (c) my agents (GET /v0/me/agents): what every version earned, in all and by agent, and each version
// (version.js). While an evaluation runs, its blocks are read again every few seconds, in place.

import { ApiError, get } from '../../api.js';
import { fill, h, notice } from '../../dom.js';
import { section, when } from '../../format.js';
import { evaluationView, sentence } from '../../agent-view.js';
import { tryHash } from '../../paths.js';
import { addAmounts, amounts } from './shared.js';
import { versionBlock } from './version.js';
import { payoutsCard } from './payouts.js';

/**
 * @typedef {import('../../api-types.js').MyAgents} MyAgents
 * @typedef {import('../../api-types.js').MyVersion} MyVersion
 */

/**
 * The section's state: where it draws, the last answer drawn, the polling, each version's evaluation block.
 * @typedef {object} MyAgentsState
 * @property {HTMLElement} body
 * @property {HTMLElement} pageStatus where an outcome is said when its own place is gone
 * @property {string[]} ids your agents, as last drawn
 * @property {MyAgents | null} last
 * @property {ReturnType<typeof setTimeout> | undefined} timer
 * @property {boolean} left
 * @property {number} generation each read of /v0/me/agents has a number: an answer older than the latest is dropped
 * @property {Map<string, HTMLElement>} evaluationBoxes
 * @property {(id: string) => void} onChangeToken
 * @property {() => Promise<void>} reload
 * @property {() => void} schedule
 */

const POLL_MS = 4000;

/** @param {MyAgents} data */
const pending = (data) =>
  data.versions.some(
    (v) => v.listed && (v.evaluation?.status === 'pending' || v.evaluation?.suites?.some((s) => s.status === 'queued' || s.status === 'running')),
  );

/** @param {MyAgents} data */
const versionsOf = (data) => JSON.stringify(data.versions.map((v) => [v.agent, v.version, v.listed]));

/**
 * While an evaluation runs: refresh only the evaluation blocks, so nobody loses their place on the page.
 * @param {MyAgentsState} s
 */
async function poll(s) {
  if (s.left) return;
  const mine = ++s.generation;
  /** @type {MyAgents} */
  let data;
  try {
    data = await get('/v0/me/agents');
  } catch {
    if (mine === s.generation) s.schedule();
    return;
  }
  const last = s.last;
  if (s.left || mine !== s.generation || !last) return;
  if (versionsOf(data) !== versionsOf(last)) {
    s.last = data;
    draw(s, data);
  } else {
    for (const v of data.versions) {
      const key = `${v.agent}@${v.version}`;
      const before = last.versions.find((x) => `${x.agent}@${x.version}` === key);
      if (JSON.stringify(before?.evaluation) !== JSON.stringify(v.evaluation)) {
        const box = s.evaluationBoxes.get(key);
        if (box) fill(box, evaluationView(v.evaluation));
      }
    }
    s.last = data;
  }
  s.schedule();
}

/**
 * Read your agents and draw them.
 * @param {MyAgentsState} s
 */
async function reload(s) {
  clearTimeout(s.timer);
  const mine = ++s.generation;
  /** @type {MyAgents} */
  let data;
  try {
    data = await get('/v0/me/agents');
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(s.body, notice('error', 'Your agents could not be read: ', sentence(e.message), ' Reload the page to try again.'));
    return;
  }
  if (s.left || mine !== s.generation) return;
  s.last = data;
  draw(s, data);
  s.schedule();
}

/**
 * What every version earned, in all.
 * @param {MyAgents} data
 */
function earnings(data) {
  const t = data.totals ?? {};
  return h(
    'div',
    { class: 'card' },
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Earned in all'),
      h('dd', { id: 'earned-total' }, amounts(t.total)),
      h('dt', {}, 'Your share of paid calls'),
      h('dd', {}, amounts(t.share)),
      h('dt', {}, 'Royalties from forks'),
      h('dd', {}, amounts(t.royalties)),
      Object.keys(t.unattributed ?? {}).length && amounts(t.unattributed) !== 'nothing yet'
        ? [h('dt', {}, 'Not attributed to a version'), h('dd', {}, amounts(t.unattributed))]
        : null,
    ),
    h('p', { class: 'hint' }, 'Demo money, read from the journal. Your earnings are ', String(data.definition ?? '').replace(/\.?$/, '.')),
    data.credentials_note ? h('p', { class: 'hint' }, sentence(data.credentials_note)) : null,
  );
}

/**
 * @param {MyAgentsState} s
 * @param {MyAgents} data
 */
function draw(s, data) {
  s.ids = [...new Set(data.versions.map((v) => v.agent))];
  s.evaluationBoxes.clear();
  if (!data.versions.length) {
    fill(
      s.body,
      h(
        'p',
        { class: 'empty' },
        'You have not published an agent yet. Connect a webhook above, or publish a manifest from a terminal with holon publish holon.yaml.',
      ),
    );
    return;
  }
  fill(
    s.body,
    earnings(data),
    payoutsCard(),
    s.ids.map((id) =>
      agentCard(
        s,
        id,
        data.versions.filter((v) => v.agent === id),
      ),
    ),
  );
}

/**
 * One agent: its endpoint token, what every version earned, and each version, newest first.
 * @param {MyAgentsState} s
 * @param {string} id
 * @param {MyVersion[]} versions
 */
function agentCard(s, id, versions) {
  const credential = versions[0]?.credential;
  const listedOne = versions.some((v) => v.listed);
  const total = addAmounts(versions.map((v) => v.earnings?.total));
  const headingId = `agent-${id.replace(/[^a-z0-9-]/g, '-')}`;
  return h(
    'article',
    { class: 'card', 'aria-labelledby': headingId },
    h('h3', { id: headingId }, listedOne ? h('a', { href: tryHash(id) }, id) : id),
    h(
      'p',
      {},
      'Endpoint token: ',
      credential === null || credential === undefined
        ? 'unknown on this gateway'
        : credential.set
          ? `set${credential.set_at ? ` since ${when(credential.set_at)}` : ''}`
          : 'not set',
      '. ',
      h('button', { type: 'button', class: 'link', on: { click: () => s.onChangeToken(id) } }, credential?.set ? 'Change or clear it' : 'Set one'),
    ),
    h('p', {}, `Earned by every version of ${id}: `, h('strong', {}, amounts(total)), '.'),
    [...versions].reverse().map((v) => versionBlock(s, v)),
  );
}

/**
 * The section; `reload()` reads your agents again (after a publish), `agentIds()` lists them.
 * @param {import('../../app.js').PageContext} p
 * @param {HTMLElement} pageStatus
 */
export function myAgents(p, pageStatus) {
  /** @type {MyAgentsState} */
  const s = {
    body: h('div', { id: 'my-agents' }, h('p', { class: 'loading', role: 'status' }, 'Loading your agents…')),
    pageStatus,
    ids: [],
    last: null,
    timer: undefined,
    left: false,
    generation: 0,
    evaluationBoxes: new Map(),
    onChangeToken: () => {},
    reload: () => reload(s),
    schedule: () => {
      clearTimeout(s.timer);
      if (!s.left && s.last && pending(s.last)) s.timer = setTimeout(() => poll(s), POLL_MS);
    },
  };
  p.onLeave(() => {
    s.left = true;
    clearTimeout(s.timer);
  });
  return {
    node: section('My agents', s.body),
    agentIds: () => s.ids,
    /** @param {(id: string) => void} fn */
    set onChangeToken(fn) {
      s.onChangeToken = fn;
    },
    reload: s.reload,
  };
}
