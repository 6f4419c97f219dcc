-- Reserve a call's worst case inside the caller's transaction (shared/ledger/holds.ts `reserveHold`): the
-- mandate's budget, then the payer's balance (the lock order of docs/ledger.md), each taken and checked by one
-- conditional UPDATE, then the hold row. Answers 'reserved', or what was short: 'revoked' (the mandate's row says so,
-- whatever a cached document said) or 'budget_short' (nothing changed), 'balance_short' (the mandate was charged: the
-- caller rolls back).
CREATE OR REPLACE FUNCTION holon_reserve(p_mandate text, p_amount bigint, p_account text, p_currency text, p_hold text, p_call text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
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
END $function$
