/**
 * Signing in from an MCP client (docs/mcp.md, "Signing in from an MCP client"): the gateway's own OAuth
 * authorization server, whose access token is an agent key.
 * - `oauth_requests`: one authorization request each, from `GET /oauth/authorize` until its code is traded. The
 *   request id (in the console's address) and the code are stored as their SHA-256 only; the client's own `state` and
 *   its PKCE `code_challenge` are kept to be echoed and checked. A request lives 10 minutes undecided; its decision
 *   (the human's account and mandate, or a refusal) and its code (5 minutes, traded once) are written on the same row.
 * - `api_keys.client_id`, `client_name`: the client an agent key was issued to by that flow (its client ID metadata
 *   document's URL and name), so that the console's keys list says where the key went. Null for every other key.
 */
export const name = '031_mcp_sign_in';

export const statements = [
  `CREATE TABLE oauth_requests (
     request_hash    text PRIMARY KEY CHECK (request_hash ~ '^[0-9a-f]{64}$'),
     client_id       text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2000),
     client_name     text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 200),
     redirect_uri    text NOT NULL CHECK (length(redirect_uri) BETWEEN 1 AND 2000),
     state           text CHECK (length(state) <= 1000),
     code_challenge  text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
     resource        text NOT NULL CHECK (length(resource) <= 2000),
     expires_at      timestamptz NOT NULL,
     decided_at      timestamptz,
     approved        boolean,
     account         text REFERENCES accounts(handle),
     mandate_id      text REFERENCES mandates(id),
     code_hash       text UNIQUE CHECK (code_hash ~ '^[0-9a-f]{64}$'),
     code_expires_at timestamptz,
     redeemed_at     timestamptz,
     key_prefix      text REFERENCES api_keys(prefix),
     created_at      timestamptz NOT NULL DEFAULT now(),
     CONSTRAINT oauth_decision CHECK ((decided_at IS NULL) = (approved IS NULL)),
     CONSTRAINT oauth_code_of_approval CHECK (
       (code_hash IS NULL) = (approved IS NOT TRUE)
       AND (code_hash IS NULL) = (account IS NULL)
       AND (code_hash IS NULL) = (mandate_id IS NULL)
       AND (code_hash IS NULL) = (code_expires_at IS NULL)
     ),
     CONSTRAINT oauth_redeemed_once CHECK ((redeemed_at IS NULL) = (key_prefix IS NULL) AND (redeemed_at IS NULL OR code_hash IS NOT NULL))
   )`,
  `CREATE INDEX oauth_requests_expiry ON oauth_requests (expires_at)`,
  `ALTER TABLE api_keys ADD COLUMN client_id text CHECK (length(client_id) BETWEEN 1 AND 2000),
     ADD COLUMN client_name text CHECK (length(client_name) BETWEEN 1 AND 200),
     ADD CONSTRAINT api_keys_client_named CHECK ((client_id IS NULL) = (client_name IS NULL) AND (client_id IS NULL OR kind = 'agent'))`,
];
