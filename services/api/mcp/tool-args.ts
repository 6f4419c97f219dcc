/**
 * The arguments of each MCP tool, as its input schema (schemas.ts) accepts them. The server checks the arguments
 * against that schema (and amounts with `tryParseAmount`) before a handler sees them, so handlers read typed fields.
 */

export interface SearchArgs {
  q?: string;
  capability?: string;
}

/** An agent (`ns/name[@range]`), a receipt or an approval, by id. */
export interface IdArgs {
  id: string;
}

export interface CallAgentArgs {
  agent?: string;
  capability?: string;
  /** The agent's input: a JSON object, checked against the agent's own input schema at admission. */
  input: unknown;
  /** A decimal amount in the mandate currency (already checked by `tryParseAmount`). */
  max_cost?: string;
  approval?: string;
}

type NoArgs = Record<string, never>;

export interface ListArgs {
  cursor?: string;
}

export interface ToolArgs {
  search_agents: SearchArgs;
  get_agent: IdArgs;
  call_agent: CallAgentArgs;
  get_receipt: IdArgs;
  list_approvals: NoArgs;
  get_approval: IdArgs;
  list_calls: ListArgs;
  get_budget: NoArgs;
}

export type ToolName = keyof ToolArgs;
