// @ts-check
// A running call on the Try page, followed through its events (GET /v0/calls/{id}/events): its progress, each chunk
// of a streamed output as it arrives, and the agent's question with a form to answer it (POST /v0/calls/{id}/input).
// Ends with the call's final answer, read as POST /v0/calls would have answered it.

import { ApiError, followEvents, request } from '../../api.js';
import { actionButton, field, fill, h, notice, setFieldError } from '../../dom.js';
import { describeProblem, sentence } from '../../agent-view.js';
import { REQUEST_ERRORS, wordsFor } from '../../error-words.js';

/**
 * @typedef {import('./outcome.js').CallAnswer} CallAnswer
 * @typedef {import('../../api.js').CallEvent} CallEvent
 */

/**
 * Follow call `id` until it ends (its answer) or the page is left (undefined): its events drawn in `live` (kept once
 * it ends), its state and a failure to read it in `outcome` (where its answer is drawn next).
 * @param {string} id
 * @param {{ live: HTMLElement, outcome: HTMLElement }} boxes
 * @returns {Promise<CallAnswer | undefined>}
 */
export async function followCall(id, { live, outcome }) {
  const leaving = new AbortController();
  window.addEventListener('hashchange', () => leaving.abort(), { once: true });
  const status = h('p', { class: 'loading', role: 'status' }, `The call ${id} is queued…`);
  const bar = h('progress', { max: '1', hidden: true, 'aria-label': 'How far the run is' });
  const progressText = h('p', {});
  const chunks = h('ol', { class: 'chunks', 'aria-label': 'The output so far' });
  const question = h('div', {});
  fill(outcome, status);
  fill(live, bar, progressText, chunks, question);
  try {
    const completed = await followEvents(id, (e) => show(e, { id, status, bar, progressText, chunks, question }), leaving.signal);
    if (!completed) return undefined;
    const body = completed.data;
    return { status: body?.status === 'succeeded' ? 200 : 502, body };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(outcome, notice('error', 'The call was sent but its events could not be read: ', sentence(e.message), ' See it on the Calls page.'));
    return undefined;
  }
}

/**
 * One event, drawn.
 * @param {CallEvent} e
 * @param {{ id: string, status: HTMLElement, bar: HTMLElement, progressText: HTMLElement, chunks: HTMLElement, question: HTMLElement }} view
 */
function show(e, view) {
  const { id, status, bar, progressText, chunks, question } = view;
  if (e.event === 'running') status.textContent = `The call ${id} is running…`;
  if (e.event === 'progress') {
    if (typeof e.data?.fraction === 'number') {
      bar.hidden = false;
      bar.setAttribute('value', String(e.data.fraction));
    }
    progressText.textContent = typeof e.data?.message === 'string' ? `The agent says: ${e.data.message}` : '';
  }
  if (e.event === 'output.chunk') {
    chunks.append(h('li', {}, e.data?.expired ? '(no longer kept)' : JSON.stringify(e.data?.data)));
  }
  if (e.event === 'input_required' && !e.data?.answered) fill(question, questionForm(id, e.data));
  if (e.event === 'input_provided') fill(question, h('p', { role: 'status' }, 'Answered: the agent goes on.'));
  if (e.event === 'completed' && !chunks.childElementCount) chunks.remove();
}

/**
 * The agent's question and a form to answer it: the answer is JSON, checked against the question's schema.
 * @param {string} id
 * @param {{ question: number, request: { message: string, schema?: Record<string, unknown> } | null }} q
 */
function questionForm(id, q) {
  const answer = field({
    label: 'Your answer (JSON)',
    name: 'answer',
    type: 'textarea',
    rows: 4,
    value: skeleton(q.request?.schema),
    hint: q.request?.schema ? 'It must match what the agent asks for.' : 'Any JSON.',
  });
  const said = h('div', { role: 'alert' });
  const send = async () => {
    setFieldError(answer, '');
    fill(said);
    let value;
    try {
      value = JSON.parse(answer.input.value);
    } catch (e) {
      setFieldError(answer, `This is not valid JSON (${e instanceof Error ? e.message : e}).`);
      return;
    }
    const r = await request('POST', `/v0/calls/${encodeURIComponent(id)}/input`, { input: value, question: q.question }, { any: true });
    if (r.status === 202) return;
    const error = /** @type {{ error?: { code?: string, message?: string, problems?: Array<{path: string, message: string}> } } | null} */ (r.body)?.error;
    if (error?.problems?.length) setFieldError(answer, error.problems.map(describeProblem).join(' '));
    else fill(said, notice('error', sentence(wordsFor(REQUEST_ERRORS, error?.code) || error?.message || `the gateway answered ${r.status}`)));
  };
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'try-question-heading' },
    h('h3', { id: 'try-question-heading' }, 'The agent asks'),
    h('p', { class: 'question' }, q.request?.message ?? '(the question is no longer kept)'),
    answer.row,
    h('p', {}, actionButton('Answer', send, { id: 'try-answer', type: 'button' })),
    said,
  );
}

/**
 * A starting answer from the question's schema: an object with its properties (empty strings, 0, false), else {}.
 * @param {Record<string, unknown> | undefined} schema
 */
function skeleton(schema) {
  const properties = /** @type {Record<string, { type?: string }> | undefined} */ (schema?.properties);
  if (!properties || typeof properties !== 'object') return '{}';
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [name, p] of Object.entries(properties)) out[name] = p?.type === 'number' || p?.type === 'integer' ? 0 : p?.type === 'boolean' ? false : '';
  return JSON.stringify(out, null, 2);
}
