// @ts-check
// Publish, (c) one version of one of your agents: listed or yanked, its license, what it earned, its evaluation
// (re-run it), and yanking it, after a confirmation.

import { ApiError, request } from '../../api.js';
import { actionButton, fill, h } from '../../dom.js';
import { when } from '../../format.js';
import { evaluationView, sentence } from '../../agent-view.js';
import { versionUrl } from '../../paths.js';
import { amounts } from './shared.js';

/**
 * @typedef {import('../../api-types.js').MyVersion} MyVersion
 * @typedef {import('./my-agents.js').MyAgentsState} MyAgentsState
 */

/**
 * Where a version's actions and their outcome are drawn.
 * @typedef {{ v: MyVersion, key: string, actions: HTMLElement, outcome: HTMLElement, evalBox: HTMLElement }} VersionBlock
 */

/**
 * A listed version's actions: re-run its evaluation, yank it.
 * @param {MyAgentsState} s
 * @param {VersionBlock} b
 */
function showActions(s, b) {
  fill(
    b.actions,
    b.v.listed
      ? [
          actionButton('Re-run evaluation', () => rerun(s, b), { class: 'secondary' }),
          h('button', { type: 'button', class: 'danger', on: { click: () => confirmYank(s, b) } }, `Yank ${b.v.version}`),
        ]
      : null,
  );
}

/**
 * @param {MyAgentsState} s
 * @param {VersionBlock} b
 */
async function rerun(s, { v, key, outcome, evalBox }) {
  outcome.textContent = '';
  try {
    /** @type {import('../../api.js').Answer<import('../../api-types.js').Answer<'rerunEvaluation', 202>>} */
    const { body: r } = await request('POST', `${versionUrl(v.agent, v.version)}/evaluate`, {});
    const suites = (r.evaluation?.suites ?? []).map((x) => x.capability);
    outcome.textContent = `Evaluation queued${suites.length ? ` on ${suites.join(', ')}` : ''}. The results appear here as the cases are judged.`;
    const fresh = { ...v.evaluation, ...r.evaluation };
    fill(evalBox, evaluationView(fresh));
    const last = s.last;
    if (last) {
      s.last = { ...last, versions: last.versions.map((x) => (`${x.agent}@${x.version}` === key ? { ...x, evaluation: fresh } : x)) };
      s.schedule();
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    outcome.textContent = `${sentence(err.message)}${err.status === 429 ? ' Re-runs are limited per hour: try again later.' : ''}`;
  }
}

/**
 * Yank it? Said, with Yes and Cancel (Escape cancels).
 * @param {MyAgentsState} s
 * @param {VersionBlock} b
 */
function confirmYank(s, b) {
  const { v, key, actions, outcome } = b;
  outcome.textContent = '';
  const cancel = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      on: {
        click: () => {
          showActions(s, b);
          /** @type {HTMLElement | null} */ (actions.querySelector('button.danger'))?.focus();
        },
      },
    },
    'Cancel',
  );
  const yes = actionButton(`Yes, yank ${v.version}`, () => yank(s, b), { class: 'danger' });
  const question = h(
    'div',
    {
      role: 'group',
      'aria-label': `Confirm yanking ${key}`,
      on: {
        keydown: (/** @type {KeyboardEvent} */ event) => {
          if (event.key === 'Escape') cancel.click();
        },
      },
    },
    h(
      'p',
      {},
      h('strong', {}, `Yank ${key}? `),
      `It stops being listed at once. Calls already admitted and royalties of its forks still settle. The number ${v.version} can never be published again.`,
    ),
    yes,
    cancel,
  );
  fill(actions, question);
  cancel.focus();
}

/**
 * @param {MyAgentsState} s
 * @param {VersionBlock} b
 */
async function yank(s, b) {
  const { v, key, outcome } = b;
  try {
    await request('DELETE', versionUrl(v.agent, v.version));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showActions(s, b);
    outcome.textContent = sentence(err.message);
    return;
  }
  await s.reload();
  // The version is drawn again (now yanked): say so there, and put the focus there, not back at the top.
  const said = `Yanked ${key}: it is no longer listed. Its number stays taken.`;
  const there = /** @type {HTMLElement | null} */ (s.body.querySelector(`[data-outcome="${CSS.escape(key)}"]`)) ?? s.pageStatus;
  there.textContent = said;
  there.focus();
}

/**
 * A version's block.
 * @param {MyAgentsState} s
 * @param {MyVersion} v
 */
export function versionBlock(s, v) {
  const key = `${v.agent}@${v.version}`;
  const b = {
    v,
    key,
    actions: h('div', {}),
    outcome: h('p', { role: 'status', tabindex: '-1', 'data-outcome': key }),
    evalBox: h('div', {}, evaluationView(v.evaluation)),
  };
  s.evaluationBoxes.set(key, b.evalBox);
  const e = v.earnings ?? {};
  showActions(s, b);
  return h(
    'section',
    { 'aria-label': key },
    h('h4', {}, `Version ${v.version} `, h('span', { class: `status ${v.listed ? 's-succeeded' : 's-failed'}` }, v.listed ? 'listed' : 'yanked')),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Listed'),
      h('dd', {}, when(v.listed_at), v.yanked_at ? `; yanked ${when(v.yanked_at)}` : ''),
      h('dt', {}, 'License'),
      h('dd', {}, v.proprietary ? 'Proprietary' : (v.license ?? '—')),
      h('dt', {}, 'Earned'),
      h(
        'dd',
        {},
        amounts(e.total),
        ` (${e.paid_calls ?? 0} paid call${e.paid_calls === 1 ? '' : 's'}: ${amounts(e.share)}`,
        e.fork_calls ? `; ${e.fork_calls} call${e.fork_calls === 1 ? '' : 's'} to forks: ${amounts(e.royalties)} in royalties` : '',
        ')',
      ),
    ),
    h('h5', {}, 'Evaluation'),
    b.evalBox,
    b.actions,
    b.outcome,
  );
}
