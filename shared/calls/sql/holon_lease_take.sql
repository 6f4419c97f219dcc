-- Take a budget lease, or top one up (docs/ledger.md, "Budget leases"): ONE reservation of a slice of the mandate's
-- remaining budget and of the payer's available balance, as a `budget_leases` row the calls of one process then carve
-- from (`holon_admit_leased`). Lock order (docs/ledger.md): the mandate, then the lease, then the balance row. What is
-- added brings the lease's uncarved part up to p_slice, but never more than 1/p_divisor of what the mandate or the
-- balance has left (so a tail stays for the calls of every process); less than p_min is not worth a lease, and nothing
-- is taken. Answers the lease as it is now (amount, carved) and what was added; no row when the lease is closed, the
-- mandate revoked or gone, or the balance an overdraft one (calls paid from outside stay on the per-call path).
CREATE OR REPLACE FUNCTION holon_lease_take(p_id text, p_mandate text, p_account text, p_currency text, p_owner text, p_slice bigint, p_divisor integer, p_min bigint, p_expires timestamp with time zone)
 RETURNS TABLE(lease_amount bigint, lease_carved bigint, lease_added bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
  m record;
  l record;
  b record;
  v_add bigint;
BEGIN
  SELECT total - spent - reserved AS free, revoked_at, depth INTO m FROM mandates WHERE id = p_mandate FOR UPDATE;
  IF NOT FOUND OR m.revoked_at IS NOT NULL OR m.depth <> 0 THEN RETURN; END IF;
  SELECT x.amount, x.carved, x.closed_at, x.mandate_id, x.account, x.currency INTO l FROM budget_leases x WHERE x.id = p_id FOR UPDATE;
  IF FOUND AND (l.closed_at IS NOT NULL OR l.mandate_id <> p_mandate OR l.account <> p_account OR l.currency <> p_currency) THEN RETURN; END IF;
  SELECT x.balance - x.held AS free, x.overdraft INTO b FROM account_balances x WHERE x.account = p_account AND x.currency = p_currency FOR UPDATE;
  IF NOT FOUND OR b.overdraft THEN RETURN; END IF;
  v_add := least(p_slice - coalesce(l.amount - l.carved, 0), m.free / p_divisor, b.free / p_divisor);
  IF v_add < greatest(p_min, 1) THEN v_add := 0; END IF;
  IF v_add > 0 THEN
    UPDATE mandates SET reserved = reserved + v_add WHERE id = p_mandate;
    UPDATE account_balances SET held = held + v_add, version = version + 1 WHERE account = p_account AND currency = p_currency;
  END IF;
  IF l.amount IS NOT NULL THEN
    UPDATE budget_leases x SET amount = x.amount + v_add, expires_at = greatest(x.expires_at, p_expires) WHERE x.id = p_id;
    RETURN QUERY SELECT l.amount + v_add, l.carved, v_add;
  ELSIF v_add > 0 THEN
    INSERT INTO budget_leases (id, mandate_id, account, currency, amount, owner, expires_at)
    VALUES (p_id, p_mandate, p_account, p_currency, v_add, p_owner, p_expires);
    RETURN QUERY SELECT v_add, 0::bigint, v_add;
  END IF;
END $function$
