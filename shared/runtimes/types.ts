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
  /**
   * The call's events (shared/calls/run/run-stream.ts): chunks of a streamed output, progress, questions to the
   * caller. Absent where nobody listens (an evaluation's cases): chunks and progress then go nowhere, a question fails.
   */
  stream?: RunStream;
}

/**
 * What a run may tell its caller before it ends. Each method resolves once the event is on the call's stream, and
 * rejects when the run is over (the chunk went past the budget or broke `interface.stream.chunk`, the question went
 * unanswered, the call was cancelled): the runtime then ends the agent.
 */
export interface RunStream {
  /** One chunk of a streamed output; `units`: the units delivered so far, cumulative (per_unit). */
  emit(chunk: unknown, units?: number | bigint): Promise<void>;
  progress(p: { message?: string; fraction?: number }): Promise<void>;
  /** Ask the caller; resolves with the answer (checked against `schema`). The run's hard timeout stops meanwhile. */
  ask(request: { message: string; schema?: Record<string, unknown> }): Promise<unknown>;
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
