-- Admit an array of calls in ONE statement (group commit), each on its own and in array (arrival) order, answering
-- each one's outcome in that order, exactly as `holon_admit_one` would alone. The batch's mandates, then its balance
-- rows, are locked first, each once, in the global lock order (docs/ledger.md). A call that is short changes nothing
-- and the others go on; an error (a constraint) fails the statement as a whole, and the caller admits each call again.
-- Idempotent by call id (docs/lifecycle.md, "A connection lost during admission"): a call whose row already exists
-- is answered 'reserved' without reserving again — the row is written only by the admission that reserved it, and
-- the check runs after the locks, so an admission still in flight on a lost connection is waited for. A row of that
-- id that is another call (mandate, payer or worst case) fails the statement: ids are random and never reused.
CREATE OR REPLACE FUNCTION holon_admit_batch(p_calls jsonb)
 RETURNS text[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_out text[] := '{}';
  v_call jsonb;
  v_row record;
BEGIN
  -- The lock order (docs/ledger.md): every mandate of the batch, shallower before deeper and in byte order, then
  -- every balance row in byte order, each once, before any is changed; the calls then go in arrival order.
  PERFORM 1 FROM mandates
    WHERE id IN (SELECT DISTINCT e->>'mandate_id' FROM jsonb_array_elements(p_calls) AS e)
    ORDER BY depth, id COLLATE "C" FOR UPDATE;
  PERFORM 1 FROM account_balances
    WHERE (account, currency) IN (SELECT DISTINCT e->>'payer', e->>'currency' FROM jsonb_array_elements(p_calls) AS e)
    ORDER BY account COLLATE "C", currency COLLATE "C" FOR UPDATE;
  FOR i IN 0 .. jsonb_array_length(p_calls) - 1 LOOP
    v_call := p_calls -> i;
    SELECT mandate_id, payer, worst_case INTO v_row FROM calls WHERE id = v_call->>'id';
    IF NOT FOUND THEN
      v_out := v_out || holon_admit_one(v_call);
    ELSIF v_row.mandate_id = v_call->>'mandate_id' AND v_row.payer = v_call->>'payer'
          AND v_row.worst_case = (v_call->>'worst_case')::bigint THEN
      v_out := v_out || 'reserved'::text;
    ELSE
      RAISE EXCEPTION 'call % exists and is another call', v_call->>'id' USING ERRCODE = 'unique_violation', CONSTRAINT = 'calls_pkey';
    END IF;
  END LOOP;
  RETURN v_out;
END $function$
