-- Append receipts to the transparency log (docs/receipts.md), an RFC 6962 Merkle tree, in the caller's transaction
-- and after every other lock it takes (docs/ledger.md): under a transaction-level advisory lock ("HolonLog" in ASCII),
-- so appends are serialized and the log's order is the commit order of the transactions that wrote the receipts.
-- p_leaves are the leaf hashes in hex, one per receipt id. Writes each leaf and every subtree it completes, and
-- answers the first leaf's index.
CREATE OR REPLACE FUNCTION holon_log_append(p_ids text[], p_leaves text[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  base bigint;
  n int := coalesce(cardinality(p_ids), 0);
  i bigint;
  lvl int;
  h bytea;
  lefts bytea[] := '{}';
  levels smallint[] := '{}';
  idxs bigint[] := '{}';
  hashes bytea[] := '{}';
  f record;
BEGIN
  IF n <> coalesce(cardinality(p_leaves), 0) THEN
    RAISE EXCEPTION 'holon_log_append: % receipts but % leaves', n, cardinality(p_leaves);
  END IF;
  PERFORM pg_advisory_xact_lock(5219509718993366887);
  SELECT coalesce(max(l.idx) + 1, 0) INTO base FROM receipt_log_leaves l;
  IF n = 0 THEN RETURN base; END IF;
  INSERT INTO receipt_log_leaves (idx, receipt_id)
    SELECT base + u.o - 1, u.id FROM unnest(p_ids) WITH ORDINALITY AS u(id, o);
  -- The frontier: the complete subtree of each level whose bit is set in the size, the left sibling to come.
  FOR f IN SELECT nd.level, nd.hash FROM receipt_log_nodes nd
             JOIN generate_series(0, 62) AS g(l) ON nd.level = g.l AND nd.idx = (base >> g.l) - 1
            WHERE (base >> g.l) & 1 = 1 LOOP
    lefts[f.level + 1] := f.hash;
  END LOOP;
  FOR k IN 1..n LOOP
    i := base + k - 1;
    h := decode(p_leaves[k], 'hex');
    lvl := 0;
    levels := levels || 0::smallint; idxs := idxs || i; hashes := hashes || h;
    -- A right child completes its parent with the left sibling kept for it, and so on up; the node where this
    -- stops is a left child, kept for the leaves to come.
    WHILE (i >> lvl) & 1 = 1 LOOP
      h := sha256('\x01'::bytea || lefts[lvl + 1] || h);
      lvl := lvl + 1;
      levels := levels || lvl::smallint; idxs := idxs || (i >> lvl); hashes := hashes || h;
    END LOOP;
    lefts[lvl + 1] := h;
  END LOOP;
  INSERT INTO receipt_log_nodes (level, idx, hash) SELECT * FROM unnest(levels, idxs, hashes);
  RETURN base;
END $function$
