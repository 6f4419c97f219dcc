/**
 * The wording every runtime shares for the results it builds: the message length limits, truncation, how a thrown
 * value reads in a message, and the never-billed failure result.
 */
import type { RunResult } from './types.js';

/** The longest message of a failure that quotes something the agent or the network said. */
export const MAX_FAILURE_MESSAGE = 200;
/** The longest message an agent may attach to a declared error code. */
export const MAX_DECLARED_MESSAGE = 1000;

export type Failure = Extract<RunResult, { kind: 'failure' }>;

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A thrown value, for a message: `Name: message` (the name unless plain Error), truncated. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const name = err.name && err.name !== 'Error' ? `${err.name}: ` : '';
    return truncate(`${name}${err.message}`, MAX_FAILURE_MESSAGE);
  }
  if (typeof err === 'string') return truncate(err, MAX_FAILURE_MESSAGE);
  return `a thrown ${err === null ? 'null' : typeof err} that is not an Error`;
}

export function failure(code: Failure['code'], message: string): Failure {
  return { kind: 'failure', code, message };
}

/** An agent_error, its message truncated to MAX_FAILURE_MESSAGE. */
export function agentError(message: string): Failure {
  return failure('agent_error', truncate(message, MAX_FAILURE_MESSAGE));
}
