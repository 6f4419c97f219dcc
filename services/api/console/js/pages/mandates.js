// @ts-check
// Mandates and keys: the root mandates and their budgets; a form to create one that shows every problem the API
// reports at its own field; agent keys (hosted): mint one (shown once, with the `claude mcp add` line), revoke one,
// whether each is ask_in_client, and the MCP client a key was issued to by signing in from it.

import { ApiError, get, post, request } from '../api.js';
import { budgetBar } from '../budget.js';
import { actionButton, checked, copyButton, field, fill, h, notice, setFieldError } from '../dom.js';
import { page, section, status, table, when } from '../format.js';

/**
 * @typedef {import('../api-types.js').MandateView} MandateView
 * @typedef {import('../api-types.js').MandateDocument} MandateDocument
 * @typedef {import('../api-types.js').HumanMe} HumanMe
 */

/** @param {string} text */
const lines = (text) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** @param {import('../app.js').PageContext} page */
export async function render({ who, navigate }) {
  const [mandates, me] = await Promise.all([
    /** @type {Promise<import('../api-types.js').Mandates>} */ (get('/v0/mandates')),
    who.kind === 'human' ? /** @type {Promise<HumanMe>} */ (get('/v0/me')) : null,
  ]);
  const list = mandates.mandates;
  return page(
    'Mandates and keys',
    'A mandate is what an agent may do on your behalf: which agents, what budget, when you must approve. Mandates are never edited: a new budget is a new mandate.',
    section(
      'Your mandates',
      list.length
        ? h(
            'ul',
            { class: 'plain', id: 'mandate-list' },
            list.map((m) => h('li', { class: 'card' }, h('h3', {}, m.mandate.id), describe(m.mandate), budgetBar(m.budget))),
          )
        : h('p', { class: 'empty' }, 'No mandate yet: create the first one below.'),
    ),
    createForm(who, () => navigate('#/mandates')),
    who.kind === 'human' && me
      ? keysSection(me, list, () => navigate('#/mandates'))
      : section('Keys', h('p', {}, 'A dev gateway has no keys: every request acts as the local operator.')),
  );
}

/** @param {MandateDocument} m */
function describe(m) {
  const allowed = [...(m.allow?.agents ?? []), ...(m.allow?.capabilities ?? []).map((c) => `capability ${c}`)];
  return h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Grantee'),
    h('dd', {}, m.grantee),
    h('dt', {}, 'May call'),
    h('dd', {}, allowed.join(', ') || 'nothing'),
    m.budget?.per_call ? [h('dt', {}, 'Per call'), h('dd', {}, `${m.budget.per_call} ${m.budget.currency}`)] : null,
    m.approval ? [h('dt', {}, 'Approval'), h('dd', {}, approvalWords(m.approval))] : null,
    h('dt', {}, 'Delegation depth'),
    h('dd', {}, String(m.delegation?.max_depth ?? 0)),
  );
}

/** @param {NonNullable<MandateDocument['approval']>} a */
function approvalWords(a) {
  const parts = [];
  if (a.above !== undefined) parts.push(`above ${a.above}`);
  if (a.agents?.length) parts.push(`always for ${a.agents.join(', ')}`);
  if (a.first_use) parts.push('first use of each version');
  return parts.join('; ') || 'never';
}

/**
 * @typedef {import('../dom.js').Field} Field
 * @typedef {import('../session.js').Who} Who
 * @typedef {ReturnType<typeof mandateFields>} MandateFields
 */

/**
 * The form's fields.
 * @param {Who} who
 * @param {string} prefix the namespace new mandates go in (`alice/`), or none on a dev gateway
 */
function mandateFields(who, prefix) {
  return {
    id: field({
      label: 'Name',
      name: 'id',
      hint: who.kind === 'human' ? `Put in your namespace: ${prefix}<name>.` : 'The full id, e.g. demo/research.',
      required: true,
    }),
    grantee: field({ label: 'Grantee (the agent that acts under it)', name: 'grantee', value: prefix ? `${prefix}assistant` : '', required: true }),
    agents: field({
      label: 'Agents it may call',
      name: 'agents',
      type: 'textarea',
      rows: 2,
      hint: 'One pattern per line or comma-separated, e.g. holon-labs/*',
    }),
    capabilities: field({ label: 'Capabilities it may call', name: 'capabilities', type: 'textarea', rows: 2, hint: 'e.g. text.*; leave empty for none' }),
    published: field({ label: 'Capability calls may reach published agents', name: 'published', type: 'checkbox' }),
    total: field({ label: 'Total budget (EUR)', name: 'total', hint: 'A decimal amount, e.g. 2.00', required: true, autocomplete: 'off' }),
    per_call: field({ label: 'At most per call (EUR)', name: 'per_call', hint: 'Optional' }),
    above: field({ label: 'Ask me to approve calls whose worst case is above (EUR)', name: 'above', hint: 'Optional' }),
    first_use: field({ label: 'Ask me before the first call of each agent version', name: 'first_use', type: 'checkbox' }),
    depth: field({ label: 'How deep agents may hire agents', name: 'max_depth', type: 'number', value: '1', hint: '0 = no delegation' }),
  };
}

/**
 * The document path each field fills.
 * @param {MandateFields} f
 * @returns {Record<string, Field>}
 */
const fieldPaths = (f) => ({
  '$.id': f.id,
  '$.grantee': f.grantee,
  '$.allow.agents': f.agents,
  '$.allow.capabilities': f.capabilities,
  '$.allow.published': f.published,
  '$.allow': f.agents,
  '$.budget.total': f.total,
  '$.budget.per_call': f.per_call,
  '$.budget': f.total,
  '$.approval.above': f.above,
  '$.approval.first_use': f.first_use,
  '$.delegation.max_depth': f.depth,
  '$.delegation': f.depth,
});

/**
 * The mandate document the form says (POST /v0/mandates).
 * @param {MandateFields} f
 * @param {Who} who
 */
function mandateDocument(f, who) {
  const above = f.above.input.value.trim();
  const perCall = f.per_call.input.value.trim();
  /** @type {{ id: string, grantee: string, issuer?: string, allow: { agents: string[], capabilities?: string[], published?: true },
   *   budget: { total: string, per_call?: string, currency?: string }, approval?: { above?: string, first_use?: true },
   *   delegation: { max_depth: number } }} */
  const doc = {
    id: f.id.input.value.trim(),
    grantee: f.grantee.input.value.trim(),
    allow: {
      agents: lines(f.agents.input.value),
      capabilities: lines(f.capabilities.input.value),
      ...(checked(f.published) ? { published: true } : {}),
    },
    budget: { total: f.total.input.value.trim(), ...(perCall ? { per_call: perCall } : {}) },
    ...(above || checked(f.first_use)
      ? {
          approval: {
            ...(above ? { above } : {}),
            ...(checked(f.first_use) ? { first_use: true } : {}),
          },
        }
      : {}),
    delegation: { max_depth: f.depth.input.value.trim() === '' ? 0 : Number(f.depth.input.value) },
  };
  if (!doc.allow.capabilities?.length) delete doc.allow.capabilities;
  if (who.kind === 'operator') {
    // The local operator names the issuer; on a hosted gateway the issuer is always you.
    doc.issuer = doc.id.split('/')[0];
    doc.budget.currency = 'EUR';
  }
  return doc;
}

/**
 * A refused mandate: each problem at its field, the rest listed in the notice.
 * @param {ApiError} e
 * @param {Record<string, Field>} paths
 * @param {HTMLElement} result
 */
function showRefusal(e, paths, result) {
  /** @type {import('../api-types.js').Problem[]} */
  const elsewhere = [];
  for (const p of e.problems) {
    const at = paths[p.path] ?? paths[p.path.replace(/\[\d+\]$/, '')] ?? paths[p.path.split('.').slice(0, 3).join('.')];
    if (at) setFieldError(at, [at.error.hidden ? '' : at.error.textContent, p.message].filter(Boolean).join('; '));
    else elsewhere.push(p);
  }
  fill(
    result,
    notice(
      'error',
      e.problems.length ? `The mandate was not created: ${e.problems.length} problem${e.problems.length === 1 ? '' : 's'}, shown at each field.` : e.message,
      elsewhere.length
        ? h(
            'ul',
            {},
            elsewhere.map((p) => h('li', {}, `${p.path}: ${p.message}`)),
          )
        : null,
    ),
  );
}

/**
 * The form that creates a mandate; every problem the API reports is shown at its own field.
 * @param {Who} who
 * @param {() => void} done
 */
function createForm(who, done) {
  const prefix = who.kind === 'human' ? `${who.handle}/` : '';
  const f = mandateFields(who, prefix);
  const paths = fieldPaths(f);
  const result = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'card',
      id: 'create-mandate',
      novalidate: true,
      on: {
        submit: async (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          for (const x of Object.values(f)) setFieldError(x, '');
          fill(result);
          try {
            /** @type {MandateView} */
            const created = await post('/v0/mandates', mandateDocument(f, who));
            fill(result, notice('ok', `Created ${created.mandate.id} with ${created.budget.total} ${created.budget.currency}.`));
            setTimeout(done, 600);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            showRefusal(e, paths, result);
            /** @type {HTMLElement | null} */ (form.querySelector('[aria-invalid="true"]'))?.focus();
          }
        },
      },
    },
    h('h2', {}, 'Create a mandate'),
    Object.values(f).map((x) => x.row),
    h('button', { type: 'submit' }, 'Create the mandate'),
    result,
  );
  return form;
}

/**
 * A new agent key, shown once, with the line that connects Claude Code with it.
 * @param {HTMLElement} minted
 * @param {import('../api-types.js').Answer<'createKey', 201>} key
 * @param {() => void} done
 */
function showMinted(minted, key, done) {
  const line = `claude mcp add --transport http holon ${location.origin}/mcp --header "Authorization: Bearer ${key.key}"`;
  fill(
    minted,
    h(
      'div',
      { class: 'card shown-once' },
      h('h3', {}, 'Your new agent key — shown once'),
      h('p', {}, 'Keep it now: the gateway stores only its hash.'),
      h('p', {}, h('code', { id: 'new-key' }, key.key), ' ', copyButton(key.key, 'Copy the key')),
      h('p', {}, 'Connect Claude Code with it:'),
      h('p', {}, h('code', { id: 'mcp-line' }, line), ' ', copyButton(line, 'Copy the command')),
      h('button', { type: 'button', class: 'secondary', on: { click: done } }, 'Done: I kept it'),
    ),
  );
  minted.querySelector('h3')?.setAttribute('tabindex', '-1');
  minted.querySelector('h3')?.focus();
}

/**
 * Your agent keys: mint one (shown once), revoke one.
 * @param {HumanMe} me
 * @param {MandateView[]} mandates
 * @param {() => void} done
 */
function keysSection(me, mandates, done) {
  const minted = h('div', { 'aria-live': 'polite', id: 'minted' });
  const mandateField = field({ label: 'Mandate', name: 'mandate', options: mandates.map((m) => m.mandate.id) });
  const ask = field({
    label: 'Ask in the client (ask_in_client)',
    name: 'ask_in_client',
    type: 'checkbox',
    hint: 'Only for a key used in an attended client such as Claude Code: approval forms are then shown there. Otherwise held calls wait for you here.',
  });
  const keys = (me.keys ?? []).filter((k) => k.kind === 'agent');
  const mint = h(
    'form',
    {
      class: 'card',
      id: 'mint-key',
      on: {
        submit: async (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          try {
            showMinted(minted, await post('/v0/keys', { mandate: mandateField.input.value, ask_in_client: checked(ask) }), done);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            fill(minted, notice('error', e.message));
          }
        },
      },
    },
    h('h3', {}, 'Mint an agent key'),
    mandates.length ? [mandateField.row, ask.row, h('button', { type: 'submit' }, 'Mint the key')] : h('p', { class: 'empty' }, 'Create a mandate first.'),
  );
  return section(
    'Agent keys',
    table(
      'Your agent keys',
      [
        { label: 'Key', cell: (k) => h('code', {}, `${k.prefix}…`) },
        { label: 'Mandate', cell: (k) => k.mandate },
        { label: 'Ask in client', cell: (k) => (k.ask_in_client ? 'yes' : 'no') },
        { label: 'State', cell: (k) => status(k.state) },
        { label: 'Created', cell: (k) => when(k.created_at) },
        { label: 'Issued to', cell: (k) => (k.client ? `${k.client.name} (${new URL(k.client.id).host})` : 'minted here') },
        {
          label: 'Action',
          cell: (k) =>
            k.state === 'active'
              ? actionButton(
                  'Revoke',
                  async () => {
                    await request('DELETE', `/v0/keys/${encodeURIComponent(k.prefix)}`);
                    done();
                  },
                  { class: 'danger', 'aria-label': `Revoke the key ${k.prefix}` },
                )
              : '—',
        },
      ],
      keys,
      { empty: 'No agent key yet.' },
    ),
    mint,
    minted,
  );
}
