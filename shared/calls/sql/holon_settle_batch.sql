-- The shared rows of a batch of top-level settlements (group commit) in ONE round trip: each mandate updated once
-- with the sums of its calls, each balance row once with the sum of every entry line and hold delta that touches it.
-- The calls' own rows (call, hold, entry, receipt, event) are written before, one by one. Lock order (docs/ledger.md):
-- the batch's mandates are all roots, locked in byte order of their ids; then the balance rows in byte order of
-- (account, currency), all locked in one sorted pass before any is changed. A mandate or a balance row that does not
-- exist raises; the CHECK constraints refuse an overspent mandate or an overdrawn account.
CREATE OR REPLACE FUNCTION holon_settle_batch(p_mandates text[], p_release bigint[], p_spent bigint[], p_accounts text[], p_currencies text[], p_balance bigint[], p_held bigint[])
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
  SELECT coalesce(array_agg(account ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(currency ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(balance ORDER BY account COLLATE "C", currency COLLATE "C"), '{}'),
         coalesce(array_agg(held ORDER BY account COLLATE "C", currency COLLATE "C"), '{}')
    INTO v_accounts, v_currencies, v_balance, v_held
    FROM (
      SELECT account, currency, sum(balance)::bigint AS balance, sum(held)::bigint AS held
        FROM unnest(p_accounts, p_currencies, p_balance, p_held) AS l(account, currency, balance, held)
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
