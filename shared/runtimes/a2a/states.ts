/**
 * An A2A task's state as the run's outcome (docs/a2a-agents.md, "States and outcomes"):
 *   completed                    → output: the data part of the last artifact, else of the status message;
 *                                  units / quote from `holon/units` / `holon/quote` in the final metadata
 *   failed / rejected / canceled → agent_error with the agent's status message (never billed)
 *   auth-required                → runtime_unavailable (Holon has no credentials to give but the version's own)
 *   input-required               → a question to the caller (follow.ts)
 *   submitted / working          → not over yet; anything else is agent_error.
 */
import { TaskState, type Message } from '@a2a-js/sdk';
import { readBilling } from '../mcp/tool-result.js';
import { agentError, failure, truncate } from '../messages.js';
import type { RunResult } from '../types.js';
import { dataPartOf, textOf } from './parts.js';

/** What is known of the task being followed, from its snapshots and updates. */
export interface View {
  state: TaskState;
  /** The current status's message. */
  message: Message | undefined;
  /** Which status it is (its message's id, else its timestamp): a question already answered is not asked again. */
  statusKey: string;
  /** The data part of the last artifact seen. */
  artifact: { value: unknown } | undefined;
  /** The units of the last artifact update that had any (streaming). */
  artifactUnits: bigint | undefined;
  /** The final status update's metadata, else the task's. */
  metadata: unknown;
  /** Where `metadata` came from, for messages. */
  where: string;
}

export function emptyView(): View {
  return {
    state: TaskState.TASK_STATE_UNSPECIFIED,
    message: undefined,
    statusKey: '',
    artifact: undefined,
    artifactUnits: undefined,
    metadata: undefined,
    where: 'the task metadata',
  };
}

/** Whether following can stop: the task ended, or it waits for the caller. */
export function isSettled(state: TaskState): boolean {
  return state !== TaskState.TASK_STATE_SUBMITTED && state !== TaskState.TASK_STATE_WORKING;
}

/** Whether the task has ended for good (no cancelTask needed). */
export function isTerminal(state: TaskState): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED
  );
}

function said(message: Message | undefined): string {
  const text = textOf(message);
  return text === '' ? '' : `: ${truncate(text, 150)}`;
}

/** The output of a completed task (or of a message answering the request), with its billing entries. */
export function outputOf(data: { value: unknown } | undefined, metadata: unknown, where: string, fallbackUnits?: bigint): RunResult {
  if (!data) return agentError('the agent completed without a data part (neither in an artifact nor in its message)');
  const billing = readBilling(metadata, where);
  if (!billing.ok) return agentError(billing.message);
  const units = billing.value.units ?? fallbackUnits;
  return {
    kind: 'output',
    output: data.value,
    ...(units !== undefined ? { units } : {}),
    ...(billing.value.quote !== undefined ? { quote: billing.value.quote } : {}),
  };
}

/** The run's outcome for a settled state; 'ask' for input-required; undefined while the task goes on. */
export function outcomeOf(view: View): RunResult | 'ask' | undefined {
  switch (view.state) {
    case TaskState.TASK_STATE_SUBMITTED:
    case TaskState.TASK_STATE_WORKING:
      return undefined;
    case TaskState.TASK_STATE_COMPLETED:
      return outputOf(view.artifact ?? dataPartOf(view.message?.parts), view.metadata, view.where, view.artifactUnits);
    case TaskState.TASK_STATE_FAILED:
      return agentError(`the agent's task failed${said(view.message)}`);
    case TaskState.TASK_STATE_REJECTED:
      return agentError(`the agent rejected the task${said(view.message)}`);
    case TaskState.TASK_STATE_CANCELED:
      return agentError(`the agent cancelled the task${said(view.message)}`);
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return failure('runtime_unavailable', truncate(`the agent asks for authentication (auth-required)${said(view.message)}`, 200));
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return 'ask';
    default:
      return agentError('the agent reported a task in no known state');
  }
}
