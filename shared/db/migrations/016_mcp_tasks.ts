/**
 * MCP tasks (docs/mcp.md, "Tasks"): a `call_agent` started as a task is a call like any other; its state is the
 * call row and its receipt. This table only says whose task it is: `owner` (the agent key's prefix, hosted, or
 * `operator` in dev mode) under `mandate_id`, so that only its creator reads, lists or cancels it, from any API
 * process. `call_id` is the call's (and receipt's) id: a refused call has a receipt and no call row, so no foreign key.
 */
export const name = '016_mcp_tasks';

export const statements = [
  `CREATE TABLE mcp_tasks (
     call_id     text PRIMARY KEY,
     owner       text NOT NULL,
     mandate_id  text NOT NULL,
     created_at  timestamptz(3) NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, mandate_id, created_at DESC, call_id DESC)`,
];
