/**
 * Webhooks (docs/webhooks.md): each account's signing secrets, each call's delivery, and the log of its attempts.
 *
 * - `webhook_secrets`: AES-256-GCM like endpoint credentials (shared/crypto/seal.ts: `key_id`, `iv`,
 *   `ciphertext`, `tag`, under a key derived from HOLON_FILE_SECRET). One current secret per account
 *   (`expires_at IS NULL`); a rotation gives the current one an `expires_at` (the end of the rotation window) and
 *   adds the new one. Rows past `expires_at` never sign and are deleted at the account's next rotation or signing.
 * - `webhook_deliveries`: one per call with a `callback_url`; `id` is the `webhook-id` header, the same on every
 *   attempt. `state` is `pending` while attempts remain, then `delivered`, `gone` (410) or `gave_up` (schedule
 *   exhausted); `reason` says why it ended, or that the output was no longer kept; `steps_made` is the position in the retry schedule,
 *   `resends_made` / `resends_asked` count re-sends asked by `POST /v0/calls/{id}/deliveries`.
 * - `webhook_attempts`: append-only (triggers, like `call_events`): one row per attempt, written once it ended.
 *
 * No row holds a secret in plaintext, a URL or an output. None of these rows is a money row: they are outside the
 * lock order of docs/ledger.md (no transaction here locks a mandate, hold or balance).
 */
export const name = '015_webhooks';

export const statements = [
  `CREATE TABLE webhook_secrets (
     id          bigserial PRIMARY KEY,
     account     text NOT NULL REFERENCES accounts(handle),
     key_id      text NOT NULL,
     iv          bytea NOT NULL,
     ciphertext  bytea NOT NULL,
     tag         bytea NOT NULL,
     created_at  timestamptz NOT NULL DEFAULT now(),
     expires_at  timestamptz
   )`,
  `CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (account) WHERE expires_at IS NULL`,
  `CREATE INDEX webhook_secrets_account ON webhook_secrets (account, created_at)`,
  `CREATE TABLE webhook_deliveries (
     id              text PRIMARY KEY,
     call_id         text NOT NULL UNIQUE REFERENCES calls(id),
     account         text NOT NULL REFERENCES accounts(handle),
     state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'gone', 'gave_up')),
     steps_made      integer NOT NULL DEFAULT 0 CHECK (steps_made >= 0),
     resends_asked   integer NOT NULL DEFAULT 0 CHECK (resends_asked >= 0),
     resends_made    integer NOT NULL DEFAULT 0 CHECK (resends_made >= 0),
     attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
     next_attempt_at timestamptz,
     reason          text,
     created_at      timestamptz NOT NULL DEFAULT now(),
     finished_at     timestamptz
   )`,
  `CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`,
  `CREATE TABLE webhook_attempts (
     delivery_id     text NOT NULL REFERENCES webhook_deliveries(id),
     attempt         integer NOT NULL CHECK (attempt >= 1),
     resend          boolean NOT NULL DEFAULT false,
     at              timestamptz NOT NULL,
     status_code     integer,
     error           text,
     duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
     next_attempt_at timestamptz,
     PRIMARY KEY (delivery_id, attempt),
     CHECK (status_code IS NOT NULL OR error IS NOT NULL)
   )`,
  `CREATE TRIGGER webhook_attempts_append_only BEFORE UPDATE OR DELETE ON webhook_attempts
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER webhook_attempts_no_truncate BEFORE TRUNCATE ON webhook_attempts
     FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
];
