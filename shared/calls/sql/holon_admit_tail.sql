-- Admit one call on the per-call path (`holon_admit_one`) when leases are on (docs/ledger.md, "Budget leases"): a
-- call its process's lease could not carve, or any call at a budget's tail. A call is never refused while money it
-- needs sits uncarved in a lease, whichever process holds it: when the mandate's budget or the payer's balance looks
-- short, the open leases that may hold what is missing (the mandate's, and those on the payer's balance) are locked
-- and, as far as the call needs them, closed — their uncarved parts go back — before `holon_admit_one` decides, in
-- the same statement. Lock order (docs/ledger.md): the mandates (the call's and those of the leases on its payer's
-- balance, shallower first, then byte order), the leases (byte order), the balance rows (byte order).
-- Answers what `holon_admit_one` answers, or 'retry' when the call was short while an open lease that might cover it
-- was not among those locked (taken meanwhile): the caller sends the call again.
CREATE OR REPLACE FUNCTION holon_admit_tail(p_call jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_mandate text := p_call->>'mandate_id';
  v_payer text := p_call->>'payer';
  v_currency text := p_call->>'currency';
  v_worst bigint := (p_call->>'worst_case')::bigint;
  v_mandates text[];
  v_close text[] := '{}';
  v_back bigint;
  v_out text;
  m record;
  b record;
BEGIN
  SELECT total - spent - reserved AS free, revoked_at INTO m FROM mandates WHERE id = v_mandate;
  SELECT balance - held AS free, overdraft INTO b FROM account_balances WHERE account = v_payer AND currency = v_currency;
  IF m.free IS NOT NULL AND m.revoked_at IS NULL AND b.free IS NOT NULL
     AND (m.free < v_worst OR (NOT b.overdraft AND b.free < v_worst)) THEN
    SELECT coalesce(array_agg(id), '{}') INTO v_mandates FROM (
      SELECT id FROM mandates
       WHERE id = v_mandate OR id IN (SELECT mandate_id FROM budget_leases
                                       WHERE account = v_payer AND currency = v_currency AND closed_at IS NULL)
       ORDER BY depth, id COLLATE "C" FOR UPDATE) locked;
    PERFORM 1 FROM budget_leases
      WHERE closed_at IS NULL AND (mandate_id = v_mandate
            OR (account = v_payer AND currency = v_currency AND mandate_id = ANY(v_mandates)))
      ORDER BY id COLLATE "C" FOR UPDATE;
    PERFORM 1 FROM account_balances x
      WHERE (x.account, x.currency) IN (SELECT account, currency FROM budget_leases WHERE closed_at IS NULL AND mandate_id = v_mandate
                                        UNION SELECT v_payer, v_currency)
      ORDER BY x.account COLLATE "C", x.currency COLLATE "C" FOR UPDATE;
    SELECT total - spent - reserved AS free INTO m FROM mandates WHERE id = v_mandate;
    SELECT balance - held AS free, overdraft INTO b FROM account_balances WHERE account = v_payer AND currency = v_currency;
    IF m.free < v_worst THEN
      SELECT coalesce(array_agg(id), '{}') INTO v_close FROM budget_leases WHERE closed_at IS NULL AND mandate_id = v_mandate;
    END IF;
    SELECT coalesce(sum(amount - carved), 0) INTO v_back FROM budget_leases
     WHERE id = ANY(v_close) AND account = v_payer AND currency = v_currency;
    IF NOT b.overdraft AND b.free + v_back < v_worst THEN
      SELECT v_close || coalesce(array_agg(id), '{}') INTO v_close FROM budget_leases
       WHERE closed_at IS NULL AND account = v_payer AND currency = v_currency AND mandate_id = ANY(v_mandates)
         AND NOT id = ANY(v_close);
    END IF;
    PERFORM holon_lease_close(v_close, NULL, v_payer, v_currency);
  END IF;
  v_out := holon_admit_one(p_call);
  IF (v_out = 'budget_short' AND EXISTS (SELECT 1 FROM budget_leases WHERE closed_at IS NULL AND mandate_id = v_mandate AND amount > carved))
     OR (v_out = 'balance_short' AND EXISTS (SELECT 1 FROM budget_leases WHERE closed_at IS NULL AND account = v_payer
                                             AND currency = v_currency AND amount > carved)) THEN
    RETURN 'retry';
  END IF;
  RETURN v_out;
END $function$
