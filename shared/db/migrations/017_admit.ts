/**
 * Admission in one round trip (docs/PERFORMANCE.md): `holon_admit` writes a call's row and reserves its
 * worst case (`holon_reserve`, migration 007: the mandate, then the payer's balance, then the hold) in ONE statement,
 * so a plain call's reservation is one autocommitted statement instead of BEGIN, INSERT, SELECT, COMMIT. The lock
 * order is unchanged (docs/ledger.md): the call row is new (nobody else can hold it), then the two hot rows. When the
 * reservation is short it raises `HL001` with the shortfall as its message, so the statement — the call row
 * included — rolls back as a whole. Calls that redeem an approval or reserve from a parent hold keep their
 * transaction (shared/calls/submit/reserve.ts).
 */
export const name = '017_admit';

export const statements = [
  `CREATE FUNCTION holon_admit(p_call jsonb) RETURNS text LANGUAGE plpgsql AS $$
   DECLARE
     c record;
     v_outcome text;
   BEGIN
     INSERT INTO calls (id, root_id, parent_id, mandate_id, caller, agent_id, agent_version, payer, currency, worst_case,
                        max_cost, depth, delegated, status, timeout_ms, deadline_at, callback_url)
     SELECT r.id, r.root_id, r.parent_id, r.mandate_id, r.caller, r.agent_id, r.agent_version, r.payer, r.currency,
            r.worst_case, r.max_cost, r.depth, r.delegated, 'queued', r.timeout_ms, r.deadline_at, r.callback_url
       FROM jsonb_to_record(p_call) AS r(id text, root_id text, parent_id text, mandate_id text, caller text, agent_id text,
            agent_version text, payer text, currency text, worst_case bigint, max_cost bigint, depth integer,
            delegated boolean, timeout_ms integer, deadline_at timestamptz, callback_url text)
     RETURNING id, mandate_id, payer, currency, worst_case INTO c;
     v_outcome := holon_reserve(c.mandate_id, c.worst_case, c.payer, c.currency, c.id, c.id);
     IF v_outcome <> 'reserved' THEN
       RAISE EXCEPTION '%', v_outcome USING ERRCODE = 'HL001';
     END IF;
     RETURN v_outcome;
   END $$`,
];
