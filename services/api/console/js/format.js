// Small shared pieces of the pages: dates, statuses, a receipt's cost, tables, empty states.

import { h } from './dom.js';
import { money, toMicros } from './money.js';

export const when = (iso) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—');
export const duration = (ms) => (ms === null || ms === undefined ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

const STATUS_WORDS = {
  succeeded: 'succeeded',
  failed: 'failed',
  denied: 'denied',
  rejected_input: 'rejected input',
  pending_approval: 'waiting for approval',
  pending: 'pending',
  granted: 'granted',
  approved: 'approved',
  rejected: 'rejected',
  expired: 'expired',
  used: 'used',
  active: 'active',
  revoked: 'revoked',
};

/** A status as a word with a shape and colour (never colour alone). */
export const status = (s) => h('span', { class: `status s-${s}` }, STATUS_WORDS[s] ?? s);

/** What a call cost: its total (a failed orchestrator still carries the sub-calls it paid), or that nothing was billed. */
export const cost = (receipt) =>
  receipt.billed || toMicros(receipt.cost.total) > 0n ? money(receipt.cost.total, receipt.currency) : `0 ${receipt.currency ?? ''} (not billed)`.trim();

/** A table with a caption: columns [{label, cell: (row) => node|string, numeric?}]. */
export function table(caption, columns, rows, { empty = 'Nothing yet.' } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : undefined }, c.label)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            columns.map((c) => h('td', { class: c.numeric ? 'num' : undefined }, c.cell(r))),
          ),
        ),
      ),
    ),
  );
}

/** A page: its heading, an optional lead sentence, and its sections. */
export const page = (title, lead, ...children) => h('div', { class: 'page' }, h('h1', {}, title), lead ? h('p', { class: 'lead' }, lead) : null, ...children);

export const section = (title, ...children) => h('section', { 'aria-label': title }, h('h2', {}, title), ...children);
