-- The deferred constraint trigger of journal_entries and journal_lines, run at COMMIT: every entry balances per
-- currency, and has at least two lines — except a settlement that moves nothing (`settle`, no lines: an author paying
-- themselves at a fee that rounds to zero is still billed, and its entry `settle:<call id>` exists, so
-- "billed ⇔ entry" holds).
CREATE OR REPLACE FUNCTION journal_check_entry_balanced()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  entry bigint;
  entry_kind text;
  line_count bigint;
  bad_currency text;
  bad_total numeric;
BEGIN
  IF TG_TABLE_NAME = 'journal_entries' THEN entry := NEW.id; ELSE entry := NEW.entry_id; END IF;
  -- one pass: the number of lines, and the first currency whose lines do not sum to zero
  SELECT coalesce(sum(n), 0), min(currency) FILTER (WHERE total <> 0), min(total) FILTER (WHERE total <> 0)
    INTO line_count, bad_currency, bad_total
    FROM (SELECT currency, sum(amount) AS total, count(*) AS n FROM journal_lines WHERE entry_id = entry GROUP BY currency) per_currency;
  SELECT kind INTO entry_kind FROM journal_entries WHERE id = entry;
  IF line_count = 1 OR (line_count = 0 AND entry_kind IS DISTINCT FROM 'settle') THEN
    RAISE EXCEPTION 'journal entry % has % line(s); an entry needs at least two', entry, line_count
      USING ERRCODE = 'check_violation';
  END IF;
  IF bad_currency IS NOT NULL THEN
    RAISE EXCEPTION 'journal entry % does not balance: its % lines sum to % micro-units', entry, bad_currency, bad_total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $function$
