/**
 * A GitHub sign-in is bound to the browser tab that started it (docs/hosted.md, "Sign in with GitHub"): the console
 * sends a random nonce it keeps in that tab's sessionStorage to `GET /v0/auth/github`; its SHA-256 is kept with the
 * state, carried to the one-time login code the callback mints, and `POST /v0/auth/exchange` needs the nonce again.
 * A code opened in another browser (a link someone sent) cannot be traded there.
 *
 * States and codes live minutes; those in flight when this runs have no nonce and are dropped (their sign-ins are
 * refused like expired ones and are started again), so the column is never empty.
 */
export const name = '023_sign_in_nonce';

export const statements = [
  `DELETE FROM github_login_codes`,
  `DELETE FROM github_oauth_states`,
  `ALTER TABLE github_oauth_states ADD COLUMN nonce_hash text NOT NULL CHECK (nonce_hash ~ '^[0-9a-f]{64}$')`,
  `ALTER TABLE github_login_codes ADD COLUMN nonce_hash text NOT NULL CHECK (nonce_hash ~ '^[0-9a-f]{64}$')`,
];
