-- The shared rows of a batch of top-level settlements (group commit) in ONE round trip: each mandate updated once
-- with the sums of its calls, each balance row once with the sum of every entry line and hold delta that touches it.
-- The calls' own rows (call, hold, entry, receipt, event) are written before, one by one. Lock order (docs/ledger.md):
-- the batch's mandates are all roots, locked in byte order of their ids; then the balance rows in byte order of
-- (account, currency), all locked in one sorted pass before any is changed. A mandate or a balance row that does not
-- exist raises; the CHECK constraints refuse an overspent mandate or an overdrawn account.
-- Holds carved from budget leases (p_leases, with each hold's amount and what its call was charged): after the
-- mandates, each lease once, in byte order of their ids, no longer carves them, and while it is open what their calls
-- were not charged stays reserved under it (its mandate's `reserved` and the balance's `held` keep it; docs/ledger.md,
-- "Budget leases"); then the balance rows.
CREATE OR REPLACE FUNCTION holon_settle_batch(p_mandates text[], p_release bigint[], p_spent bigint[], p_accounts text[], p_currencies text[], p_balance bigint[], p_held bigint[], p_leases text[], p_lease_holds bigint[], p_lease_charged bigint[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
  v_accounts text[];
  v_currencies text[];
  v_balance bigint[];
  v_held bigint[];
  v_locked integer;
  v_kept record;
  v_lease_accounts text[] := '{}';
  v_lease_currencies text[] := '{}';
  v_lease_held bigint[] := '{}';
BEGIN
  FOR r IN
    SELECT id, sum(release)::bigint AS release, sum(spent)::bigint AS spent
      FROM unnest(p_mandates, p_release, p_spent) AS m(id, release, spent)
     GROUP BY id ORDER BY id COLLATE "C"
  LOOP
    UPDATE mandates SET reserved = reserved - r.release, spent = spent + r.spent WHERE id = r.id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'a settlement names a mandate that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
  END LOOP;
  FOR r IN
    SELECT lease, sum(hold)::bigint AS hold, sum(greatest(hold - charged, 0))::bigint AS unused
      FROM unnest(p_leases, p_lease_holds, p_lease_charged) AS l(lease, hold, charged)
     GROUP BY lease ORDER BY lease COLLATE "C"
  LOOP
    UPDATE budget_leases SET carved = carved - r.hold,
           amount = amount - r.hold + CASE WHEN closed_at IS NULL THEN r.unused ELSE 0 END
     WHERE id = r.lease
    RETURNING mandate_id, account, currency, CASE WHEN closed_at IS NULL THEN r.unused ELSE 0 END AS kept INTO v_kept;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'a settlement names a lease that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF v_kept.kept > 0 THEN
      UPDATE mandates SET reserved = reserved + v_kept.kept WHERE id = v_kept.mandate_id;
      v_lease_accounts := v_lease_accounts || v_kept.account;
      v_lease_currencies := v_lease_currencies || v_kept.currency;
      v_lease_held := v_lease_held || v_kept.kept;
    END IF;
  END LOOP;
  SELECT coalesce(array_agg(account ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(currency ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(balance ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(held ORDER BY account COLLATE "C", currency COLLATE "C"), '{}')
    INTO v_accounts, v_currencies, v_balance, v_held
    FROM (
      SELECT account, currency, sum(balance)::bigint AS balance, sum(held)::bigint AS held
        FROM (SELECT * FROM unnest(p_accounts, p_currencies, p_balance, p_held)
              UNION ALL SELECT * FROM unnest(v_lease_accounts, v_lease_currencies, array_fill(0::bigint, ARRAY[cardinality(v_lease_held)]), v_lease_held))
             AS l(account, currency, balance, held)
       GROUP BY account, currency
    ) d WHERE balance <> 0 OR held <> 0;
  IF coalesce(array_length(v_accounts, 1), 0) = 0 THEN RETURN; END IF;
  SELECT count(*) INTO v_locked FROM (
    SELECT 1 FROM account_balances b JOIN unnest(v_accounts, v_currencies) AS k(account, currency)
      ON b.account = k.account AND b.currency = k.currency
     ORDER BY b.account COLLATE "C", b.currency COLLATE "C" FOR UPDATE OF b) locked;
  IF v_locked <> array_length(v_accounts, 1) THEN
    RAISE EXCEPTION 'a settlement names an account without a balance row' USING ERRCODE = 'foreign_key_violation';
  END IF;
  UPDATE account_balances b SET balance = b.balance + d.balance, held = b.held + d.held, version = b.version + 1
    FROM unnest(v_accounts, v_currencies, v_balance, v_held) AS d(account, currency, balance, held)
   WHERE b.account = d.account AND b.currency = d.currency;
END $function$
