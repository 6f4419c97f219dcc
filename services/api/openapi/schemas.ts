/**
 * Schemas shared by the route table: the pieces request bodies are made of (validated by requests.ts `bodyReader`,
 * with the gateway's own wording for each problem) and the answers' shapes (the error shape of gateway.md, receipts,
 * mandates, approvals). The document builder (document.ts) lists the named ones under `components.schemas` and points
 * at them with `$ref` wherever a route uses the very same object.
 *
 * Body keywords beyond JSON Schema, understood by requests.ts and kept in the document as extensions:
 *   x-amount: {allowZero}   a decimal amount string, checked by shared/core/money.ts (its message)
 *   x-url: true             an absolute http(s) URL without credentials
 *   x-messages: {keyword: message}   the problem's wording when that keyword fails
 */
import type { JsonSchema, ResponseSpec } from './operations.js';

/** A non-empty string of at most `max` characters ("must be a non-empty string", "must be at most N characters"). */
export function text(max: number, description?: string, extra: Record<string, unknown> = {}): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: max, ...(description ? { description } : {}), ...extra };
}

/** A decimal amount on the wire (DESIGN §4: decimal strings, at most 6 decimals). */
export function amount(description: string, options: { allowZero?: boolean } = {}): JsonSchema {
  return {
    type: 'string',
    pattern: '^[0-9]+(?:\\.[0-9]{1,6})?$',
    description,
    examples: ['0.05'],
    'x-amount': { allowZero: options.allowZero ?? true },
  };
}

/** An absolute http(s) URL without credentials, at most 2000 characters. */
export function httpUrl(description: string): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: 2000, format: 'uri', description, 'x-url': true };
}

export const BOOLEAN: JsonSchema = { type: 'boolean', 'x-messages': { type: 'must be true or false' } };

/** A decimal amount in an answer. */
export const AMOUNT: JsonSchema = { type: 'string', pattern: '^-?[0-9]+(?:\\.[0-9]+)?$', examples: ['0.002'] };

export const TIMESTAMP: JsonSchema = { type: 'string', format: 'date-time' };

export const PROBLEM: JsonSchema = {
  type: 'object',
  required: ['path', 'message'],
  properties: {
    path: { type: 'string', description: 'Where, as a JSON path: `$.input.text`, `query.limit`' },
    message: { type: 'string' },
  },
};

/** Every refusal and failure: `{error: {code, message, problems?}}` (DESIGN §4; services/api/app.ts). */
const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Stable snake_case code (gateway.md, manifest.md §3)', examples: ['invalid_request'] },
    message: { type: 'string', description: 'Plain words' },
    problems: { type: 'array', items: PROBLEM, description: 'Every problem of a bad request, with its path' },
  },
};

export const ERROR: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: ERROR_BODY,
    receipt: { description: 'Refused calls get a receipt too (DESIGN §3.6)' },
  },
};

/** A receipt tree (spec receipts.md); children are receipts. */
export const RECEIPT: JsonSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: {
    id: { type: 'string' },
    parent: { type: ['string', 'null'] },
    mandate: { type: 'string' },
    caller: { type: ['string', 'null'] },
    agent: { type: ['string', 'null'], examples: ['holon-labs/csv-profile@1.0.0'] },
    status: { type: 'string', examples: ['succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval'] },
    error: { type: ['string', 'null'] },
    reasons: { type: 'array', items: { type: 'string' } },
    worst_case: { type: ['string', 'null'] },
    currency: { type: 'string' },
    payer: { type: ['string', 'null'] },
    billed: { type: 'boolean' },
    cost: { type: ['object', 'null'] },
    splits: { type: 'array' },
    children: { type: 'array' },
    duration_ms: { type: ['integer', 'null'] },
  },
};

/** A stored mandate and its budget (shared/mandates/store.ts `mandateView`). */
export const MANDATE_VIEW: JsonSchema = {
  type: 'object',
  required: ['mandate', 'budget'],
  properties: {
    mandate: { type: 'object', description: 'The mandate document (spec mandate.md)' },
    budget: {
      type: 'object',
      required: ['currency', 'total', 'spent', 'reserved', 'remaining'],
      properties: { currency: { type: 'string' }, total: AMOUNT, spent: AMOUNT, reserved: AMOUNT, remaining: AMOUNT },
    },
  },
};

/** A mandate document as POSTed (spec mandate.md); validated by shared/core/mandate/validate.ts, described here. */
export const MANDATE_DOCUMENT: JsonSchema = {
  type: 'object',
  description:
    'A root mandate (spec mandate.md §1–2), validated by shared/core/mandate/validate.ts with every problem listed. Hosted: the id is put in your namespace, the issuer is you, the grantee `<handle>/…`, the currency EUR and `fx` the platform’s.',
  required: ['id', 'grantee', 'allow', 'budget'],
  properties: {
    id: { type: 'string', examples: ['sandbox-2'] },
    issuer: { type: 'string' },
    grantee: { type: 'string', examples: ['alice/assistant'] },
    allow: {
      type: 'object',
      properties: {
        agents: { type: 'array', items: { type: 'string' } },
        capabilities: { type: 'array', items: { type: 'string' } },
        published: { type: 'boolean' },
      },
    },
    deny: { type: 'object' },
    require: { type: 'object' },
    data: { type: 'object' },
    budget: { type: 'object', required: ['total'], properties: { total: AMOUNT, currency: { type: 'string' }, per_call: AMOUNT } },
    approval: { type: 'object' },
    delegation: { type: 'object' },
    expires: { type: 'string' },
  },
  'x-holon-validated-by': 'shared/core/mandate/validate.ts',
};

export const APPROVAL: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'mandate', 'agent'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', examples: ['pending', 'approved', 'rejected', 'expired'] },
    mandate: { type: 'string' },
    agent: { type: 'string' },
    input_sha256: { type: 'string' },
    max_cost: { type: ['string', 'null'] },
    worst_case: AMOUNT,
    currency: { type: 'string' },
    reasons: { type: 'array', items: { type: 'string' } },
    receipt: { type: ['string', 'null'] },
    call: { type: ['string', 'null'] },
    created_at: TIMESTAMP,
    expires_at: TIMESTAMP,
    input: { description: 'Shown only while pending' },
  },
};

/** What POST /v0/calls (and an approval that runs) answers: output and receipt, 202 on its way, or a refusal. */
export const CALL_ANSWER: JsonSchema = {
  type: 'object',
  properties: {
    output: { description: 'The agent’s output, valid against its interface.output; null once collected, or on a replay' },
    receipt: RECEIPT,
    call: { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string' }, status: { type: 'string' } } },
    status: { type: 'string' },
    approval: APPROVAL,
    replayed: { type: 'boolean' },
    error: ERROR_BODY,
  },
};

export const BALANCE: JsonSchema = {
  type: 'object',
  required: ['currency', 'balance'],
  properties: { account: { type: 'string' }, currency: { type: 'string' }, balance: AMOUNT, held: AMOUNT, available: AMOUNT },
};

/** A key as shown once at creation: `{prefix, key, …}`. */
export const MINTED_KEY: JsonSchema = {
  type: 'object',
  required: ['key'],
  properties: {
    key: { type: 'string', examples: ['hlk_a_…'] },
    prefix: { type: 'string' },
    kind: { type: 'string' },
    mandate: { type: ['string', 'null'] },
    ask_in_client: { type: 'boolean' },
    expires_at: { type: ['string', 'null'] },
    note: { type: 'string' },
  },
};

/** Any JSON object the route documents in words (a shape owned by shared/, with fields listed in its description). */
export function object(description: string, properties: Record<string, unknown> = {}, required: readonly string[] = []): JsonSchema {
  return { type: 'object', description, properties, ...(required.length ? { required } : {}) };
}

/** The components of the document: each named object, wherever a route uses it, becomes a `$ref`. */
export const NAMED_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Error: ERROR,
  Problem: PROBLEM,
  Receipt: RECEIPT,
  MandateView: MANDATE_VIEW,
  MandateDocument: MANDATE_DOCUMENT,
  Approval: APPROVAL,
  CallAnswer: CALL_ANSWER,
  Balance: BALANCE,
  MintedKey: MINTED_KEY,
};

/** A response whose body is the error shape. */
export function failure(description: string, code?: string): ResponseSpec {
  return { description: code ? `${description} (\`${code}\`)` : description, schema: ERROR };
}
