// @ts-check
// One agent's Try page (#/try/<ns>/<name>): what it offers (price, capabilities, its own errors, its data policy),
// the form that calls it, what Holon measured of it, and its evaluation.

import { ApiError, get, qs } from '../../api.js';
import { h, notice } from '../../dom.js';
import { page, section } from '../../format.js';
import { agentRecord, evaluationView, plainParagraphs, priceText, sentence } from '../../agent-view.js';
import { agentUrl } from '../../paths.js';
import { runForm } from './run.js';

/**
 * @typedef {import('../../api-types.js').AgentView} AgentView
 * @typedef {import('../../app.js').PageContext} PageContext
 * @typedef {import('./mandates.js').MandateOption} MandateOption
 */

/** @param {AgentView['interface']['errors'] | undefined} errors */
function declaredErrors(errors) {
  const entries = Object.entries(errors ?? {});
  if (!entries.length) return h('p', {}, 'It declares no error of its own: any failure is never billed.');
  return h(
    'ul',
    {},
    entries.map(([code, e]) => h('li', {}, h('code', {}, code), `: ${sentence(e.description)} `, e.billed ? h('strong', {}, 'Billed.') : 'Not billed.')),
  );
}

/**
 * @param {AgentView['data'] | undefined} data
 * @param {AgentView['runtime'] | undefined} runtime
 */
function dataPolicy(data, runtime) {
  if (!data) return null;
  /** @type {Array<[string, string]>} */
  const rows = [
    ['Keeps inputs', data.retention === null ? 'Not declared' : data.retention === 'none' ? 'No' : `For ${data.retention}`],
    ['Trains on inputs', data.training === null ? 'Not declared' : data.training ? 'Yes' : 'No'],
    ['Regions', data.region?.length ? data.region.join(', ') : 'Not declared'],
    ['Subprocessors', data.subprocessors?.length ? data.subprocessors.join(', ') : 'Not declared'],
  ];
  return [
    h(
      'dl',
      { class: 'facts' },
      rows.map(([t, d]) => [h('dt', {}, t), h('dd', {}, d)]),
    ),
    h(
      'p',
      { class: 'hint' },
      sentence(data.note),
      runtime?.attested ? ` It ${runtime.note ?? 'runs on its author’s server'}.` : ' It runs inside the gateway’s own runtime.',
    ),
  ];
}

/**
 * An A2A agent's own card, as kept when it was published: its name, words and the skill this version offers (text only).
 * @param {AgentView['runtime'] | undefined} runtime
 */
function a2aFacts(runtime) {
  const a2a = runtime?.a2a;
  if (!a2a) return [];
  const card = a2a.card;
  return [
    h('dt', {}, 'Its A2A card'),
    h(
      'dd',
      {},
      card
        ? `${card.name}: ${card.description} — skill ${a2a.skill}${card.skill_name ? ` (${card.skill_name}${card.skill_description ? `: ${card.skill_description}` : ''})` : ''}. Kept as it was when this version was published.`
        : `skill ${a2a.skill}; its card is read when it is called (not published here).`,
    ),
  ];
}

/**
 * What it offers: its description and facts, the errors it declares, its data policy.
 * @param {AgentView} agent
 */
function offers(agent) {
  return section(
    'What it offers',
    agent.description ? plainParagraphs(agent.description) : null,
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Version'),
      h('dd', {}, agent.version, (agent.versions?.length ?? 0) > 1 ? ` (the highest of ${agent.versions.length} listed)` : ''),
      h('dt', {}, 'Price'),
      h('dd', {}, priceText(agent.pricing)),
      h('dt', {}, 'Capabilities'),
      h('dd', {}, (agent.capabilities ?? []).join(', ') || '—'),
      h('dt', {}, 'License'),
      h('dd', {}, agent.license === 'proprietary' ? 'Proprietary: its code is not public' : agent.license),
      h('dt', {}, 'Runs'),
      h('dd', {}, agent.runtime?.kind === 'node' ? 'Inside the gateway' : `On its author’s server (${agent.runtime?.kind})`),
      ...a2aFacts(agent.runtime),
      h('dt', {}, 'A2A'),
      h(
        'dd',
        {},
        'Other agents can hire it over A2A: ',
        h('a', { href: `/a2a/${agent.id}/.well-known/agent-card.json` }, 'its signed agent card'),
        ' (price and record included).',
      ),
    ),
    h('h3', {}, 'Errors it declares'),
    declaredErrors(agent.interface?.errors),
    h('h3', {}, 'Data policy, as declared'),
    dataPolicy(agent.data, agent.runtime),
  );
}

/** @param {string} id */
const notListed = (id) =>
  page(
    'Try an agent',
    null,
    notice(
      'error',
      `No agent ${id} is listed here. `,
      'It may have been withdrawn, or the address has a typo. ',
      h('a', { href: '#/try' }, 'Search the catalogue'),
      '.',
    ),
  );

/**
 * The agent's page, or that it is not listed.
 * @param {PageContext} p
 * @param {string} id
 * @param {MandateOption[]} mandates
 * @param {string | null} mandateProblem
 */
export async function agentPage(p, id, mandates, mandateProblem) {
  /** @type {AgentView} */
  let agent;
  try {
    agent = await get(agentUrl(id));
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return notListed(id);
    throw e;
  }
  const backQuery = { q: p.query.get('q') || undefined, mandate: p.query.get('mandate') || undefined };
  const recordBox = h('div', {}, agentRecord(agent));
  let left = false;
  p.onLeave(() => {
    left = true;
  });
  const form = runForm({ id, agent, mandates, mandateProblem, query: p.query, recordBox, left: () => left });
  return page(
    agent.id,
    agent.summary,
    h('p', {}, h('a', { href: `#/try${qs(backQuery)}` }, '← Back to the catalogue')),
    h('div', { class: 'grid' }, h('div', {}, offers(agent)), form),
    section('Agent Record', recordBox),
    section('Evaluation', evaluationView(agent.evaluation)),
  );
}
