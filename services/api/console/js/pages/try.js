// @ts-check
// Try an agent (#/try, #/try/<ns>/<name>): find an agent in the catalogue (try/search.js), read what it offers and
// what Holon measured of it, and call it under one of your mandates (try/agent.js). The output is shown as text,
// with the call's receipt.

import { ApiError } from '../api.js';
import { agentPage } from './try/agent.js';
import { loadMandates } from './try/mandates.js';
import { searchPage } from './try/search.js';

/** @param {import('../app.js').PageContext} p */
export async function render(p) {
  const [ns, name] = p.params;
  /** @type {import('./try/mandates.js').MandateOption[]} */
  let mandates = [];
  /** @type {string | null} */
  let mandateProblem = null;
  try {
    mandates = await loadMandates();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    mandateProblem = e.message;
  }
  if (ns && name) return agentPage(p, `${ns}/${name}`, mandates, mandateProblem);
  return searchPage(p, mandates, mandateProblem);
}
