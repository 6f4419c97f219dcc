/**
 * What the call routes answer (services/api/routes/calls/answers.ts, routes/calls.ts), one exact shape per outcome:
 *
 *   CallSucceeded  200  {status: succeeded, output, output_gone?, receipt, replayed?}
 *   CallFailed     502  {status: failed, error, receipt, replayed?}  (a refusal — 403, 404, 422 — is the Error shape)
 *   CallHeld       202  {status: pending_approval, approval, receipt, replayed?}
 *   CallQueued     202  {status, call: {id, status}}: async, or still on its way past the synchronous wait
 *   CallState      GET /v0/calls/{id}: {call: {id, status}, receipt?, output?, output_gone?, input_required?}
 * (`holon/client`'s `CallAnswer` is any of the first four: what POST /v0/calls and an approval that runs answer.)
 */
import type { JsonSchema } from './operations.js';
import { APPROVAL, ERROR_BODY, RECEIPT, RECEIPT_STATUSES } from './schemas.js';

/** A call's own status before its receipt exists (shared/calls/transitions.ts `CallStatus`). */
const CALL_STATUSES = ['queued', 'running', 'settling', 'succeeded', 'failed'] as const;

const OUTPUT: JsonSchema = {
  description:
    'A success’s output, valid against its interface.output, while it is kept (HOLON_RESULT_TTL_S, or until every consumer the call declared has it: the synchronous answer, the webhook of `callback_url`; reading it takes nothing); null once it is not, with `output_gone` saying why',
};

const OUTPUT_GONE: JsonSchema = {
  enum: ['collected', 'expired'],
  description:
    'Present when a success’s output is null because it is no longer kept: `collected` — every consumer the call declared (the synchronous answer, the webhook) had it; `expired` — HOLON_RESULT_TTL_S ended first',
};

const REPLAYED: JsonSchema = { const: true, description: 'The answer to an earlier request with the same Idempotency-Key' };

export const CALL_REF: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status'],
  properties: {
    id: { type: 'string' },
    status: {
      enum: [...new Set([...CALL_STATUSES, 'input_required', ...RECEIPT_STATUSES])],
      description:
        'Before the receipt exists the call’s own status (queued, running — or input_required while its agent waits for an answer — settling); once final the receipt’s',
    },
  },
};

/**
 * The finished and held answers around `receipt` (the REST component, or an MCP tool's `$defs` entry): the one
 * definition for both; `failedStatuses` the statuses a failure answers with (REST: failed; MCP call_agent also
 * answers its refusals so).
 */
export function callOutcomeSchemas(receipt: JsonSchema, failedStatuses: readonly string[] = ['failed']) {
  return {
    succeeded: {
      type: 'object',
      additionalProperties: false,
      description: 'The call succeeded: its output and its receipt',
      required: ['status', 'output', 'receipt'],
      properties: { status: { const: 'succeeded' }, output: OUTPUT, output_gone: OUTPUT_GONE, receipt, replayed: REPLAYED },
    },
    failed: {
      type: 'object',
      additionalProperties: false,
      description: 'The agent failed (never billed unless its manifest declares the error billed): the error and the receipt',
      required: ['status', 'error', 'receipt'],
      properties: { status: { enum: [...failedStatuses] }, error: ERROR_BODY, receipt, replayed: REPLAYED },
    },
    held: {
      type: 'object',
      additionalProperties: false,
      description: 'Held for a human decision: the approval to wait for, and the receipt of the held request',
      required: ['status', 'approval', 'receipt'],
      properties: { status: { const: 'pending_approval' }, approval: APPROVAL, receipt, replayed: REPLAYED },
    },
  } satisfies Record<string, JsonSchema>;
}

const REST_OUTCOMES = callOutcomeSchemas(RECEIPT);
export const CALL_SUCCEEDED: JsonSchema = REST_OUTCOMES.succeeded;
export const CALL_FAILED: JsonSchema = REST_OUTCOMES.failed;
export const CALL_HELD: JsonSchema = REST_OUTCOMES.held;

export const CALL_QUEUED: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'On its way (async, or past the synchronous wait): follow it with GET /v0/calls/{id}?wait=',
  required: ['status', 'call'],
  properties: { status: { enum: ['queued', 'running', 'settling'], description: 'The call’s own status, as `call.status`' }, call: CALL_REF },
};

export const QUESTION_ID: JsonSchema = { type: 'integer', minimum: 3, description: 'The question’s id: its event id in the call’s events' };

/** A question a running agent asked its caller (docs/lifecycle.md, "Agents that ask"). */
const INPUT_REQUIRED: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['question', 'request'],
  description: 'The question the call waits on: answer it with POST /v0/calls/{id}/input',
  properties: {
    question: QUESTION_ID,
    request: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['message'],
      description: 'The agent’s words and the JSON Schema the answer must meet; null once past its time in the store',
      properties: { message: { type: 'string' }, schema: { type: 'object' } },
    },
  },
};

const CALL_STATE_PROPERTIES = {
  call: CALL_REF,
  receipt: RECEIPT,
  output: OUTPUT,
  output_gone: OUTPUT_GONE,
  input_required: INPUT_REQUIRED,
};

export const CALL_STATE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A call: its status; once final (or held) its receipt, and a success’s output while it is kept',
  required: ['call'],
  properties: CALL_STATE_PROPERTIES,
};

export const CANCEL_ANSWER: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'The call’s state after the cancel, a held call’s approval (rejected by the cancel), never a success’s output (GET /v0/calls/{id} reads it)',
  required: ['call', 'cancel'],
  properties: {
    ...CALL_STATE_PROPERTIES,
    approval: APPROVAL,
    cancel: { enum: ['cancelled', 'cancelling', 'too_late'] },
  },
};
