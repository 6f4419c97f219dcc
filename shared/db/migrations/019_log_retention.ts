/**
 * Retention of the delivery log and of MCP task rows (docs/webhooks.md "Retention", docs/mcp.md "Tasks";
 * services/settler/retention.ts deletes them after HOLON_DELIVERY_RETENTION_DAYS).
 *
 * - `webhook_attempts` stays append-only for as long as its delivery exists: an update is refused as before, and a
 *   delete is refused unless its delivery row is gone — the attempts go only with their delivery, all at once
 *   (`ON DELETE CASCADE`), never one by one out of a log that is still kept. Truncation stays refused.
 * - Indexes for the retention sweep: finished deliveries by `finished_at`, tasks by `created_at`.
 */
export const name = '019_log_retention';

export const statements = [
  `ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey`,
  `ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey
     FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE`,
  `DROP TRIGGER webhook_attempts_append_only ON webhook_attempts`,
  `CREATE TRIGGER webhook_attempts_append_only BEFORE UPDATE ON webhook_attempts
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
  `CREATE FUNCTION webhook_attempts_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = OLD.delivery_id) THEN
       RAISE EXCEPTION 'webhook_attempts is append-only: an attempt is deleted only with its delivery'
         USING ERRCODE = 'insufficient_privilege';
     END IF;
     RETURN OLD;
   END $$`,
  `CREATE TRIGGER webhook_attempts_with_their_delivery BEFORE DELETE ON webhook_attempts
     FOR EACH ROW EXECUTE FUNCTION webhook_attempts_refuse_delete()`,
  `CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending'`,
  `CREATE INDEX mcp_tasks_created ON mcp_tasks (created_at)`,
];
