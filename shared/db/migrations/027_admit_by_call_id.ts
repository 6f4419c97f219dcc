/**
 * Admission idempotent by call id (docs/lifecycle.md, "A connection lost during admission").
 *
 * `holon_admit_batch` answers `reserved` for a call whose row already exists, without reserving again: the row is
 * written only by the admission that reserved it, in the same statement, so its existence is the proof. The check
 * runs after the batch's mandates and balance rows are locked: an admission of the same call still in flight on a
 * lost connection holds those locks until it ends, so a retry sees its outcome, never a half of it. A row of that id
 * that is not this call (another mandate, payer or worst case) fails the statement: ids are random and never reused.
 * `holon_admit_one`, the lone call's path, is unchanged: the API retries an admission through the batch function.
 */
export const name = '027_admit_by_call_id';

export const statements = [
  `CREATE OR REPLACE FUNCTION holon_admit_batch(p_calls jsonb) RETURNS text[] LANGUAGE plpgsql AS $$
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
   END $$`,
];
