// @ts-check
// Home: the balance, each mandate's budget as a bar, pending approvals (newest first) and the last calls.

import { get } from '../api.js';
import { budgetBar } from '../budget.js';
import { h } from '../dom.js';
import { cost, duration, page, section, status, table, when } from '../format.js';
import { money } from '../money.js';
import { balancesOf } from '../accounts.js';
import { receiptHash } from '../paths.js';

/**
 * @typedef {import('../api-types.js').Mandates} Mandates
 * @typedef {import('../api-types.js').Answer<'listApprovals'>} Approvals
 * @typedef {import('../api-types.js').ReceiptPage} ReceiptPage
 */

/** @param {import('../app.js').PageContext} page */
export async function render({ who }) {
  const [mandates, approvals, receipts, balances] = await Promise.all([
    /** @type {Promise<Mandates>} */ (get('/v0/mandates')),
    /** @type {Promise<Approvals>} */ (get('/v0/approvals')),
    /** @type {Promise<ReceiptPage>} */ (get('/v0/receipts?limit=8')),
    balancesOf(who),
  ]);
  const pending = [...approvals.approvals].sort((a, b) => b.created_at.localeCompare(a.created_at));
  return page(
    'Home',
    who.kind === 'operator' ? 'A dev gateway: you act as the local operator over the dev mandates. Nothing here is real money.' : null,
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'balance-h' },
        h('h2', { id: 'balance-h' }, 'Balance'),
        balances.length
          ? h(
              'dl',
              { class: 'facts', id: 'balances' },
              balances.map((b) => [
                h('dt', {}, who.kind === 'operator' ? b.account : 'Your balance'),
                h('dd', {}, money(b.balance, b.currency), b.held !== '0.00' ? ` (${money(String(b.held))} held for calls running now)` : ''),
              ]),
            )
          : h('p', { class: 'empty' }, 'No money yet.'),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'approvals-h' },
        h('h2', { id: 'approvals-h' }, 'Waiting for you'),
        pending.length
          ? [
              h('p', {}, h('a', { href: '#/approvals', id: 'pending-count' }, `${pending.length} approval${pending.length === 1 ? '' : 's'} pending`)),
              h(
                'ul',
                {},
                pending.slice(0, 5).map((a) => h('li', {}, `${a.agent} under ${a.mandate}: up to ${money(a.worst_case, a.currency)}, ${when(a.created_at)}`)),
              ),
            ]
          : h('p', { class: 'empty' }, 'No approval is waiting.'),
      ),
    ),
    section(
      'Budgets',
      mandates.mandates.length
        ? h(
            'ul',
            { class: 'plain', id: 'budgets' },
            mandates.mandates.map((m) => h('li', { class: 'card' }, h('h3', {}, m.mandate.id), budgetBar(m.budget))),
          )
        : h('p', { class: 'empty' }, 'No mandate yet. ', h('a', { href: '#/mandates' }, 'Create one'), ' to give an agent a budget.'),
    ),
    section(
      'Last calls',
      table(
        'The most recent calls',
        [
          { label: 'When', cell: (r) => h('a', { href: receiptHash(r.id) }, when(r.created_at)) },
          { label: 'Agent', cell: (r) => r.agent ?? '—' },
          { label: 'Status', cell: (r) => status(r.status) },
          { label: 'Cost', cell: cost, numeric: true },
          { label: 'Took', cell: (r) => duration(r.duration_ms), numeric: true },
        ],
        receipts.receipts,
        { empty: 'No call yet. Try an agent to make the first one.' },
      ),
      receipts.receipts.length ? h('p', {}, h('a', { href: '#/calls' }, 'All calls')) : null,
    ),
  );
}
