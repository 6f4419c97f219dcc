/**
 * The hosted gateway (gateway.md §7): accounts with an email and a disabled state, API keys (SHA-256 hashes only,
 * a visible prefix for revocation), idempotent calls per API key, yanked versions, and the moderation log
 * (append-only, like the journal).
 */
export const name = '006_hosted';

export const statements = [
  `ALTER TABLE accounts
     ADD COLUMN email           text CHECK (email IS NULL OR (email = lower(email) AND length(email) <= 254)),
     ADD COLUMN disabled_at     timestamptz,
     ADD COLUMN disabled_reason text`,
  `CREATE UNIQUE INDEX accounts_email ON accounts (email) WHERE email IS NOT NULL`,
  // Emails of disabled accounts: they cannot sign up again.
  `CREATE TABLE blocked_emails (
     email       text PRIMARY KEY CHECK (email = lower(email)),
     reason      text NOT NULL,
     created_at  timestamptz NOT NULL DEFAULT now()
   )`,

  // The key itself is shown once and never stored: only its SHA-256, and a prefix to name it by.
  `CREATE TABLE api_keys (
     prefix        text PRIMARY KEY CHECK (prefix ~ '^hlk_[ha]_[A-Za-z0-9]{8}$'),
     hash          text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
     kind          text NOT NULL CHECK (kind IN ('human', 'agent')),
     account       text NOT NULL REFERENCES accounts(handle),
     mandate_id    text REFERENCES mandates(id),
     ask_in_client boolean NOT NULL DEFAULT false,
     created_at    timestamptz NOT NULL DEFAULT now(),
     expires_at    timestamptz,
     revoked_at    timestamptz,
     CONSTRAINT agent_keys_have_one_mandate CHECK ((kind = 'agent') = (mandate_id IS NOT NULL))
   )`,
  `CREATE INDEX api_keys_account ON api_keys (account)`,

  // Idempotent POST /v0/calls: one row per (API key, Idempotency-Key), claimed before anything runs.
  `CREATE TABLE call_idempotency (
     scope        text NOT NULL,
     key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
     request_hash text NOT NULL,
     call_id      text,
     -- a refusal's own answer (HTTP status and code), replayed as it was; a call that ran replays its receipt
     refused_status integer,
     refused_code text,
     status       text NOT NULL DEFAULT 'claimed' CHECK (status IN ('claimed', 'answered', 'interrupted')),
     created_at   timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (scope, key)
   )`,
  `CREATE INDEX call_idempotency_call ON call_idempotency (call_id) WHERE call_id IS NOT NULL`,

  `CREATE TABLE yanked_versions (
     agent_id    text NOT NULL,
     version     text NOT NULL,
     reason      text NOT NULL,
     yanked_by   text NOT NULL,
     created_at  timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (agent_id, version)
   )`,

  `CREATE TABLE moderation_log (
     id          bigserial PRIMARY KEY,
     action      text NOT NULL,
     target      text NOT NULL,
     reason      text NOT NULL CHECK (reason <> ''),
     detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
     created_at  timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE TRIGGER moderation_log_append_only BEFORE UPDATE OR DELETE ON moderation_log
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER moderation_log_no_truncate BEFORE TRUNCATE ON moderation_log
     FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
];
