/**
 * Approvals (mandate.md §4, gateway.md §7): bound to the mandate, the exact agent version, the SHA-256 of the
 * canonical input, the max_cost and the worst case. The stored input exists only while the approval is pending.
 */
export const name = '004_approvals';

export const statements = [
  `CREATE TABLE approvals (
     id            text PRIMARY KEY,
     mandate_id    text NOT NULL REFERENCES mandates(id),
     agent_id      text NOT NULL,
     agent_version text NOT NULL,
     input_sha256  text NOT NULL CHECK (input_sha256 ~ '^[0-9a-f]{64}$'),
     input         jsonb,
     max_cost      bigint CHECK (max_cost >= 0),
     worst_case    bigint NOT NULL CHECK (worst_case >= 0),
     currency      text NOT NULL,
     reasons       jsonb NOT NULL DEFAULT '[]'::jsonb,
     receipt_id    text NOT NULL,
     status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'used')),
     call_id       text,
     created_at    timestamptz NOT NULL DEFAULT now(),
     expires_at    timestamptz NOT NULL,
     decided_at    timestamptz,
     -- the input is kept only while pending
     CONSTRAINT approval_input_only_while_pending CHECK (status = 'pending' OR input IS NULL)
   )`,
  `CREATE INDEX approvals_pending ON approvals (mandate_id, created_at) WHERE status = 'pending'`,
  `CREATE INDEX approvals_expiry ON approvals (expires_at) WHERE status = 'pending'`,
];
