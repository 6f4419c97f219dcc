// @ts-check
// The mandates the Try pages call under, as the options of a select.

import { get } from '../../api.js';
import { money } from '../../money.js';

/** @typedef {{ value: string, label: string }} MandateOption */

/**
 * The mandates the console may call under: [{value, label}], the sandbox first.
 * @returns {Promise<MandateOption[]>}
 */
export async function loadMandates() {
  /** @type {import('../../api-types.js').Mandates | null} */
  const body = await get('/v0/mandates');
  const list = (body?.mandates ?? []).map((m) => {
    const b = m.budget;
    const left = b?.remaining !== undefined ? ` (${money(b.remaining, b.currency)} of ${money(b.total, b.currency)} left)` : '';
    return { value: m.mandate.id, label: `${m.mandate.id}${left}` };
  });
  list.sort((a, b) => Number(b.value.endsWith('/sandbox')) - Number(a.value.endsWith('/sandbox')));
  return list;
}
