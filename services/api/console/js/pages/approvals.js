// @ts-check
// Approvals (the page gateway.md §8 left out): each pending approval with the agent and its exact version, the
// worst case and max_cost in the mandate's currency, the reasons, the expiry, and the input it would receive —
// as text, never as HTML, long inputs folded. Approve and run, grant only, or reject; the outcome is shown in
// place. New approvals appear while the page is open (polled every few seconds).

import { ApiError, get, request } from '../api.js';
import { fill, foldedText, h, notice } from '../dom.js';
import { cost, page, status, when } from '../format.js';
import { money } from '../money.js';
import { receiptHash } from '../paths.js';

/**
 * @typedef {import('../api-types.js').Approval} Approval
 * @typedef {import('../api-types.js').Answer<'listApprovals'>} Approvals
 * @typedef {import('../api-types.js').Receipt} Receipt
 * @typedef {Approval | { receipt?: Receipt }} Decided the approval (granted, rejected), or the call's answer (run)
 * @typedef {{ decision?: 'reject', run?: false }} Decision
 */

const POLL_MS = 3000;

/** @param {import('../app.js').PageContext} page */
export async function render({ who, onLeave }) {
  const list = h('ul', { class: 'plain', id: 'approval-list', 'aria-live': 'polite', 'aria-relevant': 'additions' });
  const empty = h('p', { class: 'empty', id: 'no-approvals' }, 'No approval is waiting. New ones appear here as they arrive.');
  const cards = new Map();
  const canDecide = who.kind === 'human' || who.kind === 'operator';

  async function refresh() {
    /** @type {Approvals} */
    const { approvals } = await get('/v0/approvals');
    const newest = [...approvals].sort((a, b) => b.created_at.localeCompare(a.created_at));
    for (const a of newest.reverse()) {
      if (cards.has(a.id)) continue;
      const card = approvalCard(a, canDecide);
      cards.set(a.id, card);
      list.prepend(card);
    }
    empty.hidden = cards.size > 0;
  }

  await refresh();
  let stopped = false;
  const timer = setInterval(() => {
    if (!stopped) refresh().catch(() => {});
  }, POLL_MS);
  onLeave(() => {
    stopped = true;
    clearInterval(timer);
  });
  return page('Approvals', 'Calls your mandates hold for a human decision. Only you, the issuer, decide; an agent key never can.', empty, list);
}

/**
 * @param {Approval} a
 * @param {boolean} canDecide
 */
function approvalCard(a, canDecide) {
  const outcome = h('div', { class: 'outcome', 'aria-live': 'polite' });
  const buttons = h('div', { class: 'actions' });
  /** @type {(label: string, body: Decision) => Promise<void>} */
  const decide = async (label, body) => {
    for (const b of buttons.querySelectorAll('button')) b.disabled = true;
    fill(outcome, h('p', { role: 'status' }, `${label}…`));
    try {
      /** @type {import('../api.js').Answer<Decided>} */
      const answer = await request('POST', `/v0/approvals/${encodeURIComponent(a.id)}`, body, { any: true });
      if (answer.status >= 400 && !answer.body?.receipt) throw new ApiError(answer.status, answer.body);
      fill(outcome, describeOutcome(body, answer));
      buttons.remove();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(outcome, notice('error', e.message, ' Reload the page to see where the approval stands.'));
      for (const b of buttons.querySelectorAll('button')) b.disabled = false;
    }
  };
  if (canDecide)
    buttons.append(
      h('button', { type: 'button', on: { click: () => decide('Approving and running', {}) } }, 'Approve and run'),
      h('button', { type: 'button', class: 'secondary', on: { click: () => decide('Granting', { run: false }) } }, 'Grant only'),
      h('button', { type: 'button', class: 'danger', on: { click: () => decide('Rejecting', { decision: 'reject' }) } }, 'Reject'),
    );
  const input = a.input === undefined ? null : JSON.stringify(a.input, null, 2);
  return h(
    'li',
    { class: 'card approval', 'data-approval': a.id },
    h('h2', {}, a.agent),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Mandate'),
      h('dd', {}, a.mandate),
      h('dt', {}, 'Worst case'),
      h('dd', { class: 'worst-case' }, money(a.worst_case, a.currency)),
      h('dt', {}, 'Caller’s cap (max_cost)'),
      h('dd', {}, a.max_cost === null ? 'none' : money(a.max_cost, a.currency)),
      h('dt', {}, 'Why it waits'),
      h(
        'dd',
        {},
        a.reasons?.length
          ? h(
              'ul',
              { class: 'reasons' },
              a.reasons.map((r) => h('li', {}, r)),
            )
          : '—',
      ),
      h('dt', {}, 'Asked'),
      h('dd', {}, when(a.created_at)),
      h('dt', {}, 'Expires'),
      h('dd', {}, when(a.expires_at)),
    ),
    h('h3', {}, 'The input it would receive'),
    input === null ? h('p', { class: 'empty' }, 'Not shown.') : foldedText(input, { summary: 'Show the whole input' }),
    buttons,
    outcome,
  );
}

/**
 * @param {Decision} body
 * @param {import('../api.js').Answer<Decided>} answer
 */
function describeOutcome(body, answer) {
  const b = answer.body;
  if (body.decision === 'reject') return notice('ok', h('span', {}, 'Rejected. ', status('rejected'), ' The input was deleted; nothing was charged.'));
  // Granting only answers the approval; running answers the call, with its receipt once it ran.
  if (body.run === false)
    return notice(
      'ok',
      h('span', {}, 'Granted. ', status('granted'), ` The agent may now re-submit the same input with approval ${/** @type {Approval} */ (b).id}.`),
    );
  const r = /** @type {{ receipt?: Receipt }} */ (b).receipt;
  if (!r) return notice('ok', 'Approved; the call is on its way.');
  return notice(
    r.status === 'succeeded' ? 'ok' : 'error',
    h(
      'span',
      {},
      'Approved and run: ',
      status(r.status),
      ` — ${cost(r)}. `,
      r.error ? `Error: ${r.error}. ` : '',
      h('a', { href: receiptHash(r.id) }, 'Open the receipt'),
    ),
  );
}
