// @ts-check
// Small shared pieces of the pages: dates, statuses, a receipt's cost, tables, empty states.

import { h } from './dom.js';
import { money, toMicros } from './money.js';

/** @typedef {import('./dom.js').Child} Child */

/** @param {string | null | undefined} iso */
export const when = (iso) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—');
/** @param {number | null | undefined} ms */
export const duration = (ms) => (ms === null || ms === undefined ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** @type {Readonly<Record<string, string>>} */
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

/**
 * A status as a word with a shape and colour (never colour alone).
 * @param {string} s
 */
export const status = (s) => h('span', { class: `status s-${s}` }, STATUS_WORDS[s] ?? s);

/**
 * What a call cost: its total (a failed orchestrator still carries the sub-calls it paid), or that nothing was billed.
 * @param {Pick<import('./api-types.js').Receipt, 'billed' | 'cost' | 'currency'>} receipt
 */
export const cost = (receipt) =>
  receipt.billed || toMicros(receipt.cost.total) > 0n ? money(receipt.cost.total, receipt.currency) : `0 ${receipt.currency ?? ''} (not billed)`.trim();

/**
 * A column of a table: its heading, its cell for a row, and whether it holds numbers (right-aligned).
 * @template R
 * @typedef {{ label: string, cell: (row: R) => Child, numeric?: boolean }} Column
 */

/**
 * A table with a caption: columns [{label, cell: (row) => node|string, numeric?}].
 * @template R
 * @param {string} caption
 * @param {Column<NoInfer<R>>[]} columns
 * @param {R[]} rows
 * @param {{ empty?: string, wide?: boolean }} [options] `wide`: many columns, so the numeric columns' headings may wrap
 */
export function table(caption, columns, rows, { empty = 'Nothing yet.', wide = false } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: wide ? 'table-wrap wide' : 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
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

/**
 * A page: its heading, an optional lead sentence, and its sections.
 * @param {string} title
 * @param {string | null | undefined} lead
 * @param {...Child} children
 */
export const page = (title, lead, ...children) => h('div', { class: 'page' }, h('h1', {}, title), lead ? h('p', { class: 'lead' }, lead) : null, ...children);

/**
 * @param {string} title
 * @param {...Child} children
 */
export const section = (title, ...children) => h('section', { 'aria-label': title }, h('h2', {}, title), ...children);
