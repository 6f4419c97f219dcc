// @ts-check
// Publish, (c) my agents: payouts (docs/payments.md) — where they go, a withdrawal in the gateway's payment currency,
// and every payout with its state and transaction (PUT /v0/me/payout-address, POST and GET /v0/me/payouts).

import { ApiError, get, post, request } from '../../api.js';
import { field, fill, h, notice, setFieldError } from '../../dom.js';
import { table, when } from '../../format.js';
import { sentence } from '../../agent-view.js';

/**
 * @typedef {import('../../api-types.js').Payouts} Payouts
 * @typedef {import('../../api-types.js').PayoutView} PayoutView
 * @typedef {import('../../api-types.js').HumanMe} HumanMe
 */

const STATE_WORDS = /** @type {Record<string, string>} */ ({ pending: 'starting', sent: 'on its way', paid: 'paid', reversed: 'failed, money back' });

/** @param {PayoutView[]} payouts */
const history = (payouts) =>
  table(
    'Your payouts',
    [
      { label: 'When', cell: (/** @type {PayoutView} */ p) => when(p.created_at) },
      { label: 'Amount', numeric: true, cell: (/** @type {PayoutView} */ p) => `${p.amount} ${p.currency}` },
      { label: 'To', cell: (/** @type {PayoutView} */ p) => p.address },
      { label: 'State', cell: (/** @type {PayoutView} */ p) => STATE_WORDS[p.state] ?? p.state },
      { label: 'Transaction', cell: (/** @type {PayoutView} */ p) => (p.transaction ? h('code', {}, `${p.transaction.slice(0, 10)}…`) : '—') },
    ],
    payouts,
    { empty: 'No payouts yet.' },
  );

/**
 * The payouts card: the address, the withdraw form, the history. Reads its own data and redraws itself after each action.
 * @returns {HTMLElement}
 */
export function payoutsCard() {
  const card = h('div', { class: 'card', id: 'payouts' }, h('h3', {}, 'Payouts'), h('p', { class: 'loading', role: 'status' }, 'Loading your payouts…'));
  void draw(card);
  return card;
}

/** @param {HTMLElement} card */
async function draw(card) {
  /** @type {Payouts} */
  let list;
  /** @type {HumanMe} */
  let me;
  try {
    [list, me] = /** @type {[Payouts, HumanMe]} */ (await Promise.all([get('/v0/me/payouts'), get('/v0/me')]));
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(card, h('h3', {}, 'Payouts'), notice('error', 'Your payouts could not be read: ', sentence(e.message)));
    return;
  }
  const status = h('div', { 'aria-live': 'polite' });
  const address = field({ label: 'Payout address', name: 'payout-address', hint: 'An address of yours on the gateway’s chain (0x and 40 hex digits).' });
  const amount = field({
    label: 'Amount to withdraw',
    name: 'payout-amount',
    hint: 'Such as 5.00. Only money paid in from outside can be withdrawn, never demo credit.',
  });
  const saveAddress = async (/** @type {SubmitEvent} */ ev) => {
    ev.preventDefault();
    setFieldError(address, null);
    try {
      await request('PUT', '/v0/me/payout-address', { address: /** @type {HTMLInputElement} */ (address.input).value.trim() });
      await draw(card);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setFieldError(address, sentence(e.message));
    }
  };
  const withdraw = async (/** @type {SubmitEvent} */ ev) => {
    ev.preventDefault();
    setFieldError(amount, null);
    try {
      /** @type {PayoutView} */
      const p = await post('/v0/me/payouts', { amount: /** @type {HTMLInputElement} */ (amount.input).value.trim() });
      await draw(card);
      const done = card.querySelector('[aria-live]');
      if (done)
        fill(
          /** @type {HTMLElement} */ (done),
          notice(p.state === 'reversed' ? 'error' : 'ok', `Payout of ${p.amount} ${p.currency}: ${STATE_WORDS[p.state] ?? p.state}.`),
        );
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setFieldError(amount, sentence(e.message));
    }
  };
  const current = me.account.payout_address;
  fill(
    card,
    h('h3', {}, 'Payouts'),
    h('p', {}, current ? ['Payouts go to ', h('code', {}, current), '.'] : 'Set an address to withdraw your earnings.'),
    h('form', { on: { submit: saveAddress } }, address.row, h('button', { type: 'submit' }, current ? 'Change the address' : 'Set the address')),
    list.currency === null
      ? h('p', { class: 'hint' }, 'This gateway takes no payments from outside, so nothing can be withdrawn from it.')
      : current
        ? h('form', { on: { submit: withdraw } }, amount.row, h('button', { type: 'submit' }, `Withdraw ${list.currency}`))
        : null,
    status,
    history(list.payouts),
  );
}
