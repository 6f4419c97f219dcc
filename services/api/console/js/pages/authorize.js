// @ts-check
// An MCP client asks to sign in (docs/mcp.md, "Signing in from an MCP client"): GET /oauth/authorize sent the
// browser here, #/authorize/<id>. The page says which client asks — its name (its own words), the host its metadata
// document is served from, where the answer goes (a warning when that is this computer) — and the person approves it
// under one of their root mandates, or denies it. The decision (POST /v0/oauth/requests/{id}, the human key) answers
// where to send the browser: back to the client, with a one-time code or the refusal.

import { ApiError, get, post } from '../api.js';
import { field, fill, h, notice } from '../dom.js';
import { page, section } from '../format.js';
import { takeReturn } from '../session.js';

/**
 * @typedef {import('../api-types.js').Answer<'readSignInRequest'>} SignInRequest
 * @typedef {import('../api-types.js').Answer<'decideSignInRequest'>} Decided
 * @typedef {import('../api-types.js').MandateView} MandateView
 */

/** @param {import('../app.js').PageContext} page */
export async function render({ params }) {
  // Signed in: this is where the sign-in was to come back to.
  takeReturn();
  const id = params[0] ?? '';
  /** @type {SignInRequest} */
  let request;
  try {
    request = await get(`/v0/oauth/requests/${encodeURIComponent(id)}`);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    return page(
      'Connect an MCP client',
      null,
      h(
        'div',
        { id: 'gone' },
        notice('error', 'This sign-in request is unknown, has expired (after 10 minutes) or was answered already. Start again from your MCP client.'),
      ),
    );
  }
  /** @type {import('../api-types.js').Mandates} */
  const mandates = await get('/v0/mandates');
  const live = mandates.mandates.filter((m) => !m.mandate.revoked);
  return page(
    `${request.client.name} asks to connect`,
    'An MCP client asks to act for you on this gateway. If you approve, it gets an agent key under the mandate you choose: it may hire agents within that mandate’s rules and budget, and ask you to approve calls in the client. You can revoke the key at any time in Mandates and keys.',
    who(request),
    decide(id, request, live),
  );
}

/**
 * Which client asks, in its own words and by the hosts that say where it is.
 * @param {SignInRequest} request
 */
function who(request) {
  return section(
    'Who asks',
    h(
      'dl',
      { class: 'facts', id: 'client' },
      h('dt', {}, 'The client calls itself'),
      h('dd', { id: 'client-name' }, request.client.name),
      h('dt', {}, 'Its description is published by'),
      h('dd', { id: 'client-host' }, request.client.host),
      h('dt', {}, 'The answer goes to'),
      h('dd', { id: 'redirect-host' }, request.redirect_host),
      h('dt', {}, 'For'),
      h('dd', {}, request.resource),
    ),
    request.loopback
      ? notice(
          'info',
          h(
            'span',
            { id: 'loopback-warning' },
            `The answer goes to a program on this computer (${request.redirect_host}). Any program here could have asked: approve only if you just started connecting from an app on this computer, such as Claude Code.`,
          ),
        )
      : null,
    notice('info', 'The name is the client’s own words: anyone can call their client anything. Trust the hosts above.'),
  );
}

/**
 * The decision: a mandate and approve, or deny. Either sends the browser back to the client.
 * @param {string} id
 * @param {SignInRequest} request
 * @param {MandateView[]} mandates
 */
function decide(id, request, mandates) {
  const result = h('div', { 'aria-live': 'polite', id: 'decision' });
  const mandate = field({
    label: 'Mandate the client acts under',
    name: 'mandate',
    options: mandates.map((m) => ({ value: m.mandate.id, label: `${m.mandate.id} (${m.budget.remaining} ${m.budget.currency} left)` })),
  });
  /** @param {{ decision: 'approve' | 'deny', mandate?: string }} body */
  const send = async (body) => {
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    try {
      /** @type {Decided} */
      const decided = await post(`/v0/oauth/requests/${encodeURIComponent(id)}`, body);
      const words = body.decision === 'approve' ? 'Approved.' : 'Denied.';
      fill(result, notice('ok', `${words} Sending you back to ${request.redirect_host}…`));
      location.assign(decided.redirect_to);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(result, notice('error', e.message));
      for (const b of form.querySelectorAll('button')) b.disabled = false;
    }
  };
  const form = h(
    'form',
    {
      class: 'card',
      id: 'consent',
      on: {
        submit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          return send({ decision: 'approve', mandate: mandate.input.value });
        },
      },
    },
    h('h2', {}, 'Your decision'),
    mandates.length ? mandate.row : h('p', { class: 'empty' }, 'You have no live mandate: create one in Mandates and keys, or deny.'),
    h(
      'p',
      { class: 'actions' },
      mandates.length ? h('button', { type: 'submit', id: 'approve' }, `Approve ${request.client.name}`) : null,
      ' ',
      h('button', { type: 'button', class: 'secondary', id: 'deny', on: { click: () => send({ decision: 'deny' }) } }, 'Deny'),
    ),
    result,
  );
  return form;
}
