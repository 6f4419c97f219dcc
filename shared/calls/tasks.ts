/**
 * MCP tasks backed by the calls table (docs/mcp.md, "Tasks"): a task IS a call. Its id is the call id, its state is
 * read from the call row and the receipt every time (so any API process answers, and a restart loses nothing);
 * `mcp_tasks` (its table: shared/db/migrations/016_mcp_tasks.ts) only records who created it. Nothing about a task lives in a process's memory.
 *
 *   call queued · running · settling   → working
 *   running, its agent waiting on a question → input_required (answer: POST /v0/calls/{id}/input)
 *   receipt succeeded · pending_approval → completed (the tool's result says which)
 *   receipt failed / cancelled          → cancelled
 *   any other receipt (failed, denied, rejected_input) → failed
 */
import type { Db } from '../db/connect.js';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Who may see a task: the creator (an agent key's prefix, or `operator` in dev mode) under the mandate it used. */
export interface TaskOwner {
  owner: string;
  mandateId: string;
}

/** The MCP `Task` object (the SDK's TaskSchema). */
export type CallTask = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** How long the result (a success's output) waits for its pickup, in ms. */
  ttl: number;
  pollInterval: number;
};

const TASK_POLL_INTERVAL_MS = 1_000;
const TASK_PAGE_SIZE = 50;

export const isTerminal = (status: TaskStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/** Records `who` as the creator of the task `callId`; `contextId`: an A2A task's context, when its client named one. */
export async function recordTask(db: Db, callId: string, who: TaskOwner, contextId?: string): Promise<void> {
  await db('mcp_tasks').insert({ call_id: callId, owner: who.owner, mandate_id: who.mandateId, ...(contextId !== undefined ? { context_id: contextId } : {}) });
}

/** The task `callId` if `who` created it (its A2A context, null when none was named); null otherwise. */
export async function ownedTask(db: Db, callId: string, who: TaskOwner): Promise<{ contextId: string | null } | null> {
  const row = (await db('mcp_tasks').where({ call_id: callId, owner: who.owner, mandate_id: who.mandateId }).first('context_id')) as
    | { context_id: string | null }
    | undefined;
  return row ? { contextId: row.context_id } : null;
}

/** `who`'s task ids (with their A2A contexts), newest first, `limit` after the cursor's (the last id of a page), in one context if named; and how many there are. */
export async function ownedTaskIds(
  db: Db,
  who: TaskOwner,
  page: { limit: number; after?: string; contextId?: string },
): Promise<{ tasks: Array<{ id: string; contextId: string | null }>; total: number }> {
  const owned = () => {
    const q = db('mcp_tasks').where({ owner: who.owner, mandate_id: who.mandateId });
    if (page.contextId !== undefined) q.andWhereRaw('coalesce(context_id, call_id) = ?', [page.contextId]);
    return q;
  };
  const q = owned()
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'call_id', order: 'desc' },
    ])
    .limit(page.limit)
    .select('call_id', 'context_id');
  if (page.after !== undefined)
    q.andWhereRaw('(created_at, call_id) < (SELECT created_at, call_id FROM mcp_tasks WHERE call_id = ? AND owner = ? AND mandate_id = ?)', [
      page.after,
      who.owner,
      who.mandateId,
    ]);
  const rows = (await q) as Array<{ call_id: string; context_id: string | null }>;
  const counted = (await owned().count({ n: '*' }).first()) as { n: string | number } | undefined;
  return { tasks: rows.map((r) => ({ id: r.call_id, contextId: r.context_id })), total: Number(counted?.n ?? 0) };
}

/** A row of `tasksOf`: the task, its call and its receipt (left joined: null before they exist; shared/db/connect.ts). */
interface TaskRow {
  call_id: string;
  created_at: Date;
  call_status: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  receipt_status: string | null;
  error_code: string | null;
  receipt_at: Date | null;
  /** The question the running call waits on (its event id), if it does. */
  open_question: number | null;
}

function tasksOf(db: Db, who: TaskOwner) {
  return db('mcp_tasks as t')
    .leftJoin('calls as c', 'c.id', 't.call_id')
    .leftJoin('receipts as r', 'r.id', 't.call_id')
    .where({ 't.owner': who.owner, 't.mandate_id': who.mandateId })
    .select(
      't.call_id',
      't.created_at',
      'c.status as call_status',
      'c.started_at',
      'c.finished_at',
      'r.status as receipt_status',
      'r.error_code',
      'r.created_at as receipt_at',
      db.raw(
        `(SELECT CASE WHEN e.kind = 'input_required' AND e.answer_ref IS NULL THEN e.seq END FROM call_stream_events e
           WHERE e.call_id = t.call_id AND e.kind IN ('input_required', 'input_provided') ORDER BY e.seq DESC LIMIT 1) AS open_question`,
      ),
    );
}

const iso = (v: Date | null): string | undefined => (v === null || v === undefined ? undefined : new Date(v).toISOString());

function taskFromRow(row: TaskRow, ttlMs: number): CallTask {
  const id = String(row.call_id);
  const receipt = row.receipt_status;
  let status: TaskStatus;
  let statusMessage: string;
  if ((receipt === null || receipt === undefined) && row.open_question !== null && row.open_question !== undefined) {
    status = 'input_required';
    statusMessage = `call ${id} waits for an answer to question ${String(row.open_question)}: POST /v0/calls/${id}/input`;
  } else if (receipt === null || receipt === undefined) {
    status = 'working';
    statusMessage = `call ${id} ${String(row.call_status ?? 'queued')}`;
  } else if (receipt === 'succeeded' || receipt === 'pending_approval') {
    status = 'completed';
    statusMessage = `call ${id} ${receipt}`;
  } else {
    status = receipt === 'failed' && row.error_code === 'cancelled' ? 'cancelled' : 'failed';
    statusMessage = `call ${id} ${receipt}${row.error_code ? ` (${String(row.error_code)})` : ''}`;
  }
  const createdAt = iso(row.created_at)!;
  const lastUpdatedAt = iso(row.receipt_at) ?? iso(row.finished_at) ?? iso(row.started_at) ?? createdAt;
  return { taskId: id, status, statusMessage, createdAt, lastUpdatedAt, ttl: ttlMs, pollInterval: TASK_POLL_INTERVAL_MS };
}

/** The task, if `who` created it; null otherwise (another principal's task does not exist for it). */
export async function readTask(db: Db, callId: string, who: TaskOwner, ttlMs: number): Promise<CallTask | null> {
  const row: TaskRow | undefined = await tasksOf(db, who).andWhere('t.call_id', callId).first();
  return row ? taskFromRow(row, ttlMs) : null;
}

/** `who`'s tasks, newest first, TASK_PAGE_SIZE at a time; the cursor is opaque (the last task of the page). */
export async function listTasks(db: Db, who: TaskOwner, ttlMs: number, cursor?: string): Promise<{ tasks: CallTask[]; nextCursor?: string }> {
  const q = tasksOf(db, who)
    .orderBy([
      { column: 't.created_at', order: 'desc' },
      { column: 't.call_id', order: 'desc' },
    ])
    .limit(TASK_PAGE_SIZE + 1);
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    if (!after) throw new Error('the cursor is not one tasks/list gave');
    q.andWhereRaw('(t.created_at, t.call_id) < (?::timestamptz, ?)', [after.createdAt, after.id]);
  }
  const rows: TaskRow[] = await q;
  const page = rows.slice(0, TASK_PAGE_SIZE);
  const last = page[page.length - 1];
  return {
    tasks: page.map((r) => taskFromRow(r, ttlMs)),
    ...(rows.length > TASK_PAGE_SIZE && last ? { nextCursor: encodeCursor(new Date(last.created_at), String(last.call_id)) } : {}),
  };
}

function encodeCursor(createdAt: Date, id: string): string {
  // created_at is kept to the millisecond (shared/db/migrations/016_mcp_tasks.ts), so a JS Date carries it exactly.
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && !Number.isNaN(Date.parse(v[0]))) {
      return { createdAt: v[0], id: v[1] };
    }
  } catch {
    /* not ours */
  }
  return undefined;
}

/**
 * Retention: deletes up to `limit` task rows created before `before` whose call is final — its receipt exists (a
 * settled call, or a refusal, which has no call row) and no call row of it is still open. A working task is never
 * deleted, however old. The task of a deleted row is unknown from then on (`-32602`, like another principal's).
 */
export async function deleteFinishedTasks(db: Db, before: Date, limit: number): Promise<number> {
  const r = await db.raw<{ rows: unknown[] }>(
    `DELETE FROM mcp_tasks WHERE call_id IN (
       SELECT t.call_id FROM mcp_tasks t
        WHERE t.created_at < ?
          AND EXISTS (SELECT 1 FROM receipts r WHERE r.id = t.call_id)
          AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = t.call_id AND c.status NOT IN ('succeeded', 'failed'))
        ORDER BY t.created_at LIMIT ?
     ) RETURNING call_id`,
    [before, limit],
  );
  return r.rows.length;
}
