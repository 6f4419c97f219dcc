// @ts-check
// The "Call it" form of an agent's Try page: the mandate to call under (and what it would decide), the input (the
// agent's own example first), and Run: POST /v0/calls (answered at once), then the call's events until it ends
// (call-stream.js: progress, chunks, the agent's questions).

import { ApiError, get, qs, request } from '../../api.js';
import { actionButton, field, fill, h, notice, setFieldError } from '../../dom.js';
import { money } from '../../money.js';
import { agentRecord, sentence } from '../../agent-view.js';
import { agentUrl } from '../../paths.js';
import { drawOutcome } from './outcome.js';
import { followCall } from './call-stream.js';

/**
 * @typedef {import('../../api-types.js').AgentView} AgentView
 * @typedef {import('../../dom.js').Field} Field
 * @typedef {import('./mandates.js').MandateOption} MandateOption
 * @typedef {import('./outcome.js').CallAnswer} CallAnswer
 */

/**
 * What the form works with: the agent, the mandates, the page's query and its leaving, and the Agent Record's box
 * (read again after a run).
 * @typedef {{ id: string, agent: AgentView, mandates: MandateOption[], mandateProblem: string | null,
 *   query: URLSearchParams, recordBox: HTMLElement, left: () => boolean }} RunContext
 */

/**
 * The agent's examples that have an input (its manifest's `interface.examples`).
 * @param {AgentView} agent
 * @returns {Array<{ input?: unknown }>}
 */
function examplesOf(agent) {
  const examples = /** @type {{ interface?: { examples?: unknown } } | undefined} */ (agent.manifest)?.interface?.examples;
  return Array.isArray(examples) ? examples.filter((x) => x && typeof x === 'object' && 'input' in x) : [];
}

/**
 * What the chosen mandate would decide about a call of this agent, said in `admission`.
 * @param {string} id
 * @param {Field} mandate
 * @param {HTMLElement} admission
 */
async function checkAdmission(id, mandate, admission) {
  const m = mandate.input.value;
  admission.textContent = '';
  try {
    /** @type {import('../../api-types.js').Answer<'searchAgents'>} */
    const body = await get(`/v0/agents${qs({ q: id, mandate: m })}`);
    if (!('currency' in body)) return;
    const allowed = (body.agents ?? []).find((a) => a.id === id);
    const denied = (body.denied ?? []).find((a) => a.id === id);
    if (mandate.input.value !== m) return;
    if (allowed) {
      const worst = allowed.worst_case === null ? 'an amount that cannot be converted' : money(allowed.worst_case, body.currency);
      admission.textContent =
        allowed.decision === 'approve'
          ? `Under ${m} a human must approve this call before it runs. Its worst case is ${worst}.`
          : `Under ${m} this call is allowed. At most ${worst} is reserved; only the real cost is charged.`;
    } else if (denied) {
      admission.textContent = `Under ${m} this call would be denied: ${(denied.reasons ?? []).map(sentence).join(' ')} Pick another mandate.`;
    }
  } catch {
    /* the Run answer will say it */
  }
}

/**
 * Buttons that put another of the agent's examples in the input, when it has more than one.
 * @param {Array<{ input?: unknown }>} examples
 * @param {Field} input
 * @param {(i: number) => string} exampleText
 */
function exampleButtons(examples, input, exampleText) {
  if (examples.length <= 1) return null;
  return h(
    'p',
    {},
    'Start from: ',
    examples.map((_, i) =>
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          on: {
            click: () => {
              input.input.value = exampleText(i);
              setFieldError(input, '');
              input.input.focus();
            },
          },
        },
        `Example ${i + 1}`,
      ),
    ),
  );
}

/**
 * The form: a mandate, the input, Run, and where the outcome is drawn.
 * @param {RunContext} ctx
 */
export function runForm(ctx) {
  const { id, agent, mandates, mandateProblem, query } = ctx;
  const examples = examplesOf(agent);
  const exampleText = (/** @type {number} */ i) => JSON.stringify(examples[i]?.input ?? {}, null, 2);
  const input = field({
    label: 'Input (JSON)',
    name: 'input',
    type: 'textarea',
    rows: Math.min(16, Math.max(5, exampleText(0).split('\n').length + 1)),
    value: exampleText(0),
    hint: examples.length
      ? 'Pre-filled with the agent’s own example. Change it as you like: it must be JSON.'
      : 'The agent gives no example; write the input as JSON.',
  });
  const asked = query.get('mandate');
  const mandate = mandates.length
    ? field({
        label: 'Call under the mandate',
        name: 'mandate',
        options: mandates,
        value: asked && mandates.some((m) => m.value === asked) ? asked : mandates[0]?.value,
        hint: 'The mandate pays for the call and decides whether it may happen.',
      })
    : null;
  const admission = h('p', { role: 'status' });
  const outcome = h('div', { id: 'try-outcome' });
  // A running call's events (progress, streamed chunks, the agent's question), kept above its outcome once it ends.
  const live = h('div', { id: 'try-live' });
  const check = () => (mandate ? checkAdmission(id, mandate, admission) : undefined);
  mandate?.input.addEventListener('change', check);

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'try-run-heading', on: { submit: (/** @type {SubmitEvent} */ event) => event.preventDefault() } },
    h('h2', { id: 'try-run-heading' }, 'Call it'),
    mandateProblem ? notice('error', 'Your mandates could not be read: ', sentence(mandateProblem)) : null,
    !mandates.length && !mandateProblem
      ? notice(
          'info',
          'You have no mandate yet: a call needs one, to pay for it and to bound it. ',
          h('a', { href: '#/mandates' }, 'Create one on Mandates and keys'),
          '.',
        )
      : null,
    mandate?.row,
    admission,
    exampleButtons(examples, input, exampleText),
    input.row,
  );
  const runButton = actionButton('Run', () => run(ctx, { input, mandate, outcome, live }), { id: 'try-run', type: 'submit', disabled: !mandates.length });
  form.append(
    h('p', {}, runButton, h('span', { class: 'hint' }, ' Runs the agent once. Only a run that succeeds (or a declared billed error) is charged.')),
    live,
    outcome,
  );
  check();
  return form;
}

/**
 * Run: the input must be JSON and a mandate chosen; the call is made, awaited, and its answer drawn.
 * @param {RunContext} ctx
 * @param {{ input: Field, mandate: Field | null, outcome: HTMLElement, live: HTMLElement }} form
 */
async function run(ctx, { input, mandate, outcome, live }) {
  const { id, agent, left } = ctx;
  setFieldError(input, '');
  let value;
  try {
    value = JSON.parse(input.input.value);
  } catch (e) {
    setFieldError(input, `This is not valid JSON (${e instanceof Error ? e.message : e}). Check the quotes, commas and brackets, then run again.`);
    input.input.focus();
    return;
  }
  if (!mandate) {
    fill(
      outcome,
      notice('error', 'You have no mandate to call under. ', h('a', { href: '#/mandates' }, 'Create one on Mandates and keys'), ', then come back.'),
    );
    return;
  }
  fill(live);
  fill(outcome, h('p', { class: 'loading', role: 'status' }, `Calling ${id}…`));
  /** @type {CallAnswer} */
  let first;
  try {
    // Answered at once: the call is then followed through its events (progress, chunks, a question to answer).
    first = await request('POST', '/v0/calls', { mandate: mandate.input.value, agent: id, input: value }, { any: true, headers: { prefer: 'respond-async' } });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(outcome, notice('error', sentence(e.message)));
    return;
  }
  const queued = first.status === 202 && first.body?.call && first.body.status !== 'pending_approval' ? first.body.call.id : undefined;
  const answer = queued ? await followCall(queued, { live, outcome }) : first;
  if (!answer || left()) return;
  drawOutcome({ outcome, input, agent }, answer);
  const status = answer.body?.receipt?.status;
  if (status === 'succeeded' || status === 'failed') refreshRecord(ctx);
}

/**
 * After a run, the Agent Record shown counts it: read the agent again (quietly: the outcome is what matters).
 * @param {RunContext} ctx
 */
async function refreshRecord({ id, recordBox, left }) {
  try {
    /** @type {AgentView} */
    const fresh = await get(agentUrl(id));
    if (!left()) fill(recordBox, agentRecord(fresh));
  } catch {
    /* the record stays as it was */
  }
}
