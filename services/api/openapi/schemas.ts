/**
 * Schemas shared by the route table: the pieces request bodies are made of (validated by body-reader.ts `bodyReader`,
 * with the gateway's own wording for each problem) and the answers' shapes (the error shape of gateway.md, receipts,
 * mandates, approvals). The document builder (document.ts) lists the named ones under `components.schemas` and points
 * at them with `$ref` wherever a route uses the very same object.
 *
 * Body keywords beyond JSON Schema, understood by body-reader.ts and kept in the document as extensions:
 *   x-amount: {allowZero}   a decimal amount string, checked by shared/core/money.ts (its message)
 *   x-url: true             an absolute http(s) URL without credentials
 *   x-messages: {keyword: message}   the problem's wording when that keyword fails
 */
import type { ErrorCode } from '../../../shared/core/errors.js';
import type { JsonSchema, ResponseSpec } from './operations.js';

/** A non-empty string of at most `max` characters ("must be a non-empty string", "must be at most N characters"). */
export function text(max: number, description?: string, extra: JsonSchema = {}): JsonSchema {
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
export const NULLABLE_TIMESTAMP: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

export const PROBLEM: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['path', 'message'],
  properties: {
    path: { type: 'string', description: 'Where, as a JSON path: `$.input.text`, `query.limit`' },
    message: { type: 'string' },
  },
};

/** Every refusal and failure: `{error: {code, message, problems?}}` (DESIGN §4; services/api/app.ts). */
export const ERROR_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Stable snake_case code (gateway.md, manifest.md §3)', examples: ['invalid_request'] },
    message: { type: 'string', description: 'Plain words' },
    problems: { type: 'array', items: PROBLEM, description: 'Every problem of a bad request, with its path' },
  },
};

/** The statuses of a receipt (spec receipts.md), of the call it records. */
export const RECEIPT_STATUSES = ['succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval'] as const;

export const ERROR: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: ERROR_BODY,
    receipt: { $ref: '#/components/schemas/Receipt', description: 'Refused calls get a receipt too (DESIGN §3.6)' },
    status: { enum: RECEIPT_STATUSES, description: 'A refused call replayed under its Idempotency-Key: its receipt’s status' },
    replayed: { const: true, description: 'A refused call replayed under its Idempotency-Key (the first answer, again)' },
  },
};

/** A stable code: one of the gateway's (snake_case) (manifest.md §3, gateway.md) or an error the agent's manifest declares. */
const ERROR_CODE: JsonSchema = {
  type: 'string',
  minLength: 1,
  description:
    'The gateway’s own codes (`timeout`, `invalid_output`, `agent_error`, `runtime_unavailable`, `gateway_error`, `gateway_restarted`, `cancelled`, `undeclared_error`, `child_failed`, `hire_failed`, `file_not_found`, …) or an error the agent’s manifest declares in `interface.errors`',
  examples: ['timeout', 'invalid_output'],
};

const COST: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['own', 'downstream', 'total'],
  properties: {
    own: { ...AMOUNT, description: 'What this call charged for its own work' },
    downstream: { ...AMOUNT, description: 'Σ of its children’s totals it passed through' },
    total: { ...AMOUNT, description: 'own + downstream' },
  },
};

const SPLIT: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['to', 'amount'],
  properties: { to: { type: 'string', description: 'An account: the author, `holon` (the fee), an upstream author' }, amount: AMOUNT },
};

/** The platform's rate between two currencies (HOLON_FX), as a 402 and a receipt show it. */
export const FX_RATE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'rate'],
  description: 'The platform’s rate from the agent’s currency into the payment’s (1 `from` = `rate` `to`)',
  properties: { from: { type: 'string' }, to: { type: 'string' }, rate: { type: 'string' } },
};

/** How a call paid from outside was paid (shared/receipts/store.ts `ReceiptPayment`, docs/payments.md). */
const RECEIPT_PAYMENT: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scheme', 'network', 'payer', 'amount', 'currency', 'transaction'],
  description: 'A call paid from outside (x402 or MPP): how it was paid; signed with the receipt',
  properties: {
    scheme: { type: 'string', description: 'The x402 scheme: `exact` or `upto`', examples: ['upto'] },
    network: { type: 'string', description: 'The chain, CAIP-2', examples: ['eip155:8453'] },
    payer: { type: 'string', description: 'The paying wallet' },
    amount: { ...AMOUNT, description: 'What was collected, in `currency` (0 when nothing was)' },
    currency: { type: 'string' },
    transaction: { type: ['string', 'null'], description: 'The transaction that collected it; null when nothing was collected' },
    rate: FX_RATE,
  },
};

/**
 * A receipt tree (spec receipts.md; shared/receipts/store.ts `ReceiptView`): children are receipts, named by
 * `child` (a `$ref` to this very schema where it lives: the OpenAPI document's component, an MCP tool's `$defs`).
 * The one definition of the receipt's shape, for REST and MCP alike.
 */
export function receiptSchema(child: JsonSchema): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'parent',
      'mandate',
      'caller',
      'agent',
      'status',
      'reasons',
      'worst_case',
      'currency',
      'payer',
      'sub_mandate',
      'billed',
      'cost',
      'splits',
      'approval',
      'children',
      'duration_ms',
      'created_at',
      'signature',
    ],
    properties: {
      id: { type: 'string' },
      parent: { type: ['string', 'null'], description: 'The receipt of the call that made this one' },
      mandate: { type: ['string', 'null'], description: 'The mandate used (null when the request named none that exists)' },
      caller: { type: ['string', 'null'], description: 'Which agent acted under the mandate' },
      agent: {
        type: ['string', 'null'],
        description: 'The exact agent and version resolved; what was asked for otherwise',
        examples: ['holon-labs/csv-profile@1.0.0'],
      },
      status: { enum: [...RECEIPT_STATUSES] },
      error: ERROR_CODE,
      reasons: { type: 'array', items: { type: 'string' }, description: 'Why it was refused or held, in plain words' },
      worst_case: { type: ['string', 'null'], pattern: AMOUNT.pattern as string, description: 'The ceiling reserved before the run' },
      currency: { type: ['string', 'null'] },
      payer: { type: ['string', 'null'], description: 'The account charged' },
      sub_mandate: { type: ['string', 'null'], description: 'The sub-mandate its children ran under (a delegated run)' },
      billed: { type: 'boolean' },
      cost: COST,
      splits: { type: 'array', items: SPLIT, description: 'Who was paid: the author, the platform fee, upstream authors of forks' },
      approval: { type: ['string', 'null'], description: 'The approval that unlocked the call' },
      children: { type: 'array', items: child, description: 'The receipts of the calls it made, as trees' },
      duration_ms: { type: ['integer', 'null'], minimum: 0 },
      created_at: TIMESTAMP,
      payment: RECEIPT_PAYMENT,
      delivered: {
        type: 'object',
        additionalProperties: false,
        required: ['chunks', 'units'],
        description: 'A call that streamed or asked its caller (docs/lifecycle.md): the chunks and units it delivered before it ended',
        properties: { chunks: { type: 'integer', minimum: 0 }, units: { type: 'string', pattern: '^[0-9]+$' } },
      },
      ended_by: {
        enum: ['completed', 'budget', 'cancelled', 'disconnected', 'no_answer', 'error', 'timeout'],
        description: 'How a call that streamed or asked ended; with `delivered`, what decides its bill (docs/lifecycle.md)',
      },
      signature: {
        type: ['string', 'null'],
        pattern: '^[A-Za-z0-9_-]+\\.\\.[A-Za-z0-9_-]+$',
        description:
          'The gateway’s signature of this receipt: a compact JWS with a detached payload (`header..signature`, EdDSA, `typ` `holon-receipt`) over the RFC 8785 canonical JSON of every field but `signature` and `children` (docs/receipts.md); verify it with /.well-known/jwks.json. Null only for a receipt written before receipts were signed',
      },
    },
  };
}

export const RECEIPT: JsonSchema = receiptSchema({ $ref: '#/components/schemas/Receipt' });

/** A stored mandate and its budget (shared/mandates/store.ts `mandateView`). */
export const MANDATE_VIEW = {
  type: 'object',
  properties: {
    mandate: { $ref: '#/components/schemas/MandateDocument', description: 'The mandate document (spec mandate.md)' },
    budget: {
      type: 'object',
      additionalProperties: false,
      required: ['currency', 'total', 'spent', 'reserved', 'remaining'],
      properties: { currency: { type: 'string' }, total: AMOUNT, spent: AMOUNT, reserved: AMOUNT, remaining: AMOUNT },
    },
    statement: {
      type: ['object', 'null'],
      description:
        'What the gateway signed when it stored the mandate (docs/receipts.md "Signed mandates"): the document as stored, the authenticated issuer, the time, and a sub-mandate’s parent with the SHA-256 of its statement. Null for a mandate stored before mandates were signed',
      required: ['mandate', 'issuer', 'signed_at', 'parent'],
      properties: {
        mandate: { $ref: '#/components/schemas/MandateDocument', description: 'The document as stored (the `mandate` above, before any revocation)' },
        issuer: { type: 'string' },
        signed_at: TIMESTAMP,
        parent: {
          type: ['object', 'null'],
          required: ['id', 'sha256'],
          properties: { id: { type: 'string' }, sha256: { type: ['string', 'null'], description: 'base64url SHA-256 of the parent’s statement (RFC 8785)' } },
        },
      },
    },
    signature: {
      type: ['string', 'null'],
      description: 'A compact JWS with a detached payload (EdDSA, `typ` `holon-mandate`) over the RFC 8785 canonical JSON of `statement`',
    },
  },
  required: ['mandate', 'budget', 'statement', 'signature'],
  additionalProperties: false,
} satisfies JsonSchema;

const PATTERNS: JsonSchema = { type: 'array', items: { type: 'string' }, description: 'Patterns: `ns/*`, `ns/name`, `text.*`' };
/** A decimal rate as text (`"0.92"`); the validator also reads a JSON number. */
const RATE: JsonSchema = { type: ['string', 'number'], examples: ['0.92'] };

/**
 * A mandate document (spec mandate.md): what is POSTed, and the normalized document `GET /v0/mandates/{ns}/{name}`
 * answers. Validated by shared/core/mandate/validate.ts (every field it knows is here; any other is "not a known
 * field"), described here, closed at every level as the validator is.
 */
export const MANDATE_DOCUMENT: JsonSchema = {
  type: 'object',
  description:
    'A root mandate (spec mandate.md §1–2), validated by shared/core/mandate/validate.ts with every problem listed. Hosted: the id is put in your namespace, the issuer is you, the grantee `<handle>/…`, the currency EUR and `fx` the platform’s.',
  required: ['id', 'grantee', 'allow', 'budget'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', examples: ['alice/sandbox-2'] },
    issuer: { type: 'string' },
    grantee: { type: 'string', examples: ['alice/assistant'] },
    parent: { type: 'string', readOnly: true, description: 'A sub-mandate’s parent mandate id (set by the gateway)' },
    depth: { type: 'integer', minimum: 1, readOnly: true, description: 'A sub-mandate’s depth (set by the gateway; absent at 0)' },
    allow: {
      type: 'object',
      additionalProperties: false,
      properties: { agents: PATTERNS, capabilities: PATTERNS, published: { type: 'boolean' } },
    },
    deny: { type: 'object', additionalProperties: false, properties: { agents: PATTERNS, capabilities: PATTERNS } },
    require: {
      type: 'object',
      additionalProperties: false,
      properties: {
        license: {
          description: '`any`, `open-source`, or a list of SPDX ids',
          oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
        },
        data: {
          type: 'object',
          additionalProperties: false,
          properties: {
            retention: { type: 'string', description: '`none` or days: `30d`' },
            region: { type: 'array', items: { type: 'string' } },
            training: { type: 'boolean' },
          },
        },
        evaluated: { type: 'boolean' },
        min_success_rate: RATE,
      },
    },
    approval: {
      type: 'object',
      additionalProperties: false,
      properties: { above: AMOUNT, agents: PATTERNS, first_use: { type: 'boolean' } },
    },
    budget: {
      type: 'object',
      required: ['total'],
      additionalProperties: false,
      properties: {
        total: AMOUNT,
        currency: { type: 'string' },
        per_call: AMOUNT,
        fx: {
          type: 'object',
          description: 'Exchange rates into the budget’s currency, by currency code (`{"USD": "0.92"}`)',
          additionalProperties: RATE,
        },
      },
    },
    delegation: { type: 'object', additionalProperties: false, properties: { max_depth: { type: 'integer', minimum: 0 } } },
    expires_at: TIMESTAMP,
    revoked: { type: 'boolean', readOnly: true, description: 'Revoked (set by the gateway)' },
  },
  'x-holon-validated-by': 'shared/core/mandate/validate.ts',
};

export const APPROVAL: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'status',
    'mandate',
    'agent',
    'input_sha256',
    'max_cost',
    'worst_case',
    'currency',
    'reasons',
    'receipt',
    'call',
    'created_at',
    'expires_at',
  ],
  properties: {
    id: { type: 'string' },
    status: { enum: ['pending', 'approved', 'rejected', 'expired', 'used'] },
    mandate: { type: 'string' },
    agent: { type: 'string', description: 'The exact agent and version: `ns/name@1.0.0`' },
    input_sha256: { type: 'string', description: 'SHA-256 of the canonical JSON of the input it binds' },
    max_cost: { type: ['string', 'null'], pattern: AMOUNT.pattern as string },
    worst_case: AMOUNT,
    currency: { type: 'string' },
    reasons: { type: 'array', items: { type: 'string' } },
    receipt: { type: ['string', 'null'], description: 'The receipt of the held request' },
    call: { type: ['string', 'null'] },
    created_at: TIMESTAMP,
    expires_at: TIMESTAMP,
    input: { description: 'The input it would send: shown only while pending, deleted once decided' },
  },
};

export const BALANCE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['currency', 'balance'],
  properties: { account: { type: 'string' }, currency: { type: 'string' }, balance: AMOUNT, held: AMOUNT, available: AMOUNT },
};

/** A key as shown once at creation (shared/accounts/keys.ts `MintedKey`; POST /v0/keys adds a `note`). */
export const MINTED_KEY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'prefix', 'kind', 'mandate', 'ask_in_client', 'expires_at'],
  properties: {
    key: { type: 'string', examples: ['hlk_a_…'], description: 'Shown once: the gateway keeps only its hash' },
    prefix: { type: 'string', description: 'Names the key in lists and in DELETE /v0/keys/{prefix}' },
    kind: { enum: ['human', 'agent'] },
    mandate: { type: ['string', 'null'], description: 'An agent key’s one mandate' },
    ask_in_client: { type: 'boolean' },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'A human key from a GitHub sign-in expires after 30 days' },
    note: { type: 'string' },
  },
};

/** A key as GET /v0/me lists it (shared/accounts/keys.ts `keyView`): never the key itself. */
export const KEY_VIEW: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['prefix', 'kind', 'mandate', 'ask_in_client', 'state', 'created_at', 'expires_at', 'revoked_at', 'client'],
  properties: {
    prefix: { type: 'string' },
    kind: { enum: ['human', 'agent'] },
    mandate: { type: ['string', 'null'] },
    ask_in_client: { type: 'boolean' },
    state: { enum: ['active', 'expired', 'revoked'] },
    created_at: TIMESTAMP,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    client: {
      description:
        'The MCP client an agent key was issued to by signing in from it (docs/mcp.md): its client ID (the URL of its metadata document) and name; null for a key minted otherwise',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'name'],
          properties: {
            id: { type: 'string', format: 'uri' },
            name: { type: 'string', description: 'As the client names itself: its own words, not checked' },
          },
        },
      ],
    },
  },
};

const KEY_SET_ENTRY: JsonSchema = closed(
  'An Ed25519 public key (RFC 8037) of the gateway, never its private part',
  {
    kty: { const: 'OKP' },
    crv: { const: 'Ed25519' },
    x: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'The public key, base64url' },
    kid: { type: 'string', description: 'Its RFC 7638 thumbprint (SHA-256, base64url): the kid of what it signs' },
    alg: { const: 'EdDSA' },
    use: { const: 'sig' },
    retired_at: { ...TIMESTAMP, description: 'A retired key: when it stopped signing; absent on the current key' },
  },
  ['retired_at'],
);

/** GET /.well-known/jwks.json: the current signing key first, then the retired ones. */
export const KEY_SET: JsonSchema = exact('A JSON Web Key Set (RFC 7517)', { keys: { type: 'array', minItems: 1, items: KEY_SET_ENTRY } }, ['keys']);

/** Any JSON object the route documents in words (a shape owned by shared/, with fields listed in its description). */
export function object(description: string, properties: Readonly<Record<string, JsonSchema>> = {}, required: readonly string[] = []): JsonSchema {
  return { type: 'object', description, properties, ...(required.length ? { required } : {}) };
}

/** An object whose every field is listed here (`additionalProperties: false`): a field added without documenting it fails the tests. */
export function exact(description: string, properties: Readonly<Record<string, JsonSchema>>, required: readonly string[] = []): JsonSchema {
  return { ...object(description, properties, required), additionalProperties: false };
}

/** `exact` with every field required but the `optional` ones. */
export function closed(description: string, properties: Readonly<Record<string, JsonSchema>>, optional: readonly string[] = []): JsonSchema {
  for (const name of optional) if (!(name in properties)) throw new Error(`${description}: the optional field ${name} is not listed`);
  return exact(
    description,
    properties,
    Object.keys(properties).filter((k) => !optional.includes(k)),
  );
}

/**
 * A response whose body is the error shape, answered with these codes: the document builder checks that each code's
 * status (services/api/http-status.ts, the one map) is the status the response is listed under.
 */
export function failure(description: string, ...codes: ErrorCode[]): ResponseSpec {
  const unnamed = codes.filter((c) => !description.includes(`\`${c}\``));
  return {
    description: unnamed.length ? `${description} (${unnamed.map((c) => `\`${c}\``).join(', ')})` : description,
    schema: ERROR,
    ...(codes.length ? { codes } : {}),
  };
}

const BASE64_HASH: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$', description: 'A SHA-256 hash, base64 (standard, padded)' };

/** A signed checkpoint of the receipt log (shared/receipts/checkpoints.ts). */
export const CHECKPOINT: JsonSchema = exact(
  'A signed checkpoint of the receipt log: C2SP tlog-checkpoint, signed as a C2SP signed note (docs/receipts.md)',
  {
    origin: { type: 'string', description: 'The log’s origin: the first line of the note and its key name' },
    size: { type: 'integer', minimum: 0, description: 'The number of receipts in the tree' },
    root_hash: { ...BASE64_HASH, description: 'The RFC 6962 root hash of the tree of `size` receipts, base64' },
    note: { type: 'string', description: 'The signed note itself, byte for byte what a verifier checks' },
    created_at: TIMESTAMP,
  },
  ['origin', 'size', 'root_hash', 'note', 'created_at'],
);

/** An inclusion proof of one receipt (GET /v0/receipts/{id}/proof). */
export const RECEIPT_PROOF: JsonSchema = exact(
  'Where a receipt is in the log, and the proof of it against a signed checkpoint (RFC 9162 §2.1.3)',
  {
    receipt: { type: 'string', description: 'The receipt id' },
    leaf_index: { type: 'integer', minimum: 0, description: 'Its place in the log: 0 for the first receipt logged' },
    leaf_hash: { ...BASE64_HASH, description: 'SHA-256(0x00 ‖ the receipt’s canonical JSON), base64' },
    inclusion: { type: 'array', items: BASE64_HASH, description: 'The audit path, leaf to root, each hash base64' },
    checkpoint: CHECKPOINT,
  },
  ['receipt', 'leaf_index', 'leaf_hash', 'inclusion', 'checkpoint'],
);

/** A consistency proof between two sizes of the log (GET /v0/log/consistency). */
export const CONSISTENCY_PROOF: JsonSchema = exact(
  'The proof that the tree of `to` receipts extends the tree of `from` (RFC 9162 §2.1.4)',
  {
    from: { type: 'integer', minimum: 0 },
    to: { type: 'integer', minimum: 0 },
    proof: { type: 'array', items: BASE64_HASH, description: 'Each hash base64, in RFC order; empty when from is 0 or equals to' },
  },
  ['from', 'to', 'proof'],
);
