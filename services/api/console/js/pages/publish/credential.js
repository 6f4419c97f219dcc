// @ts-check
// Publish, (b) the endpoint credential of an agent: the token Holon sends to its endpoint, set or cleared here,
// write-only (GET says only whether one is set, and since when).

import { ApiError, get, request } from '../../api.js';
import { actionButton, field, fill, h, setFieldError, uid } from '../../dom.js';
import { section, when } from '../../format.js';
import { describeProblem, sentence } from '../../agent-view.js';
import { credentialUrl } from '../../paths.js';

/**
 * @typedef {import('../../dom.js').Field} Field
 * @typedef {import('../../api-types.js').Answer<'readCredential'>} Credential
 */

/**
 * What the credential form works with.
 * @typedef {{ handle: string, name: Field, token: Field, state: HTMLElement }} CredentialForm
 */

/**
 * The agent the form names, in the handle's namespace ("" when none is named).
 * @param {CredentialForm} c
 */
const agentId = ({ handle, name }) => {
  const v = name.input.value.trim().replace(new RegExp(`^${handle}/`), '');
  return v ? `${handle}/${v}` : '';
};

/**
 * @param {string} id
 * @param {{ set: boolean, set_at?: string }} c
 */
const describe = (id, c) =>
  c.set ? `${id}: a token is set${c.set_at ? ` (since ${when(c.set_at)})` : ''}.` : `${id}: no token is set; Holon calls its endpoint without one.`;

/** @param {ApiError} e */
const refusal = (e) =>
  e.status === 503
    ? `${sentence(e.message)} Ask the operator of this gateway: credentials cannot be stored without it.`
    : e.status === 404
      ? 'That agent is not in your namespace.'
      : sentence(e.message);

/**
 * Say whether the named agent has a token.
 * @param {CredentialForm} c
 */
async function readState(c) {
  setFieldError(c.name, '');
  const id = agentId(c);
  c.state.textContent = '';
  if (!id) return;
  try {
    /** @type {Credential} */
    const credential = await get(credentialUrl(id));
    c.state.textContent = describe(id, credential);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    setFieldError(c.name, refusal(e));
  }
}

/**
 * Before Set or Clear: the fields cleared of problems; false, and said, when no agent is named.
 * @param {CredentialForm} c
 */
function named(c) {
  setFieldError(c.name, '');
  setFieldError(c.token, '');
  if (agentId(c)) return true;
  setFieldError(c.name, 'Name the agent the token is for.');
  c.name.input.focus();
  return false;
}

/** @param {CredentialForm} c */
async function setToken(c) {
  if (!named(c)) return;
  const value = c.token.input.value;
  if (!value) {
    setFieldError(c.token, 'Type or paste the token your endpoint expects.');
    c.token.input.focus();
    return;
  }
  const id = agentId(c);
  try {
    /** @type {import('../../api.js').Answer<import('../../api-types.js').Answer<'setCredential'>>} */
    const { body } = await request('PUT', credentialUrl(id), { token: value });
    c.token.input.value = '';
    c.state.textContent = describe(id, body.credential);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    const atToken = (e.problems ?? []).filter((x) => String(x.path).startsWith('$.token'));
    if (atToken.length) setFieldError(c.token, atToken.map(describeProblem).join(' '));
    else if (e.status === 400) setFieldError(c.token, sentence(e.message));
    else setFieldError(c.name, refusal(e));
  }
}

/** @param {CredentialForm} c */
async function clearToken(c) {
  if (!named(c)) return;
  const id = agentId(c);
  try {
    /** @type {import('../../api.js').Answer<import('../../api-types.js').Answer<'deleteCredential'>>} */
    const { body } = await request('DELETE', credentialUrl(id));
    c.token.input.value = '';
    c.state.textContent = describe(id, body.credential);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    setFieldError(c.name, refusal(e));
  }
}

/**
 * The section; `choose(id)` puts an agent in it (from "My agents"), `knownAgents` lists yours for the name's choices.
 * @param {string} handle
 */
export function credentialSection(handle) {
  const listId = uid('agent-names');
  const datalist = h('datalist', { id: listId });
  const name = field({
    label: 'Agent name',
    name: 'credential-agent',
    hint: `One of your agents (${handle}/<name>), published or not yet.`,
    spellcheck: false,
  });
  name.input.setAttribute('list', listId);
  const token = field({
    label: 'Token',
    name: 'token',
    type: 'password',
    autocomplete: 'new-password',
    hint: 'Sent as “Authorization: Bearer <token>” on every request to this agent’s endpoint, for all its versions, evaluations included. Write-only: Holon never shows it again, not even to you.',
  });
  /** @type {CredentialForm} */
  const c = { handle, name, token, state: h('p', { role: 'status', id: 'credential-state' }) };
  const out = {
    /** @type {() => string[]} */
    knownAgents: () => [],
    /** @param {string} id */
    choose(id) {
      name.input.value = id.replace(new RegExp(`^${handle}/`), '');
      readState(c);
      token.input.focus();
    },
    /** @type {HTMLElement | null} */
    node: null,
  };
  name.input.addEventListener('change', () => readState(c));
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Endpoint credential', autocomplete: 'off', on: { submit: (/** @type {SubmitEvent} */ event) => event.preventDefault() } },
    name.row,
    datalist,
    token.row,
    h(
      'p',
      {},
      actionButton('Set', () => setToken(c), { type: 'submit', id: 'credential-set' }),
      actionButton('Clear', () => clearToken(c), { class: 'secondary', id: 'credential-clear' }),
    ),
    c.state,
  );
  name.input.addEventListener('focus', () => {
    fill(
      datalist,
      out.knownAgents().map((id) => h('option', { value: id.replace(`${handle}/`, '') })),
    );
  });
  out.node = section(
    'Endpoint credential',
    h(
      'p',
      {},
      'If your server checks a token, give it here once. It can be set before the first version is published, so that the draft and the evaluation get through.',
    ),
    form,
  );
  return out;
}
