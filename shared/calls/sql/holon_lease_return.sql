-- Return budget leases (docs/ledger.md, "Budget leases"): p_ids (every open lease when null), or with
-- p_expired_before only those whose expiry passed before it (the sweeper: their owner stopped renewing them). Each
-- one's uncarved part goes back to its mandate and its balance, and it closes (`holon_lease_close`). Lock order
-- (docs/ledger.md): the leases' mandates, shallower first and in byte order, then the leases, then the balance rows.
-- Answers what went back.
CREATE OR REPLACE FUNCTION holon_lease_return(p_ids text[], p_expired_before timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_ids text[];
BEGIN
  SELECT coalesce(array_agg(id), '{}') INTO v_ids FROM budget_leases
   WHERE closed_at IS NULL AND (p_ids IS NULL OR id = ANY(p_ids))
     AND (p_expired_before IS NULL OR expires_at < p_expired_before);
  IF cardinality(v_ids) = 0 THEN RETURN 0; END IF;
  PERFORM 1 FROM mandates WHERE id IN (SELECT mandate_id FROM budget_leases WHERE id = ANY(v_ids))
    ORDER BY depth, id COLLATE "C" FOR UPDATE;
  RETURN holon_lease_close(v_ids, p_expired_before, NULL, NULL);
END $function$
