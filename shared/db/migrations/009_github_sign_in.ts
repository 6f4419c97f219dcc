/**
 * Sign in with GitHub (gateway.md §7 Accounts): an account's GitHub id (stable, unique) and login; the OAuth
 * `state`s the gateway handed out (SHA-256 only, ten minutes, used once); and the one-time login codes the console
 * trades for keys (SHA-256 only, two minutes, used once). A code names the account it signs in to: the keys are
 * minted when it is traded, so no key is ever at rest. No GitHub token is stored anywhere.
 */
export const name = '009_github_sign_in';

export const statements = [
  `ALTER TABLE accounts
     ADD COLUMN github_id    bigint CHECK (github_id IS NULL OR github_id > 0),
     ADD COLUMN github_login text CHECK (github_login IS NULL OR length(github_login) BETWEEN 1 AND 100),
     ADD CONSTRAINT accounts_github_linked CHECK ((github_id IS NULL) = (github_login IS NULL))`,
  `CREATE UNIQUE INDEX accounts_github_id ON accounts (github_id) WHERE github_id IS NOT NULL`,

  // The state is also in the browser's cookie: the callback needs both, so it is accepted from that browser only.
  // `redirect_uri` is the callback URL sent to GitHub, which the code must be traded with again.
  `CREATE TABLE github_oauth_states (
     state_hash   text PRIMARY KEY CHECK (state_hash ~ '^[0-9a-f]{64}$'),
     redirect_uri text NOT NULL CHECK (length(redirect_uri) <= 2000),
     expires_at   timestamptz NOT NULL,
     used_at      timestamptz,
     created_at   timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX github_oauth_states_expiry ON github_oauth_states (expires_at)`,

  // `outcome` is what the sign-in did to the account (the exchange says it); the keys are minted at the exchange.
  `CREATE TABLE github_login_codes (
     code_hash   text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
     account     text NOT NULL REFERENCES accounts(handle),
     outcome     text NOT NULL CHECK (outcome IN ('created', 'linked', 'signed_in')),
     expires_at  timestamptz NOT NULL,
     used_at     timestamptz,
     created_at  timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX github_login_codes_expiry ON github_login_codes (expires_at)`,
];
