/**
 * Runtimes run one agent invocation and report what happened, in the agent's own terms.
 * They never throw for anything the agent did: every outcome is a RunResult.
 */
import type { AgentVersion } from '../registry/agent-version.js';
import type { FileLink } from '../files/access.js';

export type { AgentVersion };

export interface RunContext {
  /** Stable call id (the receipt id): agents may deduplicate on it. */
  callId: string;
  /** The caller's cap in the agent's currency, when the caller set one. */
  maxCost?: { amount: string; currency: string };
  /** Fires at the hard timeout or on cancellation; the runtime must abort the agent with it. */
  signal: AbortSignal;
  /** The hard timeout the signal enforces (for information). */
  timeoutMs: number;
  /**
   * A delegation token valid only for this run and only under its sub-mandate (gateway.md §3): remote
   * runtimes pass it to the agent (`x-holon-delegation` for webhooks, `_meta["holon/delegation"]` for MCP).
   */
  delegationToken?: string;
  /**
   * The files the input names, keyed by handle: a signed download link and what to check after download
   * (`_meta["holon/files"]` for MCP, the `x-holon-files` header for webhooks). Absent when the input names none.
   */
  files?: Record<string, FileLink>;
}

export type RunResult =
  /** The agent answered with an output (not yet validated against interface.output). */
  | { kind: 'output'; output: unknown; units?: bigint; quote?: bigint }
  /** The agent reported an error code (declared or not: billing decides). */
  | { kind: 'error'; code: string; message?: string; units?: bigint; quote?: bigint }
  /** Something went wrong that is never billed. */
  | { kind: 'failure'; code: 'timeout' | 'agent_error' | 'runtime_unavailable' | 'cancelled'; message: string };

export interface Runtime {
  run(agent: AgentVersion, input: unknown, ctx: RunContext): Promise<RunResult>;
  /** Release what the runtime keeps between runs (the MCP runtime's pooled sessions). Runs still going fail. */
  close?(): Promise<void>;
}
