/**
 * Admission in batches (docs/PERFORMANCE.md), and revocation checked where the budget is.
 *
 * - `holon_reserve` also refuses a revoked mandate (`revoked`): admission reads a mandate's document from a
 *   per-process cache (shared/mandates/store.ts `knownMandate`), so the row — read here under its lock — has the
 *   last word on revocation as it has on the budget.
 * - `holon_admit_one(call)` admits one call WITHOUT raising: the mandate's budget, then the payer's balance (the lock
 *   order of docs/ledger.md), then the call row and its hold. It answers `reserved`, or what was short — `revoked`,
 *   `budget_short`, `balance_short` — having written nothing (a balance shortfall gives the mandate back what it
 *   took, in the same transaction: the row ends exactly as it was).
 * - `holon_admit(call)` keeps its contract (migration 017): `holon_admit_one`, raising `HL001` on a shortfall.
 * - `holon_admit_batch(calls)` admits an array of calls in ONE statement, each on its own and in array order
 *   (arrival order: not a coalesced reservation), and answers each one's outcome in that order. Its mandates, then its
 *   balance rows, are locked first, each once, in the global lock order (docs/ledger.md). A call that is short
 *   changes nothing and the others go on; an error (a constraint) fails the statement as a whole, and the caller
 *   then admits each call alone.
 */
export const name = '020_admit_batch';

export const statements = [
  `CREATE OR REPLACE FUNCTION holon_reserve(p_mandate text, p_amount bigint, p_account text, p_currency text, p_hold text, p_call text)
   RETURNS text LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE mandates SET reserved = reserved + p_amount
      WHERE id = p_mandate AND revoked_at IS NULL AND total - spent - reserved >= p_amount;
     IF NOT FOUND THEN
       IF EXISTS (SELECT 1 FROM mandates WHERE id = p_mandate AND revoked_at IS NOT NULL) THEN RETURN 'revoked'; END IF;
       RETURN 'budget_short';
     END IF;
     UPDATE account_balances SET held = held + p_amount, version = version + 1
      WHERE account = p_account AND currency = p_currency AND (overdraft OR balance - held >= p_amount);
     IF NOT FOUND THEN RETURN 'balance_short'; END IF;
     INSERT INTO holds (id, call_id, mandate_id, account, currency, amount) VALUES (p_hold, p_call, p_mandate, p_account, p_currency, p_amount);
     RETURN 'reserved';
   END $$`,

  `CREATE FUNCTION holon_admit_one(p_call jsonb) RETURNS text LANGUAGE plpgsql AS $$
   DECLARE
     r record;
   BEGIN
     SELECT * INTO r FROM jsonb_to_record(p_call) AS x(id text, root_id text, parent_id text, mandate_id text, caller text,
            agent_id text, agent_version text, payer text, currency text, worst_case bigint, max_cost bigint, depth integer,
            delegated boolean, timeout_ms integer, deadline_at timestamptz, callback_url text);
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
                        max_cost, depth, delegated, status, timeout_ms, deadline_at, callback_url)
     VALUES (r.id, r.root_id, r.parent_id, r.mandate_id, r.caller, r.agent_id, r.agent_version, r.payer, r.currency,
             r.worst_case, r.max_cost, r.depth, r.delegated, 'queued', r.timeout_ms, r.deadline_at, r.callback_url);
     INSERT INTO holds (id, call_id, mandate_id, account, currency, amount)
     VALUES (r.id, r.id, r.mandate_id, r.payer, r.currency, r.worst_case);
     RETURN 'reserved';
   END $$`,

  `CREATE OR REPLACE FUNCTION holon_admit(p_call jsonb) RETURNS text LANGUAGE plpgsql AS $$
   DECLARE
     v_outcome text;
   BEGIN
     v_outcome := holon_admit_one(p_call);
     IF v_outcome <> 'reserved' THEN
       RAISE EXCEPTION '%', v_outcome USING ERRCODE = 'HL001';
     END IF;
     RETURN v_outcome;
   END $$`,

  `CREATE FUNCTION holon_admit_batch(p_calls jsonb) RETURNS text[] LANGUAGE plpgsql AS $$
   DECLARE
     v_out text[] := '{}';
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
       v_out := v_out || holon_admit_one(p_calls -> i);
     END LOOP;
     RETURN v_out;
   END $$`,
];
