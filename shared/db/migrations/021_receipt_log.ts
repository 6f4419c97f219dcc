/**
 * Signed receipts and mandates, and the transparency log of receipts (docs/receipts.md).
 *
 * - `receipts.signature`: the receipt's JWS (detached payload, EdDSA), written with the row, in its transaction.
 *   Receipts written before this migration have none (and are not in the log).
 * - `mandates.statement` and `mandates.signature`: what the gateway signed when it stored the mandate (its document,
 *   the authenticated issuer, the time, its parent's hash; shared/mandates/signing.ts) and the JWS.
 * - `signing_keys`: the public half of every key that signed here, registered by each process before it signs
 *   (`retired_at` set by `holon keys rotate`): the key set publishes them, backups carry them. Never a private key.
 * - The log, an RFC 6962 Merkle tree: `receipt_log_leaves` maps each leaf index to its receipt;
 *   `receipt_log_nodes` keeps every complete subtree's hash (level 0: the leaf hashes, SHA-256(0x00 ‖ canonical
 *   receipt)), so any root or proof is read in O(log n) rows; `receipt_log_checkpoints` keeps the signed checkpoints.
 *   All three are append-only.
 * - `holon_log_append(ids, leaf_hashes)` (the hashes in hex) appends leaves in the caller's transaction, after every other lock it takes
 *   (docs/ledger.md): under a transaction-level advisory lock, so appends are serialized and the log's order is the
 *   commit order of the transactions that wrote the receipts. It writes each leaf and every subtree it completes, and
 *   answers the first leaf's index.
 */
export const name = '021_receipt_log';

/** The advisory lock key of the log's appends: "HolonLog" in ASCII, as a bigint. */
const LOG_LOCK_KEY = '5219509718993366887';

export const statements = [
  `ALTER TABLE receipts ADD COLUMN signature text`,
  `ALTER TABLE mandates ADD COLUMN statement text, ADD COLUMN signature text`,
  `CREATE TABLE signing_keys (
     kid           text PRIMARY KEY,
     public_jwk    jsonb NOT NULL,
     first_used_at timestamptz NOT NULL DEFAULT now(),
     retired_at    timestamptz
   )`,
  `CREATE TABLE receipt_log_leaves (
     idx        bigint PRIMARY KEY CHECK (idx >= 0),
     receipt_id text NOT NULL UNIQUE REFERENCES receipts(id)
   )`,
  `CREATE TABLE receipt_log_nodes (
     level smallint NOT NULL CHECK (level >= 0 AND level < 64),
     idx   bigint NOT NULL CHECK (idx >= 0),
     hash  bytea NOT NULL CHECK (length(hash) = 32),
     PRIMARY KEY (level, idx)
   )`,
  `CREATE TABLE receipt_log_checkpoints (
     size       bigint PRIMARY KEY CHECK (size >= 0),
     root       bytea NOT NULL CHECK (length(root) = 32),
     note       text NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  ...['receipt_log_leaves', 'receipt_log_nodes', 'receipt_log_checkpoints'].flatMap((table) => [
    `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
       FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
    `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table}
       FOR EACH STATEMENT EXECUTE FUNCTION journal_refuse_change()`,
  ]),
  `CREATE FUNCTION holon_log_append(p_ids text[], p_leaves text[]) RETURNS bigint LANGUAGE plpgsql AS $$
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
     PERFORM pg_advisory_xact_lock(${LOG_LOCK_KEY});
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
         h := sha256('\\x01'::bytea || lefts[lvl + 1] || h);
         lvl := lvl + 1;
         levels := levels || lvl::smallint; idxs := idxs || (i >> lvl); hashes := hashes || h;
       END LOOP;
       lefts[lvl + 1] := h;
     END LOOP;
     INSERT INTO receipt_log_nodes (level, idx, hash) SELECT * FROM unnest(levels, idxs, hashes);
     RETURN base;
   END $$`,
];
