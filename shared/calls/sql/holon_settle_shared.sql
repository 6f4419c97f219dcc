-- The shared rows of one settlement, after the call's own rows were written, in ONE round trip:
--   mandates      p_mandates root first: reserved -= p_release[i], spent += p_spent
--   parent hold   what a passthrough child did not use goes back into it (p_back), if it is still held
--   lease         a hold carved from a budget lease (p_lease): the lease no longer carves it, and while the lease is
--                 open what the call was not charged (p_hold_amount - p_lease_charged) stays reserved under it — its
--                 mandate's `reserved` and the balance's `held` keep it (docs/ledger.md, "Budget leases")
--   balances      the entry's lines, plus the settled hold's `held` delta (what came back minus its amount),
--                 locked in byte order (docs/ledger.md, "Lock order"), then changed in one UPDATE
-- Answers what went back into the parent hold. An account without a balance row raises (money never lands in an
-- account nobody created); the CHECK constraints refuse an overspent mandate or an overdrawn account.
CREATE OR REPLACE FUNCTION holon_settle_shared(p_mandates text[], p_release bigint[], p_spent bigint, p_parent_hold text, p_back bigint, p_hold_account text, p_hold_currency text, p_hold_amount bigint, p_accounts text[], p_currencies text[], p_amounts bigint[], p_lease text, p_lease_charged bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  i integer;
  v_returned bigint := 0;
  v_kept bigint := 0;
  v_lease_mandate text;
  v_accounts text[];
  v_currencies text[];
  v_balance bigint[];
  v_held bigint[];
  v_locked integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_mandates, 1), 0) LOOP
    UPDATE mandates SET reserved = reserved - p_release[i], spent = spent + p_spent WHERE id = p_mandates[i];
  END LOOP;
  IF p_parent_hold IS NOT NULL AND p_back > 0 THEN
    UPDATE holds SET amount = amount + p_back WHERE id = p_parent_hold AND status = 'held';
    IF FOUND THEN v_returned := p_back; END IF;
  END IF;
  IF p_lease IS NOT NULL THEN
    UPDATE budget_leases SET carved = carved - p_hold_amount,
           amount = amount - p_hold_amount + CASE WHEN closed_at IS NULL THEN greatest(p_hold_amount - p_lease_charged, 0) ELSE 0 END
     WHERE id = p_lease
    RETURNING mandate_id, CASE WHEN closed_at IS NULL THEN greatest(p_hold_amount - p_lease_charged, 0) ELSE 0 END
      INTO v_lease_mandate, v_kept;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'a settlement names a lease that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF v_kept > 0 THEN UPDATE mandates SET reserved = reserved + v_kept WHERE id = v_lease_mandate; END IF;
  END IF;
  SELECT coalesce(array_agg(account ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(currency ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(balance ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(held ORDER BY account COLLATE "C", currency COLLATE "C"), '{}')
    INTO v_accounts, v_currencies, v_balance, v_held
    FROM (
      SELECT account, currency, sum(balance)::bigint AS balance, sum(held)::bigint AS held FROM (
        SELECT l.account, l.currency, l.amount AS balance, 0::bigint AS held
          FROM unnest(p_accounts, p_currencies, p_amounts) AS l(account, currency, amount)
        UNION ALL
        SELECT p_hold_account, p_hold_currency, 0::bigint, v_returned + v_kept - p_hold_amount WHERE p_hold_account IS NOT NULL
      ) x GROUP BY account, currency
    ) d WHERE balance <> 0 OR held <> 0;
  IF coalesce(array_length(v_accounts, 1), 0) = 0 THEN RETURN v_returned; END IF;
  -- Lock in the global order first (the sort runs below the row-locking step), then change them all.
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
  RETURN v_returned;
END $function$
