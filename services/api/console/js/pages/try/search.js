// @ts-check
// Try an agent, the catalogue (#/try): search it as one types; under a mandate, each agent's worst case in the
// mandate's currency and whether the mandate allows it.

import { get, qs } from '../../api.js';
import { field, fill, h, notice } from '../../dom.js';
import { page, section } from '../../format.js';
import { money } from '../../money.js';
import { priceText, recordLine, sentence } from '../../agent-view.js';
import { tryHash } from '../../paths.js';

/**
 * @typedef {import('../../app.js').PageContext} PageContext
 * @typedef {import('./mandates.js').MandateOption} MandateOption
 * @typedef {import('../../api-types.js').SearchResult} Found
 * @typedef {Found['agents'][number]} FoundAgent
 */

/** @type {Readonly<Record<string, string>>} */
const DECISION_WORDS = { allow: 'allowed', approve: 'allowed after a human approves it' };

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * The catalogue, searched as one types, with each agent's price, record and, under a mandate, its worst case.
 * @param {PageContext} p
 * @param {MandateOption[]} mandates
 * @param {string | null} mandateProblem
 */
export function searchPage(p, mandates, mandateProblem) {
  const initialMandate = p.query.get('mandate') ?? mandates[0]?.value ?? '';
  const q = field({
    label: 'Search agents',
    name: 'q',
    type: 'search',
    value: p.query.get('q') ?? '',
    hint: 'Words, such as “profile this CSV” or “upper case”: agents matching any of them, most relevant first. Leave it empty to see every agent.',
  });
  const mandate = mandates.length
    ? field({
        label: 'Show costs under',
        name: 'mandate',
        options: [...mandates, { value: '', label: 'No mandate: list prices only' }],
        value: initialMandate,
        hint: 'With a mandate, each agent shows its worst case in the mandate’s currency and whether the mandate allows it.',
      })
    : null;
  const statusLine = h('p', { role: 'status', class: 'loading' });
  const results = h('div', { id: 'try-results' });
  let sequence = 0;

  async function search() {
    const mine = ++sequence;
    const query = { q: q.input.value.trim(), mandate: mandate?.input.value || undefined };
    statusLine.className = 'loading';
    statusLine.textContent = 'Searching…';
    results.setAttribute('aria-busy', 'true');
    /** @type {Found} */
    let body;
    try {
      body = await get(`/v0/agents${qs(query)}`);
    } catch (e) {
      if (mine !== sequence) return;
      results.removeAttribute('aria-busy');
      statusLine.textContent = '';
      fill(results, notice('error', 'The catalogue could not be searched: ', sentence(messageOf(e)), ' Try again.'));
      return;
    }
    if (mine !== sequence) return;
    results.removeAttribute('aria-busy');
    const agents = body?.agents ?? [];
    statusLine.className = '';
    statusLine.textContent = agents.length ? `${agents.length} agent${agents.length === 1 ? '' : 's'} found${query.q ? ` for “${query.q}”` : ''}.` : '';
    fill(results, found(body, query));
  }

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  q.input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(search, 300);
  });
  mandate?.input.addEventListener('change', search);
  p.onLeave(() => {
    clearTimeout(timer);
    sequence++;
  });
  const form = h(
    'form',
    {
      role: 'search',
      class: 'filters',
      'aria-label': 'Search the catalogue',
      on: {
        submit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          clearTimeout(timer);
          search();
        },
      },
    },
    q.row,
    mandate?.row,
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Search')),
  );
  search();
  return page(
    'Try an agent',
    'Pick an agent from the catalogue, call it with an example input, and read the receipt: what it cost and who was paid.',
    p.who.kind === 'operator'
      ? notice(
          'info',
          'This is a dev gateway: you act as its local operator, with no key. The dev mandates (such as demo/sandbox) pay for your calls with demo credit, so trying costs nothing real.',
        )
      : null,
    mandateProblem ? notice('error', 'Your mandates could not be read: ', sentence(mandateProblem), ' You can still browse the catalogue.') : null,
    form,
    section('Agents', statusLine, results),
  );
}

/**
 * What a search found: the agents, or why none; under a mandate, those it does not allow.
 * @param {Found} body
 * @param {{ q: string, mandate: string | undefined }} query
 */
function found(body, query) {
  const agents = body?.agents ?? [];
  const denied = (body && 'denied' in body ? body.denied : undefined) ?? [];
  const currency = body && 'currency' in body ? body.currency : undefined;
  const back = qs({ q: query.q || undefined, mandate: query.mandate });
  return [
    agents.length
      ? h(
          'div',
          { class: 'grid' },
          agents.map((a) => resultCard(a, back, currency)),
        )
      : h(
          'p',
          { class: 'empty' },
          query.q
            ? `No agent matches “${query.q}”${denied.length ? ' that this mandate allows' : ''}. Try a shorter word, or clear the box to see every agent.`
            : 'No agent is listed on this gateway yet.',
        ),
    denied.length
      ? h(
          'details',
          {},
          h('summary', {}, `${denied.length} more agent${denied.length === 1 ? '' : 's'} that ${query.mandate} does not allow`),
          h(
            'ul',
            {},
            denied.map((d) =>
              h('li', {}, h('a', { href: tryHash(d.id, back) }, `${d.id}@${d.version}`), ': ', (d.reasons ?? []).map((r) => sentence(r)).join(' ')),
            ),
          ),
        )
      : null,
  ];
}

/**
 * One agent found: its price, under a mandate its worst case and the mandate's decision, its record.
 * @param {FoundAgent} a
 * @param {string} back the search to come back to ("?q=…&mandate=…")
 * @param {string | undefined} currency the mandate's currency
 */
function resultCard(a, back, currency) {
  const record = a.record;
  return h(
    'article',
    { class: 'card', 'aria-label': a.id },
    h('h3', {}, h('a', { href: tryHash(a.id, back) }, a.id), ' ', h('span', { class: 'hint' }, a.version)),
    h('p', {}, a.summary),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Price'),
      h('dd', {}, priceText(a.pricing)),
      'worst_case' in a && a.worst_case !== undefined
        ? [h('dt', {}, 'Worst case'), h('dd', {}, a.worst_case === null ? 'Cannot be converted to the mandate’s currency' : money(a.worst_case, currency))]
        : null,
      'decision' in a && a.decision ? [h('dt', {}, 'Mandate'), h('dd', {}, DECISION_WORDS[a.decision] ?? a.decision)] : null,
      h('dt', {}, 'Measured'),
      h('dd', {}, recordLine(record)),
      a.capabilities?.length ? [h('dt', {}, 'Capabilities'), h('dd', {}, a.capabilities.join(', '))] : null,
      a.license === 'proprietary' ? [h('dt', {}, 'License'), h('dd', {}, 'Proprietary: its code is not public')] : null,
    ),
    h('p', {}, h('a', { class: 'button', href: tryHash(a.id, back) }, 'Try it', h('span', { class: 'visually-hidden' }, ` ${a.id}`))),
  );
}
