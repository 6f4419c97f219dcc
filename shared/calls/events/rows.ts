/**
 * The rows of a call's events (`call_stream_events`): appended by the run that holds the call (its only writer, so
 * ids are numbered without a race), read by any API process, and a question's answer reference taken once.
 */
import type { Db, Queryable } from '../../db/connect.js';
import { toBigInt } from '../../db/connect.js';
import type { AppendedEventName } from './types.js';

export interface EventRow {
  seq: number;
  kind: AppendedEventName;
  chunk: number | null;
  units: bigint | null;
  fraction: number | null;
  answerRef: string | null;
}

interface RawRow {
  seq: number | string;
  kind: AppendedEventName;
  chunk: number | string | null;
  units: string | number | bigint | null;
  fraction: number | string | null;
  answer_ref: string | null;
}

const fromRaw = (r: RawRow): EventRow => ({
  seq: Number(r.seq),
  kind: r.kind,
  chunk: r.chunk === null ? null : Number(r.chunk),
  units: r.units === null ? null : toBigInt(r.units),
  fraction: r.fraction === null ? null : Number(r.fraction),
  answerRef: r.answer_ref,
});

export async function appendEventRow(
  db: Queryable,
  callId: string,
  row: { seq: number; kind: AppendedEventName; chunk?: number; units?: bigint; fraction?: number },
): Promise<void> {
  await db('call_stream_events').insert({
    call_id: callId,
    seq: row.seq,
    kind: row.kind,
    chunk: row.chunk ?? null,
    units: row.units === undefined ? null : row.units.toString(),
    fraction: row.fraction ?? null,
  });
}

/** The call's appended events after `after`, in order. */
export async function eventRowsAfter(db: Queryable, callId: string, after: number): Promise<EventRow[]> {
  const rows = (await db('call_stream_events').where('call_id', callId).where('seq', '>', after).orderBy('seq')) as RawRow[];
  return rows.map(fromRaw);
}

/** The question the call waits on: its last `input_required`, when no `input_provided` came after it. */
export async function openQuestion(db: Queryable, callId: string): Promise<EventRow | undefined> {
  const last = (await db('call_stream_events').where('call_id', callId).whereIn('kind', ['input_required', 'input_provided']).orderBy('seq', 'desc').first()) as
    | RawRow
    | undefined;
  return last && last.kind === 'input_required' ? fromRaw(last) : undefined;
}

/** Take question `seq` for the answer stored under `ref`: true for the one answer that takes it, false for any other. */
export async function takeQuestion(db: Queryable, callId: string, seq: number, ref: string): Promise<boolean> {
  const taken = await db('call_stream_events')
    .where({ call_id: callId, seq, kind: 'input_required' })
    .whereNull('answer_ref')
    .update({ answer_ref: ref }, ['seq']);
  return taken.length === 1;
}

/** The answer reference question `seq` took, once answered. */
export async function answerRefOf(db: Queryable, callId: string, seq: number): Promise<string | undefined> {
  const row = (await db('call_stream_events').where({ call_id: callId, seq }).first('answer_ref')) as { answer_ref: string | null } | undefined;
  return row?.answer_ref ?? undefined;
}

/**
 * The event rows of finished calls (their receipt written) appended before `before`, at most `limit` of them: the
 * settler's retention sweep. Their content left the ephemeral store long before; the receipt keeps what was delivered.
 */
export async function deleteFinishedEventRows(db: Db, before: Date, limit: number): Promise<number> {
  // RETURNING counts the rows on both drivers (a DELETE's affected count is not one PGlite's driver reports).
  const r = await db.raw<{ rows: unknown[] }>(
    `DELETE FROM call_stream_events WHERE (call_id, seq) IN (
       SELECT e.call_id, e.seq FROM call_stream_events e
        WHERE e.created_at < ? AND EXISTS (SELECT 1 FROM receipts r WHERE r.id = e.call_id)
        ORDER BY e.created_at LIMIT ?
     ) RETURNING seq`,
    [before, limit],
  );
  return r.rows.length;
}
