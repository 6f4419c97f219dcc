/**
 * A2A push notifications (docs/a2a.md, "Push notifications"): one config per task (a call), set when the message
 * is sent or later while the call runs. The call's `callback_url` is the config's URL, so the existing durable
 * delivery carries it (the settlement's outbox row, retries, the guarded client); this row says to send it in A2A's
 * push format, with the client's token (sealed under HOLON_FILE_SECRET, the call id as AAD; null: none) and the
 * gateway's public origin for the links in the task.
 */
export const name = '034_a2a_push';

export const statements = [
  `CREATE TABLE a2a_push_configs (
     call_id     text PRIMARY KEY,
     config_id   text NOT NULL CHECK (length(config_id) BETWEEN 1 AND 200),
     url         text NOT NULL CHECK (length(url) <= 2048),
     base        text NOT NULL CHECK (length(base) <= 2048),
     key_id      text,
     iv          bytea,
     ciphertext  bytea,
     tag         bytea,
     created_at  timestamptz NOT NULL DEFAULT now(),
     CONSTRAINT a2a_push_token_whole CHECK ((key_id IS NULL) = (ciphertext IS NULL))
   )`,
];
