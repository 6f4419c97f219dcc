-- A mandate's revocation (its `revoked_at` set, a BEFORE UPDATE trigger on `mandates`) closes its open budget leases
-- in the same statement (docs/ledger.md, "Budget leases"): each one's uncarved part leaves the mandate's `reserved`
-- (this row, as it is written) and its balance's `held`; what their live holds carved settles later as usual. Lock
-- order (docs/ledger.md): the mandate (the revoking UPDATE holds it), its leases in byte order, the balance rows in
-- byte order.
CREATE OR REPLACE FUNCTION holon_lease_revoked()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
BEGIN
  PERFORM 1 FROM budget_leases WHERE mandate_id = NEW.id AND closed_at IS NULL ORDER BY id COLLATE "C" FOR UPDATE;
  FOR r IN
    SELECT account, currency, sum(amount - carved)::bigint AS back FROM budget_leases
     WHERE mandate_id = NEW.id AND closed_at IS NULL
     GROUP BY account, currency ORDER BY account COLLATE "C", currency COLLATE "C"
  LOOP
    NEW.reserved := NEW.reserved - r.back;
    UPDATE account_balances SET held = held - r.back, version = version + 1 WHERE account = r.account AND currency = r.currency;
  END LOOP;
  UPDATE budget_leases SET amount = carved, closed_at = now() WHERE mandate_id = NEW.id AND closed_at IS NULL;
  RETURN NEW;
END $function$
