/**
 * The calls nobody finished, as the sweeper and restart recovery find them (services/settler/sweeper.ts,
 * recovery.ts): reads of the call rows only — closing or handing them out again is the engine's
 * (`CallEngine.close`) and transitions.ts's.
 */
import type { Db } from '../db/connect.js';
import type { CallStatus } from './transitions.js';

type Open = { id: string; status: 'queued' | 'running' };

/** Calls still `queued` that were admitted before `before`, oldest first. */
export async function queuedSince(db: Db, before: Date, limit: number): Promise<string[]> {
  return db('calls').where({ status: 'queued' }).where('created_at', '<', before).orderBy('created_at').limit(limit).pluck('id');
}

/** Calls `queued` or `running` whose deadline passed before `before`. */
export async function pastDeadline(db: Db, before: Date, limit: number): Promise<Open[]> {
  return db('calls').whereIn('status', ['queued', 'running']).where('deadline_at', '<', before).limit(limit).select('id', 'status');
}

/** Calls `settling` never handed to a settler, or last handed out before `before`. */
export async function settlingSince(db: Db, before: Date, limit: number): Promise<string[]> {
  return db('calls')
    .where({ status: 'settling' })
    .where((q) => q.whereNull('settle_enqueued_at').orWhere('settle_enqueued_at', '<', before))
    .limit(limit)
    .pluck('id');
}

/** Every call in one of these states (restart recovery: the in-process queue died with the last process). */
export async function callsIn<S extends CallStatus>(db: Db, statuses: readonly S[]): Promise<Array<{ id: string; status: S }>> {
  const rows: Array<{ id: unknown; status: S }> = await db('calls').whereIn('status', statuses).select('id', 'status');
  return rows.map((r) => ({ id: String(r.id), status: r.status }));
}
