/**
 * The catalogue's answers (shared/catalogue/: catalogue.ts, catalog-page.ts, agent-record.ts, evaluations.ts), exact:
 * the agent card every list shows, the search result (with and without a mandate), the one-agent view, the public
 * catalogue page, the Agent Record and the evaluation views. The one definition of each shape: REST (the route
 * table) and the MCP tools' output schemas (services/api/mcp/schemas.ts) are built from these.
 */
import type { JsonSchema } from './operations.js';
import { EVALUATION_SUMMARY, STANDINGS } from './evaluation-schemas.js';
import { AMOUNT, closed } from './schemas.js';

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const INTEGER: JsonSchema = { type: 'integer', minimum: 0 };
const MS: JsonSchema = { type: ['integer', 'null'], minimum: 0 };
const RATE: JsonSchema = { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'successes ÷ runs, 4 decimals; null without runs' };
const STRINGS: JsonSchema = { type: 'array', items: { type: 'string' } };
const PAYERS: JsonSchema = {
  type: 'integer',
  minimum: 0,
  description: 'Distinct accounts that paid for the runs (who paid for each delegation tree); the author’s own calls are never counted',
};
const COUNTED_PAYERS: JsonSchema = {
  type: 'integer',
  minimum: 0,
  description:
    'Those of the payers that count toward ranking and require.min_success_rate: on a hosted gateway, accounts linked to GitHub or funded from outside the platform (not sign-up credit) for at least what they spent on the version; on a dev gateway, every payer',
};

// ---------------------------------------------------------------------------------------------------------
// The Agent Record (agent-record.ts says what each figure means)

export const RECORD_SUMMARY = closed('The compact all-time record of one version, as Holon measured it', {
  runs: INTEGER,
  successes: INTEGER,
  payers: PAYERS,
  counted_payers: COUNTED_PAYERS,
  success_rate: RATE,
  latency_p50_ms: MS,
  cost_per_successful_run: nullable(AMOUNT),
  currency: { type: ['string', 'null'] },
});

const LATENCY = closed('Nearest-rank percentiles of observed latencies, whole ms', { p50: MS, p95: MS });

const CURRENCY_RECORD = closed('One currency’s runs of the window', {
  currency: { type: 'string' },
  runs: INTEGER,
  successes: INTEGER,
  billed_total: AMOUNT,
  cost_per_successful_run: nullable(AMOUNT),
});

export const WINDOW_RECORD = closed(
  'One scope (a version, or the agent) over one window',
  {
    runs: INTEGER,
    successes: INTEGER,
    payers: PAYERS,
    counted_payers: COUNTED_PAYERS,
    success_rate: RATE,
    latency_ms: LATENCY,
    currency: { type: ['string', 'null'], description: 'The currency of the window’s runs (the one with most runs when several)' },
    billed_total: AMOUNT,
    cost_per_successful_run: nullable(AMOUNT),
    errors: { type: 'object', additionalProperties: INTEGER, description: 'Runs per error code' },
    by_currency: { type: 'array', items: CURRENCY_RECORD, description: 'Only when the window’s runs were settled in several currencies' },
  },
  ['by_currency'],
);

export const AGENT_RECORD = closed('The Agent Record: what Holon measured', { last_30_days: WINDOW_RECORD, all_time: WINDOW_RECORD });

const SAMPLE = closed('HOLON_RECORDS only, while the agent has no measured run: the operator’s sample figures, not measurements', {
  source: { const: 'sample' },
  note: { type: 'string' },
  runs: INTEGER,
  success_rate: RATE,
  latency_ms: LATENCY,
  currency: { type: ['string', 'null'] },
  cost_per_successful_run: nullable(AMOUNT),
});

// ---------------------------------------------------------------------------------------------------------
// Agents

const PRICE_FIELDS = {
  model: { enum: ['free', 'per_run', 'per_unit', 'quote'] },
  currency: { type: 'string' },
  amount: AMOUNT,
  unit: { type: 'string' },
  max: AMOUNT,
};

export const PRICING = closed('The price as declared, in the agent’s own currency', { ...PRICE_FIELDS, charge_on: { enum: ['success', 'attempt'] } }, [
  'amount',
  'unit',
  'max',
]);

const PRICE_IN_MANDATE = nullable(
  closed('The list price in the mandate’s currency (rounded up); null without a rate', PRICE_FIELDS, ['amount', 'unit', 'max']),
);

export const DATA_POLICY = closed('The data policy as the author declared it: attested, not verified; an undeclared field is null', {
  attested: { const: true },
  retention: { type: ['string', 'null'], description: '`none` or `<days>d`' },
  region: { anyOf: [STRINGS, { type: 'null' }] },
  training: { type: ['boolean', 'null'] },
  subprocessors: { anyOf: [STRINGS, { type: 'null' }] },
  note: { type: 'string' },
});

const A2A_RUNTIME = closed('An A2A agent: the skill its version offers, and what the card kept at publish says (null: not published)', {
  skill: { type: 'string' },
  card: {
    anyOf: [
      closed('The kept card’s own words (the author’s, as text)', {
        name: { type: 'string' },
        description: { type: 'string' },
        skill_name: { type: 'string' },
        skill_description: { type: 'string' },
      }),
      { type: 'null' },
    ],
  },
});

export const RUNTIME = closed(
  'Where it runs: a remote runtime (mcp, webhook, a2a) is attested by its author',
  { kind: { enum: ['mcp', 'webhook', 'a2a', 'node'] }, attested: { type: 'boolean' }, note: { type: 'string' }, a2a: A2A_RUNTIME },
  ['note', 'a2a'],
);

const CARD_FIELDS = {
  id: { type: 'string', examples: ['holon-labs/csv-profile'] },
  version: { type: 'string' },
  summary: { type: 'string' },
  capabilities: STRINGS,
  license: { type: 'string', description: 'An SPDX expression, or `proprietary`' },
  origin: { enum: ['shipped', 'published'] },
  pricing: PRICING,
  record: RECORD_SUMMARY,
  data: DATA_POLICY,
  runtime: RUNTIME,
  evaluation: EVALUATION_SUMMARY,
};

/** An agent as lists show it (catalogue.ts `agentView`). */
export const AGENT_CARD = closed('An agent version as lists show it: declared (pricing, data, runtime) and measured (record)', CARD_FIELDS);

const RANKED_AGENT = closed(
  'An agent the mandate admits',
  {
    ...CARD_FIELDS,
    price: PRICE_IN_MANDATE,
    worst_case: { ...nullable(AMOUNT), description: 'The ceiling a call would reserve, in the mandate’s currency; null without a rate' },
    cost_per_successful_run: { ...AMOUNT, description: 'A capability search: the ranking estimate, in the mandate’s currency' },
    decision: { enum: ['allow', 'approve'], description: '`approve`: a call needs a human decision first' },
  },
  ['cost_per_successful_run'],
);

const DENIED_AGENT = closed('An agent the mandate does not allow, and why', { id: { type: 'string' }, version: { type: 'string' }, reasons: STRINGS });

/** A search under a mandate (and MCP search_agents, always under the connection's mandate). */
export const MANDATE_SEARCH = closed('Ranked under a mandate: costs in its currency, and the agents it does not allow listed apart', {
  currency: { type: 'string' },
  agents: { type: 'array', items: RANKED_AGENT },
  denied: { type: 'array', items: DENIED_AGENT },
});

export const SEARCH_RESULT: JsonSchema = {
  oneOf: [closed('Without a mandate', { agents: { type: 'array', items: AGENT_CARD } }), MANDATE_SEARCH],
};

const DECLARED_ERROR = closed('A declared error', { description: { type: 'string' }, billed: { type: 'boolean' } }, ['description']);

const VERSION_ENTRY = closed('A listed version and its own record', {
  version: { type: 'string' },
  record: RECORD_SUMMARY,
  records: AGENT_RECORD,
  evaluation: { enum: [...STANDINGS] },
});

/** One agent (catalogue.ts `describeAgent`; MCP get_agent). */
export const AGENT_VIEW = closed(
  'One agent version: declared, measured, and every listed version',
  {
    ...CARD_FIELDS,
    description: { type: ['string', 'null'] },
    interface: closed('The interface as declared', {
      input: { type: 'object', description: 'The JSON Schema an input must match' },
      output: { type: 'object', description: 'The JSON Schema of a success’s output' },
      errors: { type: 'object', additionalProperties: DECLARED_ERROR, description: 'The errors the author declares, by code' },
      examples: { type: 'array', items: { type: 'object', required: ['input'] } },
    }),
    example_input: { description: 'An input to start from (the first succeeding example’s), or null' },
    records: closed('The Agent Record of this version and of the agent as a whole', { version: AGENT_RECORD, agent: AGENT_RECORD }),
    sample: SAMPLE,
    manifest: { type: 'object', description: 'The manifest as published (spec manifest.md)' },
    versions: { type: 'array', items: VERSION_ENTRY, description: 'Every listed version' },
  },
  ['sample'],
);

const CATALOG_ENTRY = closed(
  'One agent of the public catalogue: its latest version declared, the agent as a whole measured',
  {
    ...CARD_FIELDS,
    proprietary: { type: 'boolean' },
    latest_version: { type: 'string' },
    measured: AGENT_RECORD,
    sample: SAMPLE,
    versions: {
      type: 'array',
      items: closed('A listed version', { version: { type: 'string' }, record: RECORD_SUMMARY, evaluation: { enum: [...STANDINGS] } }),
      description: 'Every listed version, newest first',
    },
  },
  ['sample'],
);

export const CATALOG_PAGE = closed('A page of the catalogue, by agent id', {
  agents: { type: 'array', items: CATALOG_ENTRY },
  total: INTEGER,
  limit: { type: 'integer', minimum: 1 },
  next_cursor: { type: ['string', 'null'], description: 'The next page’s `cursor`; null on the last page' },
});
