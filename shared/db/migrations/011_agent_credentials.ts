/**
 * Endpoint credentials (gateway.md §7 "Authentication"): one per agent id (all its versions), AES-256-GCM under a
 * key derived from HOLON_FILE_SECRET (shared/crypto/seal.ts). `key_id` names that key, so a row written under another
 * secret is reported instead of decrypted. No foreign key to published_versions: a credential may be set
 * before the first version is published.
 */
export const name = '011_agent_credentials';

export const statements = [
  `CREATE TABLE agent_credentials (
     agent_id    text PRIMARY KEY,
     key_id      text NOT NULL,
     iv          bytea NOT NULL,
     ciphertext  bytea NOT NULL,
     tag         bytea NOT NULL,
     set_at      timestamptz NOT NULL DEFAULT now(),
     set_by      text NOT NULL REFERENCES accounts(handle)
   )`,
];
