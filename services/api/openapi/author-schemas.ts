/**
 * The exact answers of the author's routes (publishing, drafts, endpoint credentials, GET /v0/me/agents), of a
 * call's webhook delivery, of files, of sign-up and sign-in, and of the operator's moderation routes. Each shape is
 * read from the shared/ code that builds the answer (named on each); every object whose shape is ours says
 * `additionalProperties: false`, and `required` lists every field that is always present. Author-supplied content
 * (a manifest document, an agent's output, a suite's expectation) stays open.
 */
import { manifestSchema } from '../../../shared/core/manifest/index.js';
import type { JsonSchema } from './operations.js';
import { EVALUATION_SUITE, EVALUATION_SUMMARY } from './evaluation-schemas.js';
import { AMOUNT, closed, MANDATE_VIEW, MINTED_KEY, NULLABLE_TIMESTAMP, TIMESTAMP } from './schemas.js';

const COUNT: JsonSchema = { type: 'integer', minimum: 0 };
const STRINGS: JsonSchema = { type: 'array', items: { type: 'string' } };
/** A moderation_log id (bigserial), as a string. */
const LOG_ID: JsonSchema = { type: 'string', pattern: '^[1-9][0-9]*$', description: 'The moderation log entry (GET /v0/admin/log)' };
const WEBHOOK_SECRET: JsonSchema = { type: 'string', pattern: '^whsec_', description: 'Shown once: verifies the signatures of webhook deliveries' };

/** Amounts by currency, `{"EUR": "0.05"}` (shared/catalogue/earnings.ts `view`): never converted or summed across currencies. */
const AMOUNTS_BY_CURRENCY: JsonSchema = {
  type: 'object',
  additionalProperties: AMOUNT,
  description: 'Amounts by currency (the settlement currency), formatted; an empty object when there are none',
};

// ---------------------------------------------------------------------------------------------------------
// Endpoint credentials (shared/publishing/credentials.ts `CredentialView`): never the token

export const CREDENTIAL_SET = closed('Set', { set: { const: true }, set_at: TIMESTAMP });
export const CREDENTIAL_UNSET = closed('Not set', { set: { const: false } });
export const CREDENTIAL_STATE: JsonSchema = { description: 'Whether a credential is set (never the token)', oneOf: [CREDENTIAL_SET, CREDENTIAL_UNSET] };

/** PUT and DELETE /v0/agents/{ns}/{name}/credential. */
export function credentialAnswer(state: JsonSchema): JsonSchema {
  return closed('The agent and its credential state', { agent: { type: 'string', examples: ['alice/tables'] }, credential: state });
}

// ---------------------------------------------------------------------------------------------------------
// Publishing (shared/publishing/publish.ts, shared/publishing/moderation.ts, shared/evaluation/rerun.ts)

/** POST /v0/agents → 201 (`Published`). */
export const PUBLISHED = closed('The listed version', {
  agent: { type: 'string', examples: ['alice/tables'] },
  version: { type: 'string', examples: ['1.0.0'] },
  author: { type: 'string', description: 'Your handle' },
  license: { type: 'string', description: 'An SPDX expression, or `proprietary`' },
  source: {
    description: 'The GitHub repository checked now (`owner/repo`, as GitHub names it), or `proprietary`: no code was checked',
    oneOf: [{ const: 'proprietary' }, closed('The repository checked', { repository: { type: 'string', examples: ['alice/tables'] } })],
  },
  listed: { const: true },
  evaluation: closed('The evaluations queued for it', {
    status: { enum: ['pending', 'none'], description: '`none`: no suite applies to its capabilities' },
    suites: { ...STRINGS, description: 'The capabilities whose suites were queued' },
  }),
});

/** A yank, by its author or the operator (`Yanked`). */
export const YANKED = closed('The yanked version, as logged', {
  agent: { type: 'string' },
  version: { type: 'string' },
  reason: { type: 'string' },
  yanked_by: { type: 'string', description: 'The author’s handle, `admin` or `operator`' },
  yanked_at: TIMESTAMP,
  log_id: LOG_ID,
  announced: { type: 'boolean', description: 'False when other processes could not be told (they hide it at their next start-up)' },
});

/** POST /v0/agents/{ns}/{name}@{version}/evaluate → 202 (`rerunEvaluation`). */
export const RERUN = closed('The re-run, queued', {
  agent: { type: 'string' },
  version: { type: 'string' },
  evaluation: closed('The latest run of each suite, the new ones among them', {
    status: { const: 'pending' },
    suites: { type: 'array', items: EVALUATION_SUITE },
  }),
});

/** POST /v0/agents/draft (shared/publishing/draft.ts `Draft`): the manifest validates (shared/core/manifest/validate.ts). */
export const DRAFT = closed('A draft listing: nothing is stored or published', {
  manifest: manifestSchema,
  yaml: { type: 'string', description: 'The same manifest as holon.yaml' },
});

// ---------------------------------------------------------------------------------------------------------
// GET /v0/me/agents (shared/catalogue/earnings.ts `authorAgents`)

const AUTHOR_VERSION = closed('One of your published versions, listed or yanked, and what it earned', {
  agent: { type: 'string', examples: ['alice/tables'] },
  version: { type: 'string' },
  license: { type: 'string', description: 'An SPDX expression, or `proprietary`' },
  proprietary: { type: 'boolean' },
  listed_at: TIMESTAMP,
  listed: { type: 'boolean', description: 'False once yanked' },
  yanked_at: NULLABLE_TIMESTAMP,
  credential: {
    description: 'Its endpoint credential (never the token); null without HOLON_FILE_SECRET',
    oneOf: [CREDENTIAL_SET, CREDENTIAL_UNSET, { type: 'null' }],
  },
  evaluation: EVALUATION_SUMMARY,
  earnings: closed('What this version earned, from the journal', {
    paid_calls: { ...COUNT, description: 'Calls to this version that credited you' },
    fork_calls: { ...COUNT, description: 'Calls to forks of it that paid you royalties' },
    share: AMOUNTS_BY_CURRENCY,
    royalties: AMOUNTS_BY_CURRENCY,
    total: AMOUNTS_BY_CURRENCY,
  }),
});

export const AUTHOR_AGENTS = closed(
  'Your versions and earnings',
  {
    account: { type: 'string' },
    versions: { type: 'array', items: AUTHOR_VERSION },
    totals: closed('Your earnings over every version, by currency', {
      share: AMOUNTS_BY_CURRENCY,
      royalties: AMOUNTS_BY_CURRENCY,
      unattributed: { ...AMOUNTS_BY_CURRENCY, description: 'Credits neither rule places (empty in practice): kept apart, never dropped' },
      total: AMOUNTS_BY_CURRENCY,
    }),
    journal_total: { ...AMOUNTS_BY_CURRENCY, description: 'Σ of your positive lines in settle journal entries: always equal to `totals.total`' },
    credentials_note: { type: 'string', description: 'Present when the gateway has no HOLON_FILE_SECRET (every `credential` is then null)' },
    definition: { type: 'string', description: 'What counts as earned, in words' },
  },
  ['credentials_note'],
);

// ---------------------------------------------------------------------------------------------------------
// A call's webhook delivery (shared/webhooks/deliveries.ts `deliveryView`)

const DELIVERY_ATTEMPT = closed('One attempt', {
  attempt: { type: 'integer', minimum: 1 },
  resend: { type: 'boolean', description: 'One asked by POST /v0/calls/{id}/deliveries, outside the schedule' },
  at: TIMESTAMP,
  status_code: { type: ['integer', 'null'], description: 'What the endpoint answered; null when it did not' },
  error: { type: ['string', 'null'], description: 'Why the attempt failed, naming the endpoint and the cause' },
  duration_ms: COUNT,
  next_attempt_at: NULLABLE_TIMESTAMP,
});

export const DELIVERY = closed('A delivery: its webhook-id, state and attempts', {
  id: { type: 'string', description: 'The webhook-id of every attempt', examples: ['msg_r_0000000001abcdefabcdef'] },
  state: { enum: ['pending', 'delivered', 'gone', 'gave_up'] },
  reason: { type: ['string', 'null'], description: 'Why it ended (gone, gave up), or that the output was no longer kept' },
  created_at: TIMESTAMP,
  next_attempt_at: { ...NULLABLE_TIMESTAMP, description: 'While pending' },
  attempts: { type: 'array', items: DELIVERY_ATTEMPT },
});

// ---------------------------------------------------------------------------------------------------------
// Files (services/api/routes/files.ts, shared/files/store.ts)

export const STORED_FILE = closed('The stored file', {
  id: { type: 'string', pattern: '^f_[A-Za-z0-9_-]{22}$' },
  handle: { type: 'string', pattern: '^holon://files/f_[A-Za-z0-9_-]{22}$', examples: ['holon://files/f_3q2Xr0cA9vT1kLmN8pQwZb'] },
  size: { type: 'integer', minimum: 1, description: 'Bytes' },
  sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  content_type: { type: 'string' },
  expires_at: TIMESTAMP,
});

// ---------------------------------------------------------------------------------------------------------
// Accounts: sign-up (shared/accounts/signup.ts), sign-in (shared/accounts/github-sign-in.ts), webhook secrets

export const SIGNED_UP = closed(
  'The new account, its demo credit, its sandbox mandate and its keys (shown once)',
  {
    account: closed('The account', { handle: { type: 'string' }, email: { type: 'string' } }),
    balance: closed('The demo credit', { currency: { const: 'EUR' }, amount: AMOUNT }),
    mandate: MANDATE_VIEW,
    keys: closed('A human key and the sandbox’s agent key', { human: MINTED_KEY, agent: MINTED_KEY }),
    webhook_secret: { type: ['string', 'null'], pattern: '^whsec_', description: 'Shown once; null when the gateway cannot keep one (no HOLON_FILE_SECRET)' },
    note: { type: 'string' },
  },
  ['webhook_secret'],
);

export const SIGNED_IN = closed(
  'The sign-in: the handle and a human key expiring in 30 days (and, for a new account, its first agent key)',
  {
    handle: { type: 'string' },
    outcome: { enum: ['created', 'linked', 'signed_in'], description: 'A new account, an email account linked to GitHub now, or a returning one' },
    account: closed('The account', {
      handle: { type: 'string' },
      email: { type: ['string', 'null'] },
      github: closed('The GitHub account it is linked to', { id: { type: 'integer' }, login: { type: 'string' } }),
    }),
    keys: closed('The keys, shown once', { human: MINTED_KEY, agent: MINTED_KEY }, ['agent']),
    webhook_secret: { type: ['string', 'null'], pattern: '^whsec_', description: 'A new account’s, shown once; null when the gateway cannot keep one' },
    note: { type: 'string' },
  },
  ['webhook_secret'],
);

/** POST /v0/webhooks/secret/rotate (shared/webhooks/secrets.ts `rotate`). */
export const ROTATED_SECRET = closed('The rotation', {
  webhook_secret: WEBHOOK_SECRET,
  previous_valid_until: { ...NULLABLE_TIMESTAMP, description: 'Until then the previous secret signs too; null when there was none' },
  note: { type: 'string' },
});

// ---------------------------------------------------------------------------------------------------------
// Moderation and demo credit (shared/publishing/moderation.ts, services/api/routes/admin.ts)

export const DISABLED = closed('The disabled account, as logged', {
  account: closed('The account', {
    handle: { type: 'string' },
    email: { type: ['string', 'null'] },
    state: { const: 'disabled' },
    disabled_at: TIMESTAMP,
    disabled_reason: { type: 'string' },
  }),
  keys_revoked: COUNT,
  email_blocked: { type: 'boolean' },
  yanked: { ...STRINGS, description: '`id@version` of each version this yanked (those yanked before are not repeated)' },
  log_id: LOG_ID,
  announced: { type: 'boolean', description: 'False when the yanks could not be announced to other processes' },
});

const ACCOUNT_BALANCE = closed('A balance', { currency: { type: 'string' }, balance: AMOUNT, held: AMOUNT, available: AMOUNT });

const ACCOUNT_LISTING = closed('A user account', {
  handle: { type: 'string' },
  email: { type: ['string', 'null'] },
  created_at: TIMESTAMP,
  state: { enum: ['active', 'disabled'] },
  disabled_at: NULLABLE_TIMESTAMP,
  disabled_reason: { type: ['string', 'null'] },
  live_keys: { ...COUNT, description: 'Keys neither revoked nor expired' },
  balances: { type: 'array', items: ACCOUNT_BALANCE },
});

export const ACCOUNTS_PAGE = closed('User accounts, newest first', { accounts: { type: 'array', items: ACCOUNT_LISTING } });

const LOG_FIELDS = { id: LOG_ID, target: { type: 'string' }, reason: { type: 'string' }, created_at: TIMESTAMP };

const LOG_ENTRY: JsonSchema = {
  description: 'One moderation action and why',
  oneOf: [
    closed('An account disabled', {
      ...LOG_FIELDS,
      action: { const: 'disable_account' },
      detail: closed('What was done', { keys_revoked: COUNT, email_blocked: { type: 'boolean' }, yanked: STRINGS }),
    }),
    closed('A version yanked (`target` is `id@version`)', {
      ...LOG_FIELDS,
      action: { const: 'yank_version' },
      detail: closed('Who', { by: { type: 'string', description: 'The author’s handle, `admin` or `operator`' } }),
    }),
  ],
};

export const LOG_PAGE = closed('A page of the moderation log, newest first', {
  entries: { type: 'array', items: LOG_ENTRY },
  next_before: { type: ['string', 'null'], pattern: '^[1-9][0-9]*$', description: 'The next page’s `before`; null on the last page' },
});

/** POST /v0/admin/credit: the account's balances after the credit. */
export function creditAnswer(replayed: boolean): JsonSchema {
  return closed('The account’s balances', {
    replayed: { const: replayed },
    accounts: {
      type: 'array',
      items: closed('A balance', { account: { type: 'string' }, currency: { type: 'string' }, balance: AMOUNT, available: AMOUNT }),
    },
  });
}
