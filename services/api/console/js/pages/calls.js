// @ts-check
// Calls: recent calls (top-level receipts) with status, cost and duration, filtered by mandate, agent or status,
// newest first, a page at a time.

import { get, qs } from '../api.js';
import { field, h } from '../dom.js';
import { cost, duration, page, status, table, when } from '../format.js';
import { receiptHash } from '../paths.js';

/**
 * @typedef {import('../api-types.js').Mandates} Mandates
 * @typedef {import('../api-types.js').ReceiptPage} ReceiptPage
 */

const STATUSES = ['succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval'];

/** @param {import('../app.js').PageContext} page */
export async function render({ query, navigate }) {
  const filters = { mandate: query.get('mandate') ?? '', agent: query.get('agent') ?? '', status: query.get('status') ?? '' };
  const before = query.get('before') ?? undefined;
  const [mandates, pageOf] = await Promise.all([
    /** @type {Promise<Mandates>} */ (get('/v0/mandates')),
    /** @type {Promise<ReceiptPage>} */ (get(`/v0/receipts${qs({ ...filters, limit: 25, before })}`)),
  ]);
  const mandate = field({
    label: 'Mandate',
    name: 'mandate',
    value: filters.mandate,
    options: [{ value: '', label: 'All mandates' }, ...mandates.mandates.map((m) => ({ value: m.mandate.id, label: m.mandate.id }))],
  });
  const agent = field({ label: 'Agent', name: 'agent', value: filters.agent, placeholder: 'ns/name or ns/name@1.0.0' });
  const state = field({
    label: 'Status',
    name: 'status',
    value: filters.status,
    options: [{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: s }))],
  });
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter the calls',
      on: {
        submit: (event) => {
          event.preventDefault();
          navigate(`#/calls${qs({ mandate: mandate.input.value, agent: agent.input.value.trim(), status: state.input.value })}`);
        },
      },
    },
    mandate.row,
    agent.row,
    state.row,
    h('button', { type: 'submit' }, 'Filter'),
  );
  const filtered = filters.mandate || filters.agent || filters.status;
  return page(
    'Calls',
    'Every request leaves a receipt, whether the call ran or not. Open one to see where its money went.',
    form,
    table(
      before ? 'Older calls' : 'Recent calls',
      [
        { label: 'When', cell: (r) => h('a', { href: receiptHash(r.id) }, when(r.created_at)) },
        { label: 'Agent', cell: (r) => r.agent ?? '—' },
        { label: 'Mandate', cell: (r) => r.mandate ?? '—' },
        { label: 'Status', cell: (r) => [status(r.status), r.error ? h('span', { class: 'hint' }, ` ${r.error}`) : null] },
        { label: 'Cost', cell: cost, numeric: true },
        { label: 'Took', cell: (r) => duration(r.duration_ms), numeric: true },
      ],
      pageOf.receipts,
      { empty: filtered ? 'No call matches these filters.' : 'No call yet.' },
    ),
    h(
      'p',
      { class: 'actions' },
      before ? h('a', { href: `#/calls${qs(filters)}` }, 'Newest calls') : null,
      pageOf.next ? h('a', { href: `#/calls${qs({ ...filters, before: pageOf.next })}`, id: 'older' }, 'Older calls') : null,
    ),
  );
}
