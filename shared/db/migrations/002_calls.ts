/**
 * Mandates with their spent/reserved counters, holds, calls, receipts and call events.
 *
 * `spent + reserved <= total` is a CHECK on the mandate row: under any concurrency no mandate is overspent,
 * even if code forgot to check (the code checks first, for a plain-words denial).
 */
export const name = '002_calls';

export const statements = [
  `CREATE TABLE mandates (
     id          text PRIMARY KEY,
     issuer      text NOT NULL REFERENCES accounts(handle),
     grantee     text NOT NULL,
     parent_id   text REFERENCES mandates(id),
     depth       integer NOT NULL DEFAULT 0 CHECK (depth >= 0),
     doc         jsonb NOT NULL,
     currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
     total       bigint NOT NULL CHECK (total >= 0),
     spent       bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
     reserved    bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),
     expires_at  timestamptz,
     revoked_at  timestamptz,
     created_at  timestamptz NOT NULL DEFAULT now(),
     CONSTRAINT mandate_within_budget CHECK (spent + reserved <= total)
   )`,
  `CREATE INDEX mandates_issuer ON mandates (issuer)`,
  `CREATE INDEX mandates_parent ON mandates (parent_id)`,

  // Calls: the row is the truth about a call's state (queued → running → finished) and decides
  // whether a redelivered run job may invoke the agent.
  `CREATE TABLE calls (
     id              text PRIMARY KEY,
     parent_id       text REFERENCES calls(id),
     root_id         text NOT NULL,
     mandate_id      text NOT NULL REFERENCES mandates(id),
     sub_mandate_id  text REFERENCES mandates(id),
     caller          text NOT NULL,
     agent_id        text NOT NULL,
     agent_version   text NOT NULL,
     payer           text NOT NULL REFERENCES accounts(handle),
     currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
     worst_case      bigint NOT NULL CHECK (worst_case >= 0),
     max_cost        bigint CHECK (max_cost >= 0),
     depth           integer NOT NULL DEFAULT 0,
     delegated       boolean NOT NULL DEFAULT false,
     status          text NOT NULL CHECK (status IN ('queued', 'running', 'settling', 'succeeded', 'failed')),
     error_code      text,
     timeout_ms      integer NOT NULL CHECK (timeout_ms > 0),
     deadline_at     timestamptz,
     started_at      timestamptz,
     finished_at     timestamptz,
     approval_id     text,
     idempotency_key text,
     created_at      timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX calls_parent ON calls (parent_id)`,
  `CREATE INDEX calls_open ON calls (status, deadline_at) WHERE status IN ('queued', 'running', 'settling')`,

  // A hold is a pending transfer: placed at reserve, resolved exactly once (settled or released).
  `CREATE TABLE holds (
     id           text PRIMARY KEY,
     call_id      text,
     mandate_id   text REFERENCES mandates(id),
     account      text NOT NULL,
     currency     text NOT NULL,
     amount       bigint NOT NULL CHECK (amount >= 0),
     status       text NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'settled', 'released')),
     created_at   timestamptz NOT NULL DEFAULT now(),
     resolved_at  timestamptz,
     FOREIGN KEY (account, currency) REFERENCES account_balances(account, currency),
     CHECK ((status = 'held') = (resolved_at IS NULL))
   )`,
  `CREATE INDEX holds_live ON holds (account, currency) WHERE status = 'held'`,
  `CREATE INDEX holds_mandate_live ON holds (mandate_id) WHERE status = 'held'`,

  // Receipts never hold inputs or outputs.
  `CREATE TABLE receipts (
     id              text PRIMARY KEY,
     parent_id       text,
     mandate_id      text,
     sub_mandate_id  text,
     caller          text,
     agent           text,
     status          text NOT NULL CHECK (status IN ('succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval')),
     error_code      text,
     reasons         jsonb NOT NULL DEFAULT '[]'::jsonb,
     worst_case      bigint,
     currency        text,
     payer           text,
     billed          boolean NOT NULL DEFAULT false,
     cost_own        bigint NOT NULL DEFAULT 0 CHECK (cost_own >= 0),
     cost_downstream bigint NOT NULL DEFAULT 0 CHECK (cost_downstream >= 0),
     cost_total      bigint NOT NULL DEFAULT 0,
     splits          jsonb NOT NULL DEFAULT '[]'::jsonb,
     approval_id     text,
     duration_ms     integer,
     entry_id        bigint REFERENCES journal_entries(id),
     created_at      timestamptz NOT NULL DEFAULT now(),
     -- an unbilled orchestrator can still carry downstream costs: its children that finished stay paid
     CONSTRAINT receipt_cost_adds_up CHECK (cost_total = cost_own + cost_downstream),
     CONSTRAINT receipt_unbilled_own_is_zero CHECK (billed OR cost_own = 0)
   )`,
  `CREATE INDEX receipts_mandate ON receipts (mandate_id, created_at DESC)`,
  `CREATE INDEX receipts_parent ON receipts (parent_id)`,

  // Every finished run, append-only: the Agent Record is computed from here.
  `CREATE TABLE call_events (
     id            bigserial PRIMARY KEY,
     call_id       text NOT NULL UNIQUE,
     agent_id      text NOT NULL,
     agent_version text NOT NULL,
     status        text NOT NULL CHECK (status IN ('succeeded', 'failed')),
     error_code    text,
     latency_ms    integer NOT NULL CHECK (latency_ms >= 0),
     cost          bigint NOT NULL DEFAULT 0 CHECK (cost >= 0),
     currency      text NOT NULL,
     delegated     boolean NOT NULL DEFAULT false,
     created_at    timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX call_events_agent ON call_events (agent_id, agent_version, created_at)`,
  `CREATE TRIGGER call_events_append_only BEFORE UPDATE OR DELETE ON call_events
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER call_events_no_truncate BEFORE TRUNCATE ON call_events
     FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
];
