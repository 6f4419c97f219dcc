-- Close budget leases (docs/ledger.md, "Budget leases"): each one's uncarved part (amount - carved) goes back to its
-- mandate's `reserved` and its balance's `held`, and the lease keeps only what its live holds carved (they settle
-- against it later, their unused part then going straight back). The caller has locked the leases' mandates; this
-- locks the leases in byte order of their ids, then the balance rows (theirs and p_account's, which the caller
-- changes next) in byte order: the lock order of docs/ledger.md. A lease already closed, or with p_expired_before
-- one not expired before it (its owner renewed it meanwhile), is left as it is. Answers what went back.
CREATE OR REPLACE FUNCTION holon_lease_close(p_ids text[], p_expired_before timestamp with time zone, p_account text, p_currency text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_ids text[];
  v_total bigint;
BEGIN
  SELECT coalesce(array_agg(id), '{}') INTO v_ids FROM (
    SELECT id FROM budget_leases
     WHERE id = ANY(p_ids) AND closed_at IS NULL AND (p_expired_before IS NULL OR expires_at < p_expired_before)
     ORDER BY id COLLATE "C" FOR UPDATE) locked;
  PERFORM 1 FROM account_balances b
    WHERE (b.account, b.currency) IN (SELECT account, currency FROM budget_leases WHERE id = ANY(v_ids)
                                      UNION SELECT p_account, p_currency WHERE p_account IS NOT NULL)
    ORDER BY b.account COLLATE "C", b.currency COLLATE "C" FOR UPDATE;
  IF cardinality(v_ids) = 0 THEN RETURN 0; END IF;
  WITH closed AS (
    UPDATE budget_leases l SET amount = l.carved, closed_at = now()
      FROM (SELECT id, amount - carved AS back FROM budget_leases WHERE id = ANY(v_ids)) o
     WHERE l.id = o.id RETURNING l.mandate_id, l.account, l.currency, o.back
  ), to_mandates AS (
    UPDATE mandates m SET reserved = m.reserved - s.back
      FROM (SELECT mandate_id, sum(back)::bigint AS back FROM closed GROUP BY mandate_id) s
     WHERE m.id = s.mandate_id RETURNING s.back
  ), to_balances AS (
    UPDATE account_balances b SET held = b.held - s.back, version = b.version + 1
      FROM (SELECT account, currency, sum(back)::bigint AS back FROM closed GROUP BY account, currency) s
     WHERE b.account = s.account AND b.currency = s.currency RETURNING s.back
  )
  SELECT coalesce(sum(back), 0)::bigint INTO v_total FROM to_mandates;
  RETURN v_total;
END $function$
