/**
 * The call row and its transitions (gateway.md §1, DESIGN.md §3.4): the row decides, the queues only carry ids.
 * The one TypeScript file that writes `calls.status` (scripts/lint-call-status.ts keeps it so; the SQL functions
 * that admit a call write its first `queued`).
 *
 *   queued ──claim (one runner wins)──► running ──close──► settling ──settle (settle/)──► succeeded | failed
 *     └───────────── close (cancelled, never reached a runner, restart) ──────────┘
 *
 * Every transition is a conditional UPDATE on the row, so exactly one of two racing writers wins. The hand-off of a
 * closed call to settlement is the engine's (`CallEngine.close`, engine.ts).
 */
import type { Db, DbBigInt, Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import type { SqlFragment } from '../db/prepared.js';
import type { ServiceContext } from '../context.js';
import type { AdmittedCall } from '../ledger/money-functions.js';
import { RUN_QUEUE, SETTLE_QUEUE, type CallJob } from './wire.js';
import type { CallOutcome } from './call-outcome.js';

export type CallStatus = 'queued' | 'running' | 'settling' | 'succeeded' | 'failed';

/** A claimed call: what the runner reads of its row. */
export interface ClaimedCall {
  agentId: string;
  agentVersion: string;
  rootId: string;
  payer: string;
  /** The mandate's currency: the call's reservation and charge are in it. */
  currency: string;
  /** The caller's cap, in the mandate's currency; undefined when it set none. */
  maxCost: bigint | undefined;
  timeoutMs: number;
  /** The mandate it runs under: its document is read by the runner (`knownMandate`, cached per process). */
  mandateId: string;
}

/** The claim's row: the call's columns the runner reads (connect.ts: how the drivers return them). */
interface ClaimedCallRow {
  agent_id: string;
  agent_version: string;
  root_id: string;
  payer: string;
  currency: string;
  mandate_id: string;
  max_cost: DbBigInt | null;
  timeout_ms: number;
}

function claimedCallFromRow(row: ClaimedCallRow): ClaimedCall {
  return {
    agentId: row.agent_id,
    agentVersion: row.agent_version,
    rootId: row.root_id,
    payer: row.payer,
    currency: row.currency,
    maxCost: row.max_cost === null || row.max_cost === undefined ? undefined : toBigInt(row.max_cost),
    timeoutMs: row.timeout_ms,
    mandateId: row.mandate_id,
  };
}

/** A call admitted `running` (shared/calls/run/run-here.ts), as its run reads it: its admitted row stands for the claim's. */
export function claimedOf(row: AdmittedCall): ClaimedCall {
  return claimedCallFromRow(row);
}

/**
 * Move the call from `queued` to `running` (at most one delivery wins) and start its hard deadline. Null when the
 * call was not `queued`.
 */
export async function claimCall(db: Db, callId: string): Promise<ClaimedCall | null> {
  const claimed = await db.raw<{ rows: ClaimedCallRow[] }>(
    `UPDATE calls c SET status = 'running', started_at = now(), deadline_at = now() + make_interval(secs => c.timeout_ms / 1000.0)
      WHERE c.id = ? AND c.status = 'queued'
     RETURNING c.agent_id, c.agent_version, c.root_id, c.payer, c.currency, c.mandate_id, c.max_cost, c.timeout_ms`,
    [callId],
  );
  const row = claimed.rows[0];
  return row ? claimedCallFromRow(row) : null;
}

/**
 * A running call's deadline moved to `ms` from now: the run waits for its caller's answer (the wait's bound plus what
 * is left of its hard timeout), or goes on after one (what is left). The sweeper closes a call only past it.
 */
export async function moveRunDeadline(db: Db, callId: string, ms: number): Promise<void> {
  await db.raw(`UPDATE calls SET deadline_at = now() + make_interval(secs => ? / 1000.0) WHERE id = ? AND status = 'running'`, [ms, callId]);
}

/**
 * A reserved call's row, `queued`, written in the reserving transaction (submit/reserve.ts: a redeemed grant or a
 * reservation from a parent hold; the common case is written by the admission's SQL function).
 */
export async function insertQueuedCall(trx: Queryable, row: AdmittedCall, approvalId: string | undefined): Promise<void> {
  await trx('calls').insert({ ...row, status: 'queued', approval_id: approvalId ?? null });
}

/**
 * Move the call from `from` to `settling` with its outcome, and record the hand-off's time (the engine hands it to
 * settlement next: `CallEngine.close`). The row in `settling` is the durable hand-off: whatever is lost on the way,
 * the sweeper hands out again. A call that is no longer in `from` (someone else closed it) is left alone: false.
 */
export async function closeCallRow(db: Db, callId: string, from: 'queued' | 'running', outcome: CallOutcome): Promise<boolean> {
  const r = await db.raw<{ rows: unknown[] }>(
    `UPDATE calls SET status = 'settling', outcome = ?::jsonb, finished_at = now(), error_code = ?, settle_enqueued_at = now()
      WHERE id = ? AND status = ? RETURNING id`,
    [JSON.stringify(outcome), outcome.code ?? null, callId, from],
  );
  return r.rows.length > 0;
}

/** The sub-mandate a running call's agent delegates under (run/delegate.ts), recorded on its row. */
export async function recordSubMandate(db: Db, callId: string, subMandateId: string): Promise<void> {
  await db('calls').where({ id: callId }).update({ sub_mandate_id: subMandateId });
}

/**
 * Hand a settling call to the settler. The job id deduplicates; a re-handout (sweeper) uses a fresh id, because
 * a failed job's id stays taken in Redis for an hour and settling is idempotent anyway.
 */
export async function enqueueSettle(ctx: ServiceContext, callId: string, handout = 0): Promise<void> {
  await queueSettleJob(ctx, callId, handout);
  await ctx
    .db('calls')
    .where({ id: callId })
    .update({ settle_enqueued_at: new Date(ctx.now()) });
}

/** The settle job alone (the caller records `settle_enqueued_at`; closeCallRow does it in its own UPDATE). */
export async function queueSettleJob(ctx: ServiceContext, callId: string, handout: number): Promise<void> {
  const jobId = handout ? `settle-${callId}-${handout}` : `settle-${callId}`;
  await ctx.messaging.queues.queue<CallJob>(SETTLE_QUEUE).add({ callId }, { jobId, attempts: 10, backoffMs: 500 });
}

/**
 * A run job is retried when its delivery fails before the claim (a transient database error): the claim decides,
 * so a retry never runs an agent twice.
 */
const RUN_JOB = { attempts: 5, backoffMs: 200 };
/** The one re-handout of a stranded call (`requeueStranded` in the settler's sweeper). */
const requeueJobId = (callId: string): string => `${callId}:requeue`;

/**
 * Hand a reserved call to the runners: the job id is the call id, so a repeated add is one job. `requeue` hands a
 * stranded call out once more under its own job id (a failed job's id stays taken for an hour).
 */
export async function enqueueRun(ctx: ServiceContext, callId: string, options: { requeue?: boolean } = {}): Promise<void> {
  const jobId = options.requeue ? requeueJobId(callId) : callId;
  await ctx.messaging.queues.queue<CallJob>(RUN_QUEUE).add({ callId }, { jobId, ...RUN_JOB });
}

/** Whether a run job for this call still waits, runs or awaits a retry (the first handout or the re-handout). */
export async function runJobPending(ctx: ServiceContext, callId: string): Promise<boolean> {
  const queue = ctx.messaging.queues.queue<CallJob>(RUN_QUEUE);
  return (await queue.pending(callId)) || (await queue.pending(requeueJobId(callId)));
}

/** The call row's status, or undefined when there is no such call. */
export async function callStatus(db: Db, callId: string): Promise<CallStatus | undefined> {
  const row: { status: CallStatus } | undefined = await db('calls').where({ id: callId }).first('status');
  return row?.status;
}

/** What a reader of a call may see before its receipt exists: its status and the mandate it runs under. */
export async function readCall(db: Db, callId: string): Promise<{ id: string; status: CallStatus; mandateId: string } | undefined> {
  const row: { id: string; status: CallStatus; mandate_id: string } | undefined = await db('calls').where({ id: callId }).first('id', 'status', 'mandate_id');
  return row ? { id: row.id, status: row.status, mandateId: row.mandate_id } : undefined;
}

const FINAL_STATUSES_UPDATE = `UPDATE calls c SET status = v.status,
       outcome = CASE WHEN v.closed THEN v.outcome ELSE c.outcome END,
       error_code = CASE WHEN v.closed THEN v.error_code ELSE c.error_code END,
       finished_at = CASE WHEN v.closed THEN now() ELSE c.finished_at END
  FROM unnest(?::text[], ?::text[], ?::boolean[], ?::jsonb[], ?::text[]) AS v(id, status, closed, outcome, error_code)
 WHERE c.id = v.id`;

/**
 * The settlement's transition, `settling → succeeded | failed`, for many calls in ONE UPDATE: a query for the
 * settlement's statement to embed (shared/calls/settle/write.ts), the calls' rows already locked in its transaction.
 * A call closed in that same transaction (`running` until then: engine.close on a call run here) has its outcome,
 * error code and end written by it too — the close and the settlement commit together.
 */
export function finalStatusesUpdate(finals: ReadonlyArray<{ id: string; status: 'succeeded' | 'failed'; closed?: CallOutcome }>): SqlFragment {
  // Fixed text, whatever the number of calls (a column an array): not rebuilt for each batch.
  return {
    sql: FINAL_STATUSES_UPDATE,
    bindings: [
      finals.map((f) => f.id),
      finals.map((f) => f.status),
      finals.map((f) => f.closed !== undefined),
      finals.map((f) => (f.closed ? JSON.stringify(f.closed) : null)),
      finals.map((f) => (f.closed ? (f.closed.code ?? null) : null)),
    ] as import('knex').Knex.Value[],
  };
}
