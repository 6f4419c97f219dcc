// @ts-check
// Drafting a listing (POST /v0/agents/draft): the form is checked here first, then the gateway calls the endpoint
// once with the example input and answers a manifest in YAML, which goes into the editor. Every refusal is said at
// its field.

import { ApiError, request } from '../../api.js';
import { fill, h, notice, setFieldError } from '../../dom.js';
import { isPositiveAmount, typedAmount } from '../../money.js';
import { placeProblems, sentence } from '../../agent-view.js';
import { DRAFT_ADVICE, wordsFor } from '../../error-words.js';
import { fieldMatcher } from './shared.js';

/**
 * @typedef {import('../../dom.js').Field} Field
 * @typedef {import('./connect.js').ConnectForm} ConnectForm
 * @typedef {import('../../api-types.js').Answer<'draftListing'> & import('../../api-types.js').ErrorBody} DraftAnswer
 */

/**
 * The draft request the form says, or its problems (each with its field).
 * @param {ConnectForm} c
 * @returns {{ body: { name: string, endpoint: string, input: unknown, price?: string, summary?: string } } | { problems: Array<[Field, string]> }}
 */
function draftRequest({ handle, fields: { name, endpoint, input, price, summary } }) {
  /** @type {Array<[Field, string]>} */
  const problems = [];
  const nameValue = name.input.value.trim().replace(new RegExp(`^${handle}/`), '');
  if (!nameValue) problems.push([name, 'Give the agent a name, such as “invoice-total”.']);
  const endpointValue = endpoint.input.value.trim();
  if (!endpointValue) problems.push([endpoint, 'Give the address of your webhook, starting with https://.']);
  let example;
  if (!input.input.value.trim()) problems.push([input, 'Give an example input, as JSON: the endpoint is called once with it.']);
  else {
    try {
      example = JSON.parse(input.input.value);
    } catch (e) {
      problems.push([input, `This is not valid JSON (${e instanceof Error ? e.message : e}). Check the quotes, commas and brackets.`]);
    }
  }
  const priceValue = typedAmount(price.input.value);
  if (priceValue && !isPositiveAmount(priceValue)) {
    problems.push([price, 'Write the price as a number of euros above zero, such as 0.05 (at most 6 decimals), or leave it empty for a free agent.']);
  }
  if (problems.length) return { problems };
  const summaryValue = summary.input.value.trim();
  return {
    body: {
      name: nameValue,
      endpoint: endpointValue,
      input: example,
      ...(priceValue ? { price: priceValue } : {}),
      ...(summaryValue ? { summary: summaryValue } : {}),
    },
  };
}

/**
 * The draft was refused: the request's problems at their fields, an endpoint's refusal at the endpoint, else why.
 * @param {ConnectForm} c
 * @param {import('../../api.js').Answer<Partial<DraftAnswer> | null>} answer
 */
function refused(c, answer) {
  const { fields, draftProblems, draftStatus } = c;
  const err = answer.body?.error ?? { code: undefined, message: undefined, problems: undefined };
  const listed = err.problems ?? [];
  if (answer.status === 400 && listed.length) {
    const drafts = fieldMatcher([
      ['$.name', fields.name],
      ['$.endpoint', fields.endpoint],
      ['$.input', fields.input],
      ['$.price', fields.price],
      ['$.summary', fields.summary],
    ]);
    const rest = placeProblems(listed, drafts, setFieldError, draftProblems);
    fill(draftStatus, notice('error', 'The draft was not made: fix what is said at the fields', rest ? ' and below' : '', ', then try again.'));
    (Object.values(fields).find((f) => !f.error.hidden) ?? fields.name).input.focus();
    return;
  }
  if (answer.status === 422 && /^(endpoint_|credential_)/.test(err.code ?? '')) {
    const advice = wordsFor(DRAFT_ADVICE, err.code);
    setFieldError(fields.endpoint, `${sentence(err.message)}${advice ? ` ${advice}` : ''}`);
    fields.endpoint.input.focus();
    fill(draftStatus, notice('error', 'Your endpoint could not be drafted: see what is said at the endpoint.'));
    return;
  }
  if (listed.length) placeProblems(listed, () => null, setFieldError, draftProblems);
  const wait = answer.status === 429 ? ' Wait a while: every draft is a request to your server, so they are limited per hour.' : '';
  fill(draftStatus, notice('error', sentence(err.message ?? `the gateway answered ${answer.status}`), wait));
}

/**
 * Draft a listing from one real call, and put it in the editor.
 * @param {ConnectForm} c
 */
export async function draft(c) {
  c.clear();
  const asked = draftRequest(c);
  if ('problems' in asked) {
    for (const [f, message] of asked.problems) setFieldError(f, message);
    asked.problems[0]?.[0].input.focus();
    return;
  }
  fill(c.draftStatus, h('p', { class: 'loading', role: 'status' }, 'Calling your endpoint once with the example input…'));
  /** @type {import('../../api.js').Answer<Partial<DraftAnswer> | null>} */
  let answer;
  try {
    answer = await request('POST', '/v0/agents/draft', asked.body, { any: true });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(c.draftStatus, notice('error', sentence(e.message)));
    return;
  }
  fill(c.draftStatus);
  const yaml = answer.body?.yaml;
  if (answer.status === 200 && yaml !== undefined) {
    c.manifest.input.value = yaml;
    if (c.manifest.input instanceof HTMLTextAreaElement) c.manifest.input.rows = Math.min(30, Math.max(8, yaml.split('\n').length + 1));
    fill(c.draftStatus, notice('ok', 'Your endpoint answered. The draft listing is below: review it, then publish it. Nothing is stored or listed yet.'));
    c.manifest.input.focus();
    return;
  }
  refused(c, answer);
}
