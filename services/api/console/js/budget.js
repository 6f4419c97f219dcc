// @ts-check
// A mandate's budget as a bar: spent, reserved and remaining of its total, drawn to scale and said in words
// (the words carry the figures; the bar is a picture of them).

import { h } from './dom.js';
import { money, share, toMicros } from './money.js';

/** @param {import('./api-types.js').MandateView['budget']} budget */
export function budgetBar(budget) {
  const total = toMicros(budget.total);
  const spent = share(toMicros(budget.spent), total);
  const reserved = share(toMicros(budget.reserved), total);
  const words = `${money(budget.spent, budget.currency)} spent, ${money(budget.reserved)} reserved, ${money(budget.remaining)} remaining of ${money(budget.total, budget.currency)}`;
  const spentBar = h('span', { class: 'spent' });
  const reservedBar = h('span', { class: 'reserved' });
  // Widths are set through the CSSOM (the CSP forbids inline style attributes, not script-set styles).
  spentBar.style.width = `${(spent * 100).toFixed(2)}%`;
  reservedBar.style.width = `${(reserved * 100).toFixed(2)}%`;
  const bar = h('div', { class: 'bar', role: 'img', 'aria-label': words }, spentBar, reservedBar);
  return h('div', { class: 'budget' }, bar, h('p', { class: 'legend' }, words));
}
