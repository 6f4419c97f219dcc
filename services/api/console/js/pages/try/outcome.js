// @ts-check
// What a call on the Try page answered, drawn in place: the output and the receipt, a held call, an input the agent
// refuses (said at the input), a failure in words, or the gateway's refusal with what to do next.

import { fill, foldedText, h, notice, setFieldError } from '../../dom.js';
import { money } from '../../money.js';
import { describeProblem, receiptFacts, sentence } from '../../agent-view.js';
import { RUN_ERRORS, wordsFor } from '../../error-words.js';

/**
 * @typedef {import('../../api-types.js').Receipt} Receipt
 * @typedef {import('../../api-types.js').Problem} Problem
 * @typedef {import('../../api-types.js').AgentView} AgentView
 * @typedef {import('../../dom.js').Child} Child
 */

/**
 * A call's answer, whichever it is (POST /v0/calls, GET /v0/calls/{id}): succeeded (`output`), held, queued or
 * running (`call`), failed or refused (`error`); with its receipt once there is one.
 * @typedef {{ status?: string, output?: unknown, receipt?: Receipt, call?: { id: string, status: string },
 *   error?: { code?: string, message?: string, problems?: Problem[] } }} CallBody
 * @typedef {{ status: number, body: CallBody | null }} CallAnswer
 */

/**
 * Where an answer is drawn: the outcome box, the input field (an input's problems go there), the agent (its own
 * error codes).
 * @typedef {{ outcome: HTMLElement, input: import('../../dom.js').Field, agent: AgentView }} OutcomeView
 */

/**
 * @param {OutcomeView} view
 * @param {Receipt} receipt
 * @param {unknown} output
 * @param {Child} receiptPart
 */
function succeeded(view, receipt, output, receiptPart) {
  fill(
    view.outcome,
    notice('ok', `It worked: ${receipt.billed ? `${money(receipt.cost.total, receipt.currency)} was charged` : 'nothing was charged'}.`),
    h('h3', {}, 'Output'),
    output === null || output === undefined
      ? h('p', { class: 'empty' }, 'The output is no longer kept: it is handed over once, then forgotten.')
      : foldedText(JSON.stringify(output, null, 2), { summary: 'Show the whole output' }),
    receiptPart,
  );
}

/**
 * The agent failed: its error code, in the words of its manifest or of the gateway, and whether it was charged.
 * @param {OutcomeView} view
 * @param {CallBody} body
 * @param {Receipt} receipt
 * @param {Child} receiptPart
 */
function agentFailed(view, body, receipt, receiptPart) {
  const errorCode = body.error?.code ?? receipt.error ?? 'agent_error';
  const declared = view.agent.interface?.errors?.[errorCode];
  const gateway = wordsFor(RUN_ERRORS, errorCode);
  const meaning = declared ? sentence(declared.description) : gateway ? sentence(gateway) : '';
  fill(
    view.outcome,
    notice(
      'error',
      'The agent failed with the error ',
      h('code', {}, errorCode),
      meaning ? `: ${meaning} ` : '. ',
      receipt.billed ? `${money(receipt.cost.total, receipt.currency)} was charged, as its manifest declares for this error.` : 'Nothing was charged.',
    ),
    receiptPart,
  );
}

/**
 * The gateway refused the request (400): problems about the input at the input, the rest in the notice.
 * @param {OutcomeView} view
 * @param {Problem[]} problems
 */
function badRequest(view, problems) {
  const atInput = problems.filter((x) => String(x.path).startsWith('$.input'));
  if (atInput.length) setFieldError(view.input, atInput.map((x) => describeProblem({ ...x, path: String(x.path).replace(/^\$\.input/, '$') })).join(' '));
  const rest = problems.filter((x) => !String(x.path).startsWith('$.input'));
  fill(view.outcome, notice('error', 'The gateway refused the request. ', rest.map(describeProblem).join(' ') || 'See what is said under the input.'));
}

/**
 * Anything else: the gateway's message, and what to do about its status.
 * @param {OutcomeView} view
 * @param {CallAnswer} answer
 * @param {Child} receiptPart
 */
function otherwise(view, { status: code, body }, receiptPart) {
  const message = body?.error?.message ? sentence(body.error.message) : `The gateway answered ${code}.`;
  const advice =
    code === 429
      ? ' Wait a moment, then run again.'
      : code === 409
        ? ' Check the Calls page before running it again.'
        : code >= 500
          ? ' Nothing was charged. Try again in a moment.'
          : '';
  fill(view.outcome, notice('error', message, advice), receiptPart);
}

/**
 * Draw a call's answer.
 * @param {OutcomeView} view
 * @param {CallAnswer} answer
 */
export function drawOutcome(view, answer) {
  const { status: code, body } = answer;
  const receipt = body?.receipt;
  const receiptPart = receipt ? [h('h3', {}, 'Receipt'), receiptFacts(receipt)] : [];
  const problems = body?.error?.problems ?? [];
  if (code === 200 && receipt?.status === 'succeeded') return succeeded(view, receipt, body?.output, receiptPart);
  if (code === 202 && body?.status === 'pending_approval') {
    const held = notice(
      'info',
      'The call is held: the mandate asks a human to approve it before it runs. Nothing is charged yet. ',
      h('a', { href: '#/approvals' }, 'Decide on Approvals'),
      '.',
    );
    return fill(view.outcome, held, receiptPart);
  }
  if (code === 422 && body?.error?.code === 'rejected_input') {
    setFieldError(view.input, problems.length ? problems.map(describeProblem).join(' ') : sentence(body.error.message));
    view.input.input.focus();
    const refused = 'The agent does not accept this input, so nothing ran and nothing was charged. Fix what is said under the input, then run again.';
    return fill(view.outcome, notice('error', refused), receiptPart);
  }
  if (code === 400 && problems.length) return badRequest(view, problems);
  if (code === 502 && body && receipt) return agentFailed(view, body, receipt, receiptPart);
  if (code === 403 && receipt) {
    const denied = notice('error', 'The mandate does not allow this call, so nothing ran and nothing was charged: ', sentence(body?.error?.message));
    return fill(view.outcome, denied, receiptPart);
  }
  otherwise(view, answer, receiptPart);
}
