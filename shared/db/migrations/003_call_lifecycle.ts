/**
 * What the call lifecycle needs beyond the first schema: the runner's verdict on the call row (never an
 * output), the callback address, and when a settling call was last handed to the settler.
 */
export const name = '003_call_lifecycle';

export const statements = [
  // {kind, code?, billed, own, units?, quote?, duration_ms}: the outcome, never the output
  `ALTER TABLE calls ADD COLUMN outcome jsonb`,
  `ALTER TABLE calls ADD COLUMN callback_url text`,
  `ALTER TABLE calls ADD COLUMN settle_enqueued_at timestamptz`,
  `CREATE INDEX receipts_created ON receipts (created_at DESC, id DESC) WHERE parent_id IS NULL`,
];
