-- Admit an array of calls in ONE statement by carving each one's worst case out of its budget lease (docs/ledger.md,
-- "Budget leases"), in array (arrival) order: the lease's `carved` grows (a conditional UPDATE, and the CHECK
-- `carved <= amount` behind it), then the call's row and its hold (`lease_id`) are written. The mandate's and the
-- balance's rows are not touched: the lease reserved on them already. Lock order (docs/ledger.md): the batch's leases
-- in byte order of their ids, each once, before any is changed; the calls' rows are new. Each call answers 'reserved',
-- or 'lease_short' (its lease is closed, another's, or has less uncarved than the call needs), having written nothing:
-- the caller then admits it on the per-call path (`holon_admit_tail`). Idempotent by call id, as `holon_admit_batch`.
-- Takes the per-call fields of `holon_admit_one` (`status`: 'queued' unless said; a `running` row is started now, its
-- deadline its timeout from now, as `holon_admit_one` writes it), plus `lease_id`.
CREATE OR REPLACE FUNCTION holon_admit_leased(p_calls jsonb)
 RETURNS text[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_out text[] := '{}';
  r record;
  v_row record;
BEGIN
  PERFORM 1 FROM budget_leases
    WHERE id IN (SELECT DISTINCT e->>'lease_id' FROM jsonb_array_elements(p_calls) AS e)
    ORDER BY id COLLATE "C" FOR UPDATE;
  FOR i IN 0 .. jsonb_array_length(p_calls) - 1 LOOP
    SELECT * INTO r FROM jsonb_to_record(p_calls -> i) AS x(id text, root_id text, parent_id text, mandate_id text, caller text,
           agent_id text, agent_version text, payer text, currency text, worst_case bigint, max_cost bigint, depth integer,
           delegated boolean, timeout_ms integer, deadline_at timestamptz, callback_url text, status text,
           lease_id text);
    SELECT mandate_id, payer, worst_case INTO v_row FROM calls WHERE id = r.id;
    IF FOUND THEN
      IF v_row.mandate_id = r.mandate_id AND v_row.payer = r.payer AND v_row.worst_case = r.worst_case THEN
        v_out := v_out || 'reserved'::text;
        CONTINUE;
      END IF;
      RAISE EXCEPTION 'call % exists and is another call', r.id USING ERRCODE = 'unique_violation', CONSTRAINT = 'calls_pkey';
    END IF;
    UPDATE budget_leases SET carved = carved + r.worst_case
     WHERE id = r.lease_id AND closed_at IS NULL AND mandate_id = r.mandate_id AND account = r.payer
       AND currency = r.currency AND amount - carved >= r.worst_case;
    IF NOT FOUND THEN
      v_out := v_out || 'lease_short'::text;
      CONTINUE;
    END IF;
    INSERT INTO calls (id, root_id, parent_id, mandate_id, caller, agent_id, agent_version, payer, currency, worst_case,
                       max_cost, depth, delegated, status, timeout_ms, deadline_at, started_at, callback_url)
    VALUES (r.id, r.root_id, r.parent_id, r.mandate_id, r.caller, r.agent_id, r.agent_version, r.payer, r.currency,
            r.worst_case, r.max_cost, r.depth, r.delegated, coalesce(r.status, 'queued'), r.timeout_ms,
            CASE WHEN r.status = 'running' THEN now() + make_interval(secs => r.timeout_ms / 1000.0) ELSE r.deadline_at END,
            CASE WHEN r.status = 'running' THEN now() END, r.callback_url);
    INSERT INTO holds (id, call_id, mandate_id, account, currency, amount, lease_id)
    VALUES (r.id, r.id, r.mandate_id, r.payer, r.currency, r.worst_case, r.lease_id);
    v_out := v_out || 'reserved'::text;
  END LOOP;
  RETURN v_out;
END $function$
