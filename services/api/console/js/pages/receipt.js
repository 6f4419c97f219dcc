// @ts-check
// One receipt tree: the top receipt's figures, and its children opened one by one (own, downstream and total
// cost, splits, reasons), so a delegated run shows where its total went, agent by agent.

import { get } from '../api.js';
import { h } from '../dom.js';
import { duration, page, status, when } from '../format.js';
import { money } from '../money.js';

/** @typedef {import('../api-types.js').Receipt} Receipt */

/** @param {import('../app.js').PageContext} page */
export async function render({ params }) {
  /** @type {Receipt} */
  const receipt = await get(`/v0/receipts/${encodeURIComponent(params[0] ?? '')}`);
  return page(
    `Receipt ${receipt.id}`,
    'What the gateway observed for this request: never its input or output.',
    facts(receipt),
    receipt.children.length ? h('section', { 'aria-label': 'Sub-calls' }, h('h2', {}, `Sub-calls (${receipt.children.length})`), children(receipt)) : null,
    h('p', {}, h('a', { href: '#/calls' }, 'Back to the calls')),
  );
}

/** @param {Receipt} r */
function facts(r) {
  const c = r.currency;
  return h(
    'dl',
    { class: 'facts receipt', 'data-receipt': r.id },
    h('dt', {}, 'Agent'),
    h('dd', {}, r.agent ?? '—'),
    h('dt', {}, 'Status'),
    h('dd', {}, status(r.status), r.error ? ` ${r.error}` : ''),
    r.reasons?.length
      ? [
          h('dt', {}, 'Reasons'),
          h(
            'dd',
            {},
            h(
              'ul',
              { class: 'reasons' },
              r.reasons.map((x) => h('li', {}, x)),
            ),
          ),
        ]
      : null,
    h('dt', {}, 'Mandate'),
    h('dd', {}, r.mandate ?? '—', r.sub_mandate ? ` (sub-mandate ${r.sub_mandate})` : ''),
    r.caller ? [h('dt', {}, 'Caller'), h('dd', {}, r.caller)] : null,
    h('dt', {}, 'Billed'),
    h('dd', {}, r.billed ? 'yes' : 'no'),
    h('dt', {}, 'Own'),
    h('dd', { class: 'cost-own' }, money(r.cost.own, c)),
    h('dt', {}, 'Downstream'),
    h('dd', { class: 'cost-downstream' }, money(r.cost.downstream, c)),
    h('dt', {}, 'Total'),
    h('dd', { class: 'cost-total' }, money(r.cost.total, c)),
    r.worst_case ? [h('dt', {}, 'Worst case reserved'), h('dd', {}, money(r.worst_case, c))] : null,
    r.splits.length
      ? [
          h('dt', {}, 'Paid to'),
          h(
            'dd',
            {},
            h(
              'ul',
              { class: 'splits' },
              r.splits.map((s) => h('li', {}, `${s.to}: ${money(s.amount, c)}`)),
            ),
          ),
        ]
      : null,
    r.approval ? [h('dt', {}, 'Approval'), h('dd', {}, r.approval)] : null,
    h('dt', {}, 'Took'),
    h('dd', {}, duration(r.duration_ms)),
    h('dt', {}, 'When'),
    h('dd', {}, when(r.created_at)),
  );
}

/**
 * Each child behind its own <details>, its children inside it: the tree opens one level at a time.
 * @param {Receipt} r
 * @returns {HTMLElement}
 */
function children(r) {
  return h(
    'ul',
    { class: 'tree' },
    r.children.map((child) =>
      h(
        'li',
        {},
        h(
          'details',
          { 'data-child': child.id },
          h('summary', {}, `${child.agent ?? '—'} · `, status(child.status), ` · ${money(child.cost.total, child.currency)}`),
          facts(child),
          child.children.length ? children(child) : null,
        ),
      ),
    ),
  );
}
