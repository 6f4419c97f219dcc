/**
 * Budget leases (docs/ledger.md, "Budget leases"): an API process reserves a slice of a mandate's remaining budget
 * and of its payer's available balance once, in a `budget_leases` row, and admits calls by carving their worst case
 * out of it (`holon_admit_leased`), touching only the lease row. The mandate's `reserved` and the balance's `held`
 * count every open lease's whole amount; a lease's `carved` is the sum of its calls' live holds (`holds.lease_id`).
 * Postgres keeps `carved <= amount` (so no process can carve past what its lease reserved), and a closed lease holds
 * only what is still carved (its uncarved part went back when it closed).
 *
 * The settlement functions take a lease's part (what a carved hold's call was charged goes to `spent`, the rest back
 * into the lease while it is open): their arguments change, so the old ones are dropped here and the files
 * (shared/calls/sql/) put the new ones in place. A mandate's revocation closes its open leases in the same
 * statement (a trigger), so no call is carved from a revoked mandate's lease.
 */
export const name = '035_budget_leases';

export const statements = [
  `CREATE TABLE budget_leases (
     id          text PRIMARY KEY,
     mandate_id  text NOT NULL REFERENCES mandates(id),
     account     text NOT NULL,
     currency    text NOT NULL,
     amount      bigint NOT NULL CHECK (amount >= 0),
     carved      bigint NOT NULL DEFAULT 0 CHECK (carved >= 0),
     owner       text NOT NULL,
     expires_at  timestamptz NOT NULL,
     closed_at   timestamptz,
     created_at  timestamptz NOT NULL DEFAULT now(),
     FOREIGN KEY (account, currency) REFERENCES account_balances(account, currency),
     CONSTRAINT lease_carved_within_amount CHECK (carved <= amount),
     CONSTRAINT lease_closed_keeps_only_carved CHECK (closed_at IS NULL OR amount = carved)
   )`,
  `CREATE INDEX budget_leases_open_mandate ON budget_leases (mandate_id) WHERE closed_at IS NULL`,
  `CREATE INDEX budget_leases_open_account ON budget_leases (account, currency) WHERE closed_at IS NULL`,
  `CREATE INDEX budget_leases_open_expiry ON budget_leases (expires_at) WHERE closed_at IS NULL`,
  `ALTER TABLE holds ADD COLUMN lease_id text REFERENCES budget_leases(id)`,
  `CREATE INDEX holds_lease_live ON holds (lease_id) WHERE status = 'held' AND lease_id IS NOT NULL`,
  `DROP FUNCTION IF EXISTS holon_settle_shared(text[], bigint[], bigint, text, bigint, text, text, bigint, text[], text[], bigint[])`,
  `DROP FUNCTION IF EXISTS holon_settle_batch(text[], bigint[], bigint[], text[], text[], bigint[], bigint[])`,
  // Revocation returns the uncarved part of every open lease of the mandate, in the statement that revokes it. The
  // trigger function's body is its file (shared/calls/sql/holon_lease_revoked.sql), applied after the migrations.
  `CREATE FUNCTION holon_lease_revoked() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
  `CREATE TRIGGER mandates_revoked_close_leases BEFORE UPDATE OF revoked_at ON mandates
     FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
     EXECUTE FUNCTION holon_lease_revoked()`,
];
