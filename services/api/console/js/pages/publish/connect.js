// @ts-check
// Publish, (a) connect a webhook: describe it (name, endpoint, an example input, a price), draft a listing from one
// real call (draft.js), review the YAML and publish it (listing.js).

import { actionButton, field, fill, h, setFieldError, uid } from '../../dom.js';
import { section } from '../../format.js';
import { draft } from './draft.js';
import { publish } from './listing.js';

/**
 * @typedef {import('../../dom.js').Field} Field
 * @typedef {ReturnType<typeof webhookFields>} WebhookFields
 */

/**
 * The form and its places, as the draft and the publishing use them.
 * @typedef {object} ConnectForm
 * @property {string} handle
 * @property {import('../../api-types.js').HumanMe} me
 * @property {WebhookFields} fields
 * @property {Field} manifest
 * @property {HTMLElement} draftProblems
 * @property {HTMLElement} draftStatus
 * @property {HTMLElement} publishProblems
 * @property {HTMLElement} publishStatus
 * @property {() => void} clear every problem and status said, cleared
 * @property {() => Promise<void>} published the list of your agents, read again
 */

/**
 * The webhook's description, in the order of the form.
 * @param {string} handle
 */
function webhookFields(handle) {
  const fields = {
    name: field({
      label: 'Agent name',
      name: 'name',
      hint: `2 to 39 characters of a–z, 0–9 and “-”. It is listed as ${handle}/<name>.`,
      required: true,
      spellcheck: false,
    }),
    endpoint: field({
      label: 'Endpoint',
      name: 'endpoint',
      type: 'url',
      placeholder: 'https://hooks.example.com/webhook/…',
      hint: 'The https address Holon POSTs each input to, as JSON; it answers with the output as JSON (an n8n Webhook node, a Make scenario, a small API). It is called once now, with the example input. If it needs a token, set it under “Endpoint credential” below first.',
      required: true,
    }),
    input: field({
      label: 'Example input (JSON)',
      name: 'input',
      type: 'textarea',
      rows: 5,
      placeholder: '{ "text": "Total: 12.50" }',
      hint: 'A real input your endpoint accepts. The draft describes its shape, and the answer’s, from this one call.',
      required: true,
    }),
    price: field({
      label: 'Price (EUR per run)',
      name: 'price',
      placeholder: '0.05',
      hint: 'What one successful run costs the caller, in euros, up to 6 decimals. Leave it empty for a free agent. Holon keeps a 10 % fee.',
    }),
    summary: field({
      label: 'Summary',
      name: 'summary',
      hint: 'One line, at most 140 characters, shown in the catalogue. Optional: it can be edited in the draft.',
    }),
  };
  fields.price.input.setAttribute('inputmode', 'decimal');
  return fields;
}

/**
 * @param {string} handle
 * @param {import('../../api-types.js').HumanMe} me
 * @param {() => Promise<void>} published
 * @returns {ConnectForm}
 */
function connectForm(handle, me, published) {
  const fields = webhookFields(handle);
  const manifest = field({
    label: 'Manifest (YAML)',
    name: 'manifest',
    type: 'textarea',
    rows: 8,
    hint: 'This is exactly what will be listed: review it, and edit anything (the version, the summary, the capabilities, the price, the schemas). Nothing is stored until you publish. You can also paste a holon.yaml you wrote.',
  });
  const c = {
    handle,
    me,
    fields,
    manifest,
    draftProblems: h('ul', { hidden: true, 'aria-label': 'Problems of the draft' }),
    draftStatus: h('div', { 'aria-live': 'polite' }),
    publishProblems: h('ul', { hidden: true, id: uid('publish-problems'), 'aria-label': 'Why the listing was refused' }),
    publishStatus: h('div', { 'aria-live': 'polite' }),
    clear: () => {
      for (const f of [...Object.values(fields), manifest]) setFieldError(f, '');
      c.draftProblems.hidden = true;
      c.publishProblems.hidden = true;
      fill(c.draftStatus);
      fill(c.publishStatus);
    },
    published,
  };
  return c;
}

/**
 * The section: (1) describe your webhook and draft, (2) review and publish.
 * @param {string} handle
 * @param {import('../../api-types.js').HumanMe} me
 * @param {() => Promise<void>} published
 */
export function connectSection(handle, me, published) {
  const c = connectForm(handle, me, published);
  const draftForm = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'draft-heading',
      novalidate: true,
      on: {
        // The button is the form's submit button: Enter in a field clicks it, and its click runs the draft.
        submit: (/** @type {SubmitEvent} */ event) => event.preventDefault(),
      },
    },
    h('h3', { id: 'draft-heading' }, '1. Describe your webhook'),
    Object.values(c.fields).map((f) => f.row),
  );
  const draftButton = actionButton('Call it and draft the listing', () => draft(c), { id: 'draft', type: 'submit' });
  draftForm.append(h('p', {}, draftButton), c.draftProblems, c.draftStatus);

  const publishButton = actionButton('Publish', () => publish(c), { id: 'publish' });
  const editor = h(
    'div',
    { class: 'card', role: 'group', 'aria-labelledby': 'review-heading' },
    h('h3', { id: 'review-heading' }, '2. Review and publish'),
    c.manifest.row,
    c.publishProblems,
    h('p', {}, publishButton, h('span', { class: 'hint' }, ' Listed at once when every condition holds; otherwise every problem is listed.')),
    c.publishStatus,
  );
  return section(
    'Connect a webhook',
    h('p', {}, 'Holon calls your endpoint once with an example input and drafts the listing from its answer. You review it, then publish.'),
    draftForm,
    editor,
  );
}
