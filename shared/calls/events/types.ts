/**
 * A call's events (docs/lifecycle.md, "A call's events"): one ordered, append-only sequence per call, the same for
 * REST (Server-Sent Events), webhooks and MCP. Ids are whole numbers, in order: `queued` is 1 and `running` 2 (read
 * from the call row), the events the run appends are 3 and up (rows of `call_stream_events`, their content in the
 * ephemeral store), and `completed` (read from the receipt) follows the last of them.
 */

const EVENT_NAMES = ['queued', 'running', 'progress', 'output.chunk', 'input_required', 'input_provided', 'completed'] as const;
type EventName = (typeof EVENT_NAMES)[number];

/** The events a run appends (rows); the others are read from the call row and its receipt. */
export type AppendedEventName = 'progress' | 'output.chunk' | 'input_required' | 'input_provided';

export const QUEUED_ID = 1;
export const RUNNING_ID = 2;
/** The first id a run's own events take. */
export const FIRST_APPENDED_ID = 3;

/** One event as every projection carries it: its id, its name, its data (JSON). */
export interface CallEvent {
  id: number;
  event: EventName;
  data: unknown;
}

/** How a call that streamed or asked ended (the receipt's `ended_by`). */
export type EndedBy = 'completed' | 'budget' | 'cancelled' | 'disconnected' | 'no_answer' | 'error' | 'timeout';

/** What a streamed (or asking) call delivered and how it ended: stored with its outcome, signed in its receipt. */
export interface StreamRecord {
  delivered: { chunks: number; units: string };
  ended_by: EndedBy;
}

/** A question an agent asks its caller mid-run (`input_required`): words, and the JSON Schema the answer must meet. */
export interface InputRequest {
  message: string;
  schema?: Record<string, unknown>;
}

/** The Server-Sent Events form of one event (`id:`, `event:`, one `data:` line of JSON). */
export function sseFrame(e: CallEvent): string {
  return `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The event id a reconnecting client names (`Last-Event-ID`): the events after it are sent; 0 for none or nonsense. */
export function lastEventId(header: string | undefined): number {
  if (header === undefined || !/^\d{1,9}$/.test(header.trim())) return 0;
  return Number(header.trim());
}
