/**
 * The tools of the gateway's MCP server (spec/mcp.md §1): names, descriptions, argument schemas and output
 * schemas. Every output schema admits the error shape `{error: {code, message}}` too, because a tool that fails
 * answers `isError` with that structured content, and clients validate it against the declared schema.
 */

import { MAX_QUERY_LENGTH } from '../../../shared/catalogue/text-search.js';
import { CALL_REF, callOutcomeSchemas } from '../openapi/call-schemas.js';
import { AGENT_VIEW, MANDATE_SEARCH } from '../openapi/catalogue-schemas.js';
import { APPROVAL, ERROR_BODY, MANDATE_VIEW, receiptSchema } from '../openapi/schemas.js';
import type { JsonSchema as Schema } from '../../../shared/core/json.js';

/** A tool that failed: `{error: {code, message, problems?}}`, the REST error body. */
const ERROR_RESULT = { type: 'object', additionalProperties: false, required: ['error'], properties: { error: ERROR_BODY } } as const;

/** An output schema: the tool's own answer (the REST definition of it), or the error shape. */
function output(answer: Schema, defs?: Schema): Schema {
  return { type: 'object', anyOf: [answer, ERROR_RESULT], ...(defs ? { $defs: defs } : {}) };
}

/** An amount in the arguments: a string here; the rest is checked with the rule and words of REST (`tryParseAmount`). */
const AMOUNT_ARGUMENT = { type: 'string', description: 'a decimal amount in the mandate currency, such as "0.05"' } as const;
const AGENT_REF = { type: 'string', minLength: 3, maxLength: 300 } as const;
const ID = { type: 'string', minLength: 1, maxLength: 100 } as const;

/** The receipt, as REST defines it (services/api/openapi/schemas.ts `receiptSchema`): one shape for both. */
const RECEIPT_DEFS = { receipt: receiptSchema({ $ref: '#/$defs/receipt' }) };
const RECEIPT = { $ref: '#/$defs/receipt' } as const;

/** What call_agent answers: REST's outcomes (a refusal answers as a failure, with its receipt), or still running. */
const CALL_OUTCOMES = callOutcomeSchemas(RECEIPT, ['failed', 'denied', 'rejected_input', 'rejected']);
const STILL_RUNNING = {
  type: 'object',
  additionalProperties: false,
  description: 'Past the wait: follow the call with get_receipt once it settles',
  required: ['status', 'call'],
  properties: { status: { const: 'running' }, call: CALL_REF },
} as const;

/**
 * A keyless session's call_agent before it is paid (the x402 MCP binding, docs/payments.md): x402's PaymentRequired
 * object, with `isError`; MPP's challenge rides in its extensions (`mpp`).
 */
const PAYMENT_REQUIRED = {
  type: 'object',
  description: 'Pay for the call: retry with _meta["x402/payment"] holding a payment for one of `accepts`',
  required: ['x402Version', 'resource', 'accepts'],
  properties: {
    x402Version: { const: 2 },
    error: { type: 'string' },
    resource: { type: 'object' },
    accepts: { type: 'array', items: { type: 'object' } },
    extensions: { type: 'object' },
  },
} as const;

/** One call of list_calls: a call started as a task (its id is the task id), with its task status. */
const LISTED_CALL = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'created_at', 'last_updated_at'],
  properties: {
    id: { type: 'string' },
    status: { enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    status_message: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    last_updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The budget of the connection's mandate: REST's MandateView budget, and the mandate it is of. */
const MANDATE_BUDGET = MANDATE_VIEW.properties.budget;
const BUDGET = {
  type: 'object',
  additionalProperties: false,
  required: ['mandate', ...MANDATE_BUDGET.required],
  properties: { mandate: { type: 'string' }, ...MANDATE_BUDGET.properties },
} as const;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  outputSchema: Schema;
  annotations?: Record<string, boolean>;
  /** MCP tasks: `optional` lets a client run the tool as a task (services/api/mcp/tasks.ts). */
  execution?: { taskSupport: 'optional' };
  /** Arguments that are amounts (AMOUNT_ARGUMENT), checked with `tryParseAmount` instead of the schema. */
  amounts?: readonly string[];
}

export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'search_agents',
    title: 'Search agents',
    description:
      'Find agents this connection may hire, ranked: price and worst case in the mandate currency, measured record ' +
      '(success rate, cost per successful run, p50 latency, runs), evaluation status. Agents the mandate does not allow are ' +
      'listed apart with the reason. Give `q` (words) and/or `capability` (e.g. "text.translate").',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        q: {
          type: 'string',
          maxLength: MAX_QUERY_LENGTH,
          description:
            'What the agent should do, in words (e.g. "profile this CSV"): agents matching any of them, stemmed, over id, name, summary, ' +
            'description, capabilities and examples, most relevant first, then cheapest per successful run; an exact agent id comes first',
        },
        capability: { type: 'string', maxLength: 200, description: 'An exact capability class ("text.translate") or a prefix ("text.*")' },
      },
    },
    outputSchema: output(MANDATE_SEARCH),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'get_agent',
    title: 'Describe an agent',
    description:
      "One agent (`ns/name` or `ns/name@range`): summary, interface schemas (`interface.input` is what call_agent's `input` must match), " +
      'the examples and an example input (`example_input`), pricing, data policy (attested by the author), measured record, ' +
      'evaluation (status and each suite: public cases in detail, hidden ones pass/fail), versions.',
    inputSchema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: AGENT_REF } },
    outputSchema: output(AGENT_VIEW),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'call_agent',
    title: 'Hire an agent',
    description:
      'Call an agent (`agent`: "ns/name[@range]") or the best agent for a `capability`, with `input`: a JSON object matching the ' +
      "agent's input schema (get_agent shows it, and an example input). " +
      'The worst case is reserved from the mandate first; only a successful run (or a declared billed error) is charged. ' +
      '`max_cost` caps this call (decimal, mandate currency). A call that needs a human decision asks in the client when it can, ' +
      'else answers `pending_approval` with the approval id (re-submit with `approval` once granted). Returns `{status, output?, receipt}`.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['input'],
      properties: {
        agent: AGENT_REF,
        capability: { type: 'string', minLength: 1, maxLength: 200 },
        input: {
          type: 'object',
          description:
            "The agent's input, a JSON object (not a string holding JSON) matching the agent's own input schema: get_agent answers it " +
            'as `interface.input`, with an example as `example_input`',
        },
        max_cost: AMOUNT_ARGUMENT,
        approval: ID,
      },
    },
    amounts: ['max_cost'],
    outputSchema: output({ oneOf: [CALL_OUTCOMES.succeeded, CALL_OUTCOMES.failed, CALL_OUTCOMES.held, STILL_RUNNING, PAYMENT_REQUIRED] }, RECEIPT_DEFS),
    execution: { taskSupport: 'optional' },
    annotations: { readOnlyHint: false, openWorldHint: true },
  },
  {
    name: 'get_receipt',
    title: 'Read a receipt',
    description: "A receipt and its tree of delegated calls (own, downstream and total cost, splits), within this connection's mandate.",
    inputSchema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID } },
    outputSchema: output(RECEIPT, RECEIPT_DEFS),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'list_approvals',
    title: 'Pending approvals',
    description: 'Calls of this mandate waiting for a human decision.',
    inputSchema: { type: 'object', additionalProperties: false, properties: {} },
    outputSchema: output({
      type: 'object',
      additionalProperties: false,
      required: ['approvals'],
      properties: { approvals: { type: 'array', items: APPROVAL } },
    }),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'get_approval',
    title: 'One approval',
    description: 'The status of one approval of this mandate: pending, approved, rejected, expired or used.',
    inputSchema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID } },
    outputSchema: output(APPROVAL),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'list_calls',
    title: 'Calls run as tasks',
    description:
      'The calls this key started as tasks (call_agent answered with a task), newest first, 50 at a time: ' +
      'their task status; get_receipt reads each one once it settles. Pass `cursor` (from `next_cursor`) for the next page.',
    inputSchema: { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string', minLength: 1, maxLength: 500 } } },
    outputSchema: output({
      type: 'object',
      additionalProperties: false,
      required: ['calls'],
      properties: { calls: { type: 'array', items: LISTED_CALL }, next_cursor: { type: 'string' } },
    }),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'get_budget',
    title: 'Budget',
    description: "This connection's mandate: total, spent, reserved and remaining, in its currency.",
    inputSchema: { type: 'object', additionalProperties: false, properties: {} },
    outputSchema: output(BUDGET),
    annotations: { readOnlyHint: true },
  },
];
