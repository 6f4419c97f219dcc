/**
 * Reading a call's events after a given id, in any API process: `queued` and `running` from the call row, the run's
 * own events from their rows with their content from the ephemeral store, and `completed` once the receipt exists.
 * The receipt is read before the rows: a receipt is written after the run's last event, so once it is seen every row
 * is there, and `completed` is always the last event, after every chunk.
 */
import type { ServiceContext } from '../../context.js';
import { loadReceiptTree, type ReceiptView } from '../../receipts/store.js';
import { eventKey } from '../wire.js';
import { eventRowsAfter, type EventRow } from './rows.js';
import { type CallEvent, FIRST_APPENDED_ID, QUEUED_ID, RUNNING_ID } from './types.js';

export interface EventsPage {
  events: CallEvent[];
  /** `completed` is among them: the stream is over. */
  done: boolean;
}

/** The data of the final event: the call's answer with its receipt (the route builds it: REST, MCP). */
export type FinalAnswer = (receipt: ReceiptView) => Promise<unknown>;

export async function eventsAfter(ctx: ServiceContext, callId: string, after: number, final: FinalAnswer): Promise<EventsPage> {
  const receipt = await loadReceiptTree(ctx.db, callId);
  // A request refused or held for approval has a receipt and no call row: it was never queued.
  const call = (await ctx.db('calls').where({ id: callId }).first('started_at')) as { started_at: Date | null } | undefined;
  const rows = await eventRowsAfter(ctx.db, callId, Math.max(after, RUNNING_ID));
  const events: CallEvent[] = [];
  if (after < QUEUED_ID && call) events.push({ id: QUEUED_ID, event: 'queued', data: { call: { id: callId } } });
  if (after < RUNNING_ID && call && call.started_at !== null) events.push({ id: RUNNING_ID, event: 'running', data: { call: { id: callId } } });
  for (const row of rows) events.push(await eventOf(ctx, callId, row));
  if (!receipt) return { events, done: false };
  const last = rows.length > 0 ? rows[rows.length - 1]!.seq : Math.max(after, RUNNING_ID);
  const completedId = Math.max(last, FIRST_APPENDED_ID - 1) + 1;
  if (after < completedId) events.push({ id: completedId, event: 'completed', data: await final(receipt) });
  return { events, done: true };
}

/** One appended event with its content; content past its time in the store says so (`expired`), never guesses. */
async function eventOf(ctx: ServiceContext, callId: string, row: EventRow): Promise<CallEvent> {
  if (row.kind === 'input_provided') return { id: row.seq, event: row.kind, data: { question: row.chunk } };
  const text = await ctx.messaging.store.peek(eventKey(callId, row.seq));
  const content = text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  switch (row.kind) {
    case 'output.chunk':
      return {
        id: row.seq,
        event: row.kind,
        data: content ?? { seq: row.chunk, expired: true, ...(row.units !== null ? { units_so_far: Number(row.units) } : {}) },
      };
    case 'progress':
      return { id: row.seq, event: row.kind, data: content ?? { ...(row.fraction !== null ? { fraction: row.fraction } : {}) } };
    case 'input_required':
      return { id: row.seq, event: row.kind, data: { question: row.seq, request: content ?? null, answered: row.answerRef !== null } };
  }
}
