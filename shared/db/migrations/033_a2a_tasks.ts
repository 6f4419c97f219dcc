/**
 * A2A tasks (docs/a2a.md): a task is a call, recorded in `mcp_tasks` like an MCP task (who created it, under which
 * mandate); `context_id` is the A2A context the client named when it sent the message (null: the task's own id).
 */
export const name = '033_a2a_tasks';

export const statements = [`ALTER TABLE mcp_tasks ADD COLUMN context_id text CHECK (length(context_id) <= 200)`];
