/**
 * A 2026-07-28 MCP agent that answers a tool call with a task (the tasks extension `io.modelcontextprotocol/tasks`,
 * docs/mcp.md): the SDK's client refuses such a result, so the runtime follows the task itself, with the client's own
 * `request` (which sends the envelope and the standard headers):
 *
 *   tasks/get       every pollIntervalMs the task asks for (kept between 100 ms and 5 s), until it ends;
 *   input_required  each form it asks (`elicitation/create`, form mode) is the run's question to its caller, answered
 *                   with `tasks/update`; a request nobody can answer (no caller to ask, a URL or another kind) is
 *                   declined; a question left unanswered is cancelled (the run then ends `no_answer`);
 *   completed       its `result` is read as any tool result (tool-result.ts);
 *   failed          agent_error with the task's error message; cancelled: agent_error;
 *   the run's signal  (timeout, cancellation) sends `tasks/cancel`, best effort, and ends the call as the signal says.
 */
import type { Client } from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import { abortedResult, pauseOrAbort } from '../abort.js';
import { agentError } from '../messages.js';
import type { RunContext, RunResult, RunStream } from '../types.js';
import { Exchange, follow, within } from './exchange.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5_000;
/** tasks/cancel after the run ended is a courtesy: never waited on for longer than this. */
const CANCEL_TIMEOUT_MS = 2_000;

const Loose = z.object({}).loose();
const Polled = z
  .object({
    status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
    statusMessage: z.string().optional(),
    pollIntervalMs: z.number().optional(),
    inputRequests: z.record(z.string(), z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() }).loose()).optional(),
    result: z.unknown().optional(),
    error: z.object({ message: z.string().optional() }).loose().optional(),
  })
  .loose();
type Polled = z.infer<typeof Polled>;

/** The task's end: its tool result (to read as any), or the run's result when it ended otherwise. */
export type TaskEnd = { kind: 'result'; result: unknown } | { kind: 'ended'; result: RunResult };

export async function followTask(client: Client, task: { taskId: string; pollIntervalMs?: number }, run: RunContext): Promise<TaskEnd> {
  const { taskId } = task;
  let interval = task.pollIntervalMs;
  // Each request gets a signal that follows the run's only while it is in flight (exchange.ts `follow`).
  const send = async (method: string, params: Record<string, unknown>) => {
    const scoped = follow(run.signal);
    try {
      return await within(new Exchange(run.stream), () =>
        client.request({ method, params: { taskId, ...params } }, method === 'tasks/get' ? Polled : Loose, { signal: scoped.signal }),
      );
    } finally {
      scoped.release();
    }
  };
  try {
    for (;;) {
      await pauseOrAbort(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, interval ?? MIN_POLL_MS)), run.signal);
      const polled = (await send('tasks/get', {})) as Polled;
      if (polled.pollIntervalMs !== undefined) interval = polled.pollIntervalMs;
      if (polled.status === 'completed') return { kind: 'result', result: polled.result };
      if (polled.status === 'failed') return ended(agentError(`the agent's task failed: ${polled.error?.message ?? polled.statusMessage ?? 'no message'}`));
      if (polled.status === 'cancelled') return ended(agentError(`the agent cancelled its task${polled.statusMessage ? `: ${polled.statusMessage}` : ''}`));
      if (polled.status === 'input_required') await send('tasks/update', { inputResponses: await answers(polled.inputRequests ?? {}, run.stream) });
    }
  } catch (err) {
    if (!run.signal.aborted) throw err;
    await within(new Exchange(), () => client.request({ method: 'tasks/cancel', params: { taskId } }, Loose, { timeout: CANCEL_TIMEOUT_MS })).catch(
      () => undefined,
    );
    return ended(abortedResult(run.signal.reason, run.timeoutMs));
  }
}

const ended = (result: RunResult): TaskEnd => ({ kind: 'ended', result });

type InputRequest = NonNullable<Polled['inputRequests']>[string];

/** The task's input requests answered: each form asked of the run's caller, anything else declined. */
async function answers(requests: Record<string, InputRequest>, stream: RunStream | undefined): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [key, request] of Object.entries(requests)) {
    const params = request.params ?? {};
    const form = request.method === 'elicitation/create' && params.mode !== 'url' && typeof params.message === 'string';
    if (!stream || !form) {
      out[key] = { action: 'decline' };
      continue;
    }
    const schema =
      typeof params.requestedSchema === 'object' && params.requestedSchema !== null ? (params.requestedSchema as Record<string, unknown>) : undefined;
    try {
      out[key] = { action: 'accept', content: await stream.ask({ message: params.message as string, ...(schema ? { schema } : {}) }) };
    } catch {
      out[key] = { action: 'cancel' };
    }
  }
  return out;
}
