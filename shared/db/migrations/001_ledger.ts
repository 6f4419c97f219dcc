/**
 * The ledger: accounts, cached balances, journal entries and lines.
 *
 * Postgres itself enforces the money invariants (DESIGN.md §3.1):
 * - an entry whose lines do not sum to zero per currency is refused at COMMIT (deferred constraint trigger),
 *   and so is an entry with fewer than two lines;
 * - journal rows can never be updated, deleted or truncated;
 * - one entry per idempotency key;
 * - a cached balance never goes below what is held on it, except on external accounts (money entering the platform).
 */
export const name = '001_ledger';

export const statements = [
  `CREATE TABLE accounts (
     handle      text PRIMARY KEY CHECK (handle <> '' AND length(handle) <= 100),
     kind        text NOT NULL CHECK (kind IN ('user', 'platform', 'external')),
     created_at  timestamptz NOT NULL DEFAULT now()
   )`,
  // One row per account and currency: the cached balance, what is held on it, and a version bumped on every change.
  `CREATE TABLE account_balances (
     account     text NOT NULL REFERENCES accounts(handle),
     currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
     balance     bigint NOT NULL DEFAULT 0,
     held        bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
     overdraft   boolean NOT NULL DEFAULT false,
     version     bigint NOT NULL DEFAULT 0,
     PRIMARY KEY (account, currency),
     CONSTRAINT balance_covers_holds CHECK (overdraft OR balance - held >= 0)
   )`,
  `CREATE TABLE journal_entries (
     id          bigserial PRIMARY KEY,
     key         text NOT NULL UNIQUE CHECK (key <> ''),
     kind        text NOT NULL,
     digest      text NOT NULL,
     created_at  timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE TABLE journal_lines (
     id          bigserial PRIMARY KEY,
     entry_id    bigint NOT NULL REFERENCES journal_entries(id),
     account     text NOT NULL REFERENCES accounts(handle),
     currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
     amount      bigint NOT NULL CHECK (amount <> 0)
   )`,
  `CREATE INDEX journal_lines_entry ON journal_lines (entry_id)`,
  `CREATE INDEX journal_lines_account ON journal_lines (account, currency)`,

  // Zero-sum per currency, checked when the transaction commits.
  `CREATE FUNCTION journal_check_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     entry bigint;
     line_count bigint;
     bad_currency text;
     bad_total numeric;
   BEGIN
     IF TG_TABLE_NAME = 'journal_entries' THEN entry := NEW.id; ELSE entry := NEW.entry_id; END IF;
     -- one pass: the number of lines, and the first currency whose lines do not sum to zero
     SELECT coalesce(sum(n), 0), min(currency) FILTER (WHERE total <> 0), min(total) FILTER (WHERE total <> 0)
       INTO line_count, bad_currency, bad_total
       FROM (SELECT currency, sum(amount) AS total, count(*) AS n FROM journal_lines WHERE entry_id = entry GROUP BY currency) per_currency;
     IF line_count < 2 THEN
       RAISE EXCEPTION 'journal entry % has % line(s); an entry needs at least two', entry, line_count
         USING ERRCODE = 'check_violation';
     END IF;
     IF bad_currency IS NOT NULL THEN
       RAISE EXCEPTION 'journal entry % does not balance: its % lines sum to % micro-units', entry, bad_currency, bad_total
         USING ERRCODE = 'check_violation';
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE CONSTRAINT TRIGGER journal_lines_balanced
     AFTER INSERT ON journal_lines DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW EXECUTE FUNCTION journal_check_entry_balanced()`,
  `CREATE CONSTRAINT TRIGGER journal_entries_have_lines
     AFTER INSERT ON journal_entries DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW EXECUTE FUNCTION journal_check_entry_balanced()`,

  // Append-only: a correction is a new entry.
  `CREATE FUNCTION journal_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     RAISE EXCEPTION '% is append-only: % is refused (a correction is a new entry)', TG_TABLE_NAME, TG_OP
       USING ERRCODE = 'insufficient_privilege';
   END $$`,
  `CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries
     FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE TRIGGER journal_lines_no_truncate BEFORE TRUNCATE ON journal_lines
     FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
];
