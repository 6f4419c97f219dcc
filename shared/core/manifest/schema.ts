/**
 * The JSON Schema (draft 2020-12) of a manifest document as written (`holon.yaml`, spec/manifest.md).
 *
 * Structural rules only: types, required fields, enums, string patterns, unknown fields.
 * Everything that depends on several fields (pricing model vs. fields, calls vs. downstream, lineage, …),
 * amounts and semantic checks (SemVer, URLs, JSON Schemas of the interface) live in `validate.ts` and `rules/`.
 *
 * Patterns here run on RE2 (see shared/core/schema/ajv.ts): no look-around, no back-references.
 */

import { AGENT_ID_PATTERN, CAPABILITY_PATTERN } from '../identifiers.js';

/** `<namespace>/<name>`: each part 2–39 characters of a-z, 0-9, '-', not starting or ending with '-'. */
const ID_PATTERN = AGENT_ID_PATTERN;
export { CAPABILITY_PATTERN };
/** Semantic Versioning 2.0 (semver.org's regular expression, numbered groups; no leading "v"). */
export const VERSION_PATTERN =
  '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)' +
  '(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?' +
  '(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';
/** `proprietary`, or an SPDX license id ("MIT", "Apache-2.0", "LicenseRef-x"). Expressions are not accepted. */
const LICENSE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9.+-]*$';
/** ISO 4217 style currency code. */
const CURRENCY_PATTERN = '^[A-Z]{3}$';
/** `https://github.com/<owner>/<repo>` */
const REPOSITORY_PATTERN = '^https://github\\.com/[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$';
/** snake_case error codes. */
export const ERROR_CODE_PATTERN = '^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$';
export const ERROR_CODE_RE = new RegExp(ERROR_CODE_PATTERN);
/** The longest error code an agent may report at run time (it lands in receipts). */
const MAX_ERROR_CODE_LENGTH = 64;

/** An error code an agent may report (manifest.md §3: snake_case, at most 64 characters). */
export function isErrorCode(code: string): boolean {
  return code.length <= MAX_ERROR_CODE_LENGTH && ERROR_CODE_RE.test(code);
}
/** `none` or `"<n>d"`, n a positive integer of at most 6 digits. */
const RETENTION_PATTERN = '^(?:none|[1-9][0-9]{0,5}d)$';
/** A region code (`eu`, `us`) or an ISO 3166 alpha-2 country code, any case (normalized to lower case). */
const REGION_PATTERN = '^[A-Za-z]{2}$';

/** Plain-words messages for the patterns above, used instead of ajv's "must match pattern …". */
export const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  [ID_PATTERN]: 'must be "<namespace>/<name>", each part 2 to 39 characters of a-z, 0-9 and "-", not starting or ending with "-"',
  [VERSION_PATTERN]: 'must be a Semantic Versioning 2.0 version such as "1.2.0" (no leading "v")',
  [CAPABILITY_PATTERN]: 'must be a capability class: lowercase words separated by dots, such as "extraction.table"',
  [LICENSE_PATTERN]: 'must be an SPDX license id (such as "MIT") or "proprietary"',
  [CURRENCY_PATTERN]: 'must be an ISO 4217 currency code such as "EUR"',
  [REPOSITORY_PATTERN]: 'must be "https://github.com/<owner>/<repo>"',
  [ERROR_CODE_PATTERN]: 'is not a snake_case error code (lowercase letters, digits and single "_", starting with a letter)',
  [RETENTION_PATTERN]: 'must be "none" or a number of days such as "30d"',
  [REGION_PATTERN]: 'must be a two-letter region or country code such as "eu"',
};

const amount = {
  type: 'string',
  description: 'A decimal string with at most 6 decimals, such as "0.05". Never a JSON number.',
} as const;

const fraction = {
  type: 'string',
  description: 'A decimal fraction in [0, 1) with at most 4 decimals, such as "0.15".',
} as const;

const nonEmptyString = { type: 'string', minLength: 1 } as const;

export const manifestSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://holon.dev/schemas/manifest.json',
  title: 'Holon agent manifest (holon.yaml)',
  type: 'object',
  required: ['id', 'version', 'summary', 'capabilities', 'license', 'interface', 'pricing', 'runtime'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID_PATTERN },
    version: { type: 'string', maxLength: 256, pattern: VERSION_PATTERN },
    summary: { type: 'string', minLength: 1, maxLength: 140 },
    description: { type: 'string' },
    capabilities: {
      type: 'array',
      minItems: 1,
      maxItems: 16,
      items: { type: 'string', maxLength: 128, pattern: CAPABILITY_PATTERN },
    },
    license: { type: 'string', maxLength: 64, pattern: LICENSE_PATTERN },
    source: {
      type: 'object',
      required: ['repository'],
      additionalProperties: false,
      properties: { repository: { type: 'string', pattern: REPOSITORY_PATTERN } },
    },
    lineage: {
      type: 'object',
      required: ['forked_from', 'royalty'],
      additionalProperties: false,
      properties: { forked_from: { type: 'string', maxLength: 512 }, royalty: fraction },
    },
    forks: {
      type: 'object',
      additionalProperties: false,
      properties: { min_royalty: fraction, allowed: { type: 'boolean' } },
    },
    interface: {
      type: 'object',
      required: ['input', 'output'],
      additionalProperties: false,
      properties: {
        input: { type: 'object', description: 'A JSON Schema (draft 2020-12), at most 64 KB.' },
        output: { type: 'object', description: 'A JSON Schema (draft 2020-12), at most 64 KB.' },
        stream: {
          type: 'object',
          required: ['chunk'],
          additionalProperties: false,
          description: 'The agent streams its output: each chunk it emits is checked against `chunk`.',
          properties: { chunk: { type: 'object', description: 'A JSON Schema (draft 2020-12) for one chunk, at most 64 KB.' } },
        },
        errors: {
          type: 'object',
          propertyNames: { pattern: ERROR_CODE_PATTERN },
          additionalProperties: {
            type: 'object',
            required: ['description'],
            additionalProperties: false,
            properties: { description: { type: 'string' }, billed: { type: 'boolean' } },
          },
        },
        examples: {
          type: 'array',
          items: {
            type: 'object',
            required: ['input'],
            additionalProperties: false,
            properties: { input: true, output: true, error: { type: 'string' } },
          },
        },
      },
    },
    pricing: {
      type: 'object',
      required: ['model'],
      additionalProperties: false,
      properties: {
        model: { enum: ['free', 'per_run', 'per_unit', 'quote'] },
        currency: { type: 'string', pattern: CURRENCY_PATTERN },
        amount,
        unit: { type: 'string', minLength: 1, maxLength: 64 },
        max: amount,
        charge_on: { enum: ['success', 'attempt'] },
      },
    },
    calls: {
      type: 'array',
      items: {
        type: 'object',
        required: ['max_cost'],
        additionalProperties: false,
        properties: {
          capability: { type: 'string', maxLength: 128, pattern: CAPABILITY_PATTERN },
          agent: { type: 'string', maxLength: 512 },
          max_cost: amount,
        },
      },
    },
    downstream: {
      type: 'object',
      required: ['mode'],
      additionalProperties: false,
      properties: { mode: { enum: ['passthrough', 'included'] }, cap: amount },
    },
    runtime: {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      properties: {
        kind: { enum: ['mcp', 'webhook', 'a2a', 'node'] },
        endpoint: { type: 'string', maxLength: 2048 },
        tool: { ...nonEmptyString, maxLength: 128 },
        skill: { ...nonEmptyString, maxLength: 128 },
        limits: {
          type: 'object',
          additionalProperties: false,
          properties: { timeout_s: { type: 'integer', minimum: 1, maximum: 300 } },
        },
      },
    },
    data: {
      type: 'object',
      additionalProperties: false,
      properties: {
        retention: { type: 'string', pattern: RETENTION_PATTERN },
        region: { type: 'array', items: { type: 'string', pattern: REGION_PATTERN } },
        training: { type: 'boolean' },
        subprocessors: { type: 'array', items: { ...nonEmptyString, maxLength: 200 } },
      },
    },
  },
} as const;
