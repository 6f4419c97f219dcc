-- Admit one call in ONE autocommitted statement, without raising: the mandate's budget, then the payer's balance (the
-- lock order of docs/ledger.md), then the call's row and its hold (whose id is the call's). The row is `queued`, or
-- `running` (started now, its deadline its timeout from now) when the admitting process runs it at once and the
-- admission stands for the claim (shared/calls/run/run-here.ts). Answers
-- 'reserved', or what was short — 'revoked', 'budget_short', 'balance_short' — having written nothing: a balance
-- shortfall gives the mandate back what it took, in the same statement, so the row ends exactly as it was.
CREATE OR REPLACE FUNCTION holon_admit_one(p_call jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM jsonb_to_record(p_call) AS x(id text, root_id text, parent_id text, mandate_id text, caller text,
         agent_id text, agent_version text, payer text, currency text, worst_case bigint, max_cost bigint, depth integer,
         delegated boolean, timeout_ms integer, deadline_at timestamptz, callback_url text, status text);
  UPDATE mandates SET reserved = reserved + r.worst_case
   WHERE id = r.mandate_id AND revoked_at IS NULL AND total - spent - reserved >= r.worst_case;
  IF NOT FOUND THEN
    IF EXISTS (SELECT 1 FROM mandates WHERE id = r.mandate_id AND revoked_at IS NOT NULL) THEN RETURN 'revoked'; END IF;
    RETURN 'budget_short';
  END IF;
  UPDATE account_balances SET held = held + r.worst_case, version = version + 1
   WHERE account = r.payer AND currency = r.currency AND (overdraft OR balance - held >= r.worst_case);
  IF NOT FOUND THEN
    UPDATE mandates SET reserved = reserved - r.worst_case WHERE id = r.mandate_id;
    RETURN 'balance_short';
  END IF;
  INSERT INTO calls (id, root_id, parent_id, mandate_id, caller, agent_id, agent_version, payer, currency, worst_case,
                     max_cost, depth, delegated, status, timeout_ms, started_at, deadline_at, callback_url)
  VALUES (r.id, r.root_id, r.parent_id, r.mandate_id, r.caller, r.agent_id, r.agent_version, r.payer, r.currency,
          r.worst_case, r.max_cost, r.depth, r.delegated, coalesce(r.status, 'queued'), r.timeout_ms,
          CASE WHEN r.status = 'running' THEN now() END,
          CASE WHEN r.status = 'running' THEN now() + make_interval(secs => r.timeout_ms / 1000.0) ELSE r.deadline_at END,
          r.callback_url);
  INSERT INTO holds (id, call_id, mandate_id, account, currency, amount)
  VALUES (r.id, r.id, r.mandate_id, r.payer, r.currency, r.worst_case);
  RETURN 'reserved';
END $function$
