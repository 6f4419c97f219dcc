/**
 * Webhook deliveries and their log (docs/webhooks.md; tables of migration 015). One delivery per call with a
 * `callback_url`, its row written by the settlement in its own transaction (an outbox: a settler that dies right
 * after the commit loses no delivery; the dispatcher, services/settler/callbacks.ts, finds the row); its id is the
 * `webhook-id`. Each attempt is appended to `webhook_attempts` once it ended; the delivery row says where the
 * schedule is and how it ended. Finished deliveries are deleted after the retention (`deleteFinishedDeliveries`).
 *
 * Attempts are at least once (a settler that dies mid-attempt has its job delivered again, so the receiver may see
 * the same `webhook-id` twice; it deduplicates on it). The delivery row decides the schedule: a step advances it
 * once, however many times its job is delivered. Only the delivery row is locked, never a money row.
 */
import type { Knex } from 'knex';
import { HolonError } from '../core/errors.js';
import type { Db, Queryable } from '../db/connect.js';
import { unnestInsert } from '../db/prepared.js';
import type { QueueBackend } from '../messaging/types.js';
import type { Verdict } from './schedule.js';

/** The queue of attempts: jobs carry ids only, never a secret, a URL or an output. */
export const DELIVER_QUEUE = 'deliver';

/** One attempt to make: step `step` of the schedule (0 = the first), or re-send number `resend` (1, 2, …). */
export type DeliverJob = { callId: string; deliveryId: string; step: number } | { callId: string; deliveryId: string; resend: number };

const deliverJobId = (job: DeliverJob): string => ('step' in job ? `deliver-${job.deliveryId}-s${job.step}` : `deliver-${job.deliveryId}-r${job.resend}`);

/** Whether the attempt's job is still to be done (waiting, delayed, running or awaiting a retry). */
export function attemptQueued(queues: QueueBackend, job: DeliverJob): Promise<boolean> {
  return queues.queue<DeliverJob>(DELIVER_QUEUE).pending(deliverJobId(job));
}

/**
 * Queues one attempt (a no-op while a job with its id is waiting, delayed or running). A job whose handler fails
 * (the database or Redis away) is retried: a retry after the attempt was recorded only queues the next step.
 */
export function enqueueAttempt(queues: QueueBackend, job: DeliverJob, delayMs = 0): Promise<void> {
  return queues.queue<DeliverJob>(DELIVER_QUEUE).add(job, { jobId: deliverJobId(job), attempts: 5, backoffMs: 2000, ...(delayMs > 0 ? { delayMs } : {}) });
}

/** The `webhook-id` of a call's delivery: stable, one per call. */
const deliveryIdOf = (callId: string): string => `msg_${callId}`;

type DeliveryState = 'pending' | 'delivered' | 'gone' | 'gave_up';

/** What a delivery tells: the call's end (its receipt), or a question the call waits on (docs/webhooks.md). */
type DeliveryEvent = 'call.completed' | 'call.input_required';

export interface Delivery {
  id: string;
  callId: string;
  event: DeliveryEvent;
  /** A `call.input_required` delivery's question (its event id in the call's events); 0 for `call.completed`. */
  question: number;
  account: string;
  state: DeliveryState;
  stepsMade: number;
  resendsAsked: number;
  resendsMade: number;
  nextAttemptAt: Date | null;
  reason: string | null;
  createdAt: Date;
}

/** A `webhook_deliveries` row as the drivers return it (shared/db/connect.ts). */
interface DeliveryRow {
  id: string;
  call_id: string;
  event: DeliveryEvent;
  question: number;
  account: string;
  state: DeliveryState;
  steps_made: number;
  resends_asked: number;
  resends_made: number;
  next_attempt_at: Date | null;
  reason: string | null;
  created_at: Date;
}

const deliveryFromRow = (r: DeliveryRow): Delivery => ({
  id: r.id,
  callId: r.call_id,
  event: r.event,
  question: Number(r.question),
  account: r.account,
  state: r.state,
  stepsMade: Number(r.steps_made),
  resendsAsked: Number(r.resends_asked),
  resendsMade: Number(r.resends_made),
  nextAttemptAt: r.next_attempt_at ? new Date(r.next_attempt_at) : null,
  reason: r.reason ?? null,
  createdAt: new Date(r.created_at),
});

/** A delivery's first row: pending, due at once, owned by the account that pays for the call. */
export interface NewDelivery {
  id: string;
  call_id: string;
  account: string;
}

export const newDelivery = (callId: string, payer: string): NewDelivery => ({ id: deliveryIdOf(callId), call_id: callId, account: payer });

/**
 * The insert of new deliveries, due at once, a no-op for a call that has one already, as a statement's part of fixed
 * text (the settlement's write embeds it in its transaction).
 */
export const deliveriesInsert = unnestInsert<NewDelivery>(
  'webhook_deliveries',
  [
    ['id', 'text'],
    ['call_id', 'text'],
    ['account', 'text'],
  ],
  { set: { next_attempt_at: 'now()' }, skipConflictOn: ['call_id', 'event', 'question'] },
);

/** Insert new deliveries (`deliveriesInsert`) on their own. */
export async function insertDeliveries(db: Queryable, rows: readonly NewDelivery[]): Promise<void> {
  const { sql, bindings } = deliveriesInsert(rows);
  await db.raw(sql, [...bindings]);
}

/**
 * A question a running call asked, for its `callback_url` (`call.input_required`): its delivery opened (once per
 * question) and its first attempt queued. Nothing for a call without a `callback_url`.
 */
export async function openQuestionDelivery(db: Db, queues: QueueBackend, callId: string, question: number): Promise<void> {
  const call = (await db('calls').where({ id: callId }).first('callback_url', 'payer')) as { callback_url: string | null; payer: string } | undefined;
  if (!call?.callback_url) return;
  const id = `${deliveryIdOf(callId)}_q${question}`;
  await db('webhook_deliveries')
    .insert({ id, call_id: callId, account: call.payer, event: 'call.input_required', question, next_attempt_at: db.fn.now() })
    .onConflict(['call_id', 'event', 'question'])
    .ignore();
  await enqueueAttempt(queues, { callId, deliveryId: id, step: 0 });
}

/**
 * The call's delivery, opened if it has none: the settlement writes it, so this opens only that of a call settled
 * before deliveries were written with the settlement. Undefined without a callback_url.
 */
export async function openDelivery(db: Db, callId: string): Promise<Delivery | undefined> {
  const existing = await deliveryOfCall(db, callId);
  if (existing) return existing;
  const call = await db('calls').where({ id: callId }).first('callback_url', 'payer');
  if (!call?.callback_url) return undefined;
  await insertDeliveries(db, [newDelivery(callId, String(call.payer))]);
  return loadDelivery(db, deliveryIdOf(callId));
}

export async function loadDelivery(db: Db, id: string): Promise<Delivery | undefined> {
  const row: DeliveryRow | undefined = await db('webhook_deliveries').where({ id }).first();
  return row ? deliveryFromRow(row) : undefined;
}

export async function deliveryOfCall(db: Db, callId: string): Promise<Delivery | undefined> {
  const row: DeliveryRow | undefined = await db('webhook_deliveries').where({ call_id: callId, event: 'call.completed' }).first();
  return row ? deliveryFromRow(row) : undefined;
}

/** A final state without an attempt (the output was no longer kept); only a pending delivery changes. */
export async function noteDelivery(db: Db, id: string, reason: string): Promise<void> {
  await db('webhook_deliveries').where({ id }).whereNull('reason').update({ reason });
}

export interface AttemptRecord {
  job: DeliverJob;
  at: Date;
  durationMs: number;
  statusCode?: number;
  error?: string;
  verdict: Verdict;
}

/** What an attempt changes on its delivery row. */
interface DeliveryChanges {
  state?: DeliveryState;
  reason?: string;
  steps_made?: number;
  resends_made?: number;
  next_attempt_at?: Date | null;
  finished_at?: Knex.Raw;
}

const REASONS: Record<'gone' | 'gave_up', string> = {
  gone: 'the receiver answered 410 Gone: no more attempts',
  gave_up: 'every attempt of the schedule failed',
};

/**
 * Appends the attempt to the log and moves the delivery on, in one transaction (the delivery row locked). A
 * scheduled step moves the schedule only if it is the step the delivery is at (a redelivered job's duplicate does
 * not); a re-send never moves it, but its success ends the delivery `delivered`. Returns the next step to queue, if any.
 */
export async function recordAttempt(db: Db, a: AttemptRecord): Promise<{ attempt: number; next?: { step: number; delayMs: number } }> {
  return db.transaction(async (trx) => {
    const r = await trx.raw<{ rows: DeliveryRow[] }>('SELECT * FROM webhook_deliveries WHERE id = ? FOR UPDATE', [a.job.deliveryId]);
    const d = deliveryFromRow(r.rows[0]!);
    const changes: DeliveryChanges = {};
    let next: { step: number; delayMs: number } | undefined;
    const v = a.verdict;
    if (v.kind === 'delivered') {
      Object.assign(changes, { state: 'delivered', next_attempt_at: null, finished_at: trx.fn.now() } satisfies DeliveryChanges);
    } else if (v.kind === 'gone' && d.state !== 'delivered') {
      Object.assign(changes, { state: 'gone', reason: REASONS.gone, next_attempt_at: null, finished_at: trx.fn.now() } satisfies DeliveryChanges);
    }
    if ('step' in a.job) {
      if (d.stepsMade === a.job.step) changes.steps_made = a.job.step + 1;
      if (d.stepsMade === a.job.step && d.state === 'pending') {
        if (v.kind === 'retry') {
          next = { step: a.job.step + 1, delayMs: v.delayMs };
          changes.next_attempt_at = new Date(a.at.getTime() + a.durationMs + v.delayMs);
        } else if (v.kind === 'gave_up') {
          Object.assign(changes, { state: 'gave_up', reason: REASONS.gave_up, next_attempt_at: null, finished_at: trx.fn.now() } satisfies DeliveryChanges);
        }
      }
    } else if (d.resendsMade < a.job.resend) {
      changes.resends_made = a.job.resend;
    }
    const [{ attempts }] = (await trx('webhook_deliveries')
      .where({ id: d.id })
      .update({ ...changes, attempts: trx.raw('attempts + 1') })
      .returning('attempts')) as [{ attempts: number }];
    await trx('webhook_attempts').insert({
      delivery_id: d.id,
      attempt: attempts,
      resend: 'resend' in a.job,
      at: a.at,
      status_code: a.statusCode ?? null,
      error: a.error ?? null,
      duration_ms: Math.max(0, Math.round(a.durationMs)),
      next_attempt_at: next ? changes.next_attempt_at : null,
    });
    return { attempt: attempts, ...(next ? { next } : {}) };
  });
}

/**
 * An attempt postponed by the fair schedule (not made: nothing of the schedule is used): a step's delivery says when
 * it is due now, so the log and the delivery sweep see it waiting, not overdue. A re-send changes nothing here.
 */
export async function notePostponed(db: Db, job: DeliverJob, dueAt: Date): Promise<void> {
  if (!('step' in job)) return;
  await db('webhook_deliveries').where({ id: job.deliveryId, state: 'pending', steps_made: job.step }).update({ next_attempt_at: dueAt });
}

/** A re-send asked: its number (1, 2, …), counted on the delivery row (`no_delivery` once retention deleted it). */
export async function askResend(db: Db, id: string): Promise<number> {
  const [row] = (await db('webhook_deliveries')
    .where({ id })
    .update({ resends_asked: db.raw('resends_asked + 1') })
    .returning('resends_asked')) as Array<{ resends_asked: number }>;
  if (!row) throw new HolonError('no_delivery', 'this call has no delivery any more: its log was deleted after the retention period');
  return row.resends_asked;
}

interface AttemptView {
  attempt: number;
  resend: boolean;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

export interface DeliveryView {
  /** The `webhook-id` of every attempt. */
  id: string;
  state: DeliveryState;
  /** Why it ended (gone, gave up), or that the output was no longer kept, in plain words. */
  reason: string | null;
  created_at: string;
  next_attempt_at: string | null;
  attempts: AttemptView[];
}

const iso = (v: Date | null): string | null => (v ? new Date(v).toISOString() : null);

/** A `webhook_attempts` row as the drivers return it (shared/db/connect.ts). */
interface AttemptRow {
  attempt: number;
  resend: boolean;
  at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: Date | null;
}

const attemptFromRow = (r: AttemptRow): AttemptView => ({
  attempt: Number(r.attempt),
  resend: Boolean(r.resend),
  at: iso(r.at)!,
  status_code: r.status_code === null ? null : Number(r.status_code),
  error: r.error ?? null,
  duration_ms: Number(r.duration_ms),
  next_attempt_at: iso(r.next_attempt_at),
});

export async function deliveryView(db: Db, d: Delivery): Promise<DeliveryView> {
  const rows: AttemptRow[] = await db('webhook_attempts').where({ delivery_id: d.id }).orderBy('attempt');
  return {
    id: d.id,
    state: d.state,
    reason: d.reason,
    created_at: d.createdAt.toISOString(),
    next_attempt_at: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    attempts: rows.map(attemptFromRow),
  };
}

/** Pending deliveries, or only those whose next attempt is overdue by more than `overdueMs` (a lost job). */
export async function pendingDeliveries(db: Db, overdueMs?: number): Promise<Delivery[]> {
  const q = db('webhook_deliveries').where({ state: 'pending' }).orderBy('next_attempt_at').limit(1000);
  if (overdueMs !== undefined) q.whereRaw('next_attempt_at < now() - make_interval(secs => ?)', [overdueMs / 1000]);
  const rows: DeliveryRow[] = await q;
  return rows.map(deliveryFromRow);
}

/**
 * Retention: deletes up to `limit` deliveries that finished (delivered, gone, gave up) before `before`, with their
 * attempts (migration 019: the attempts go only with their delivery). Never a pending one, nor one with a re-send
 * asked and not yet made; the conditions are checked again on the row deleted, so a re-send asked meanwhile keeps it.
 */
export async function deleteFinishedDeliveries(db: Db, before: Date, limit: number): Promise<number> {
  const finished = "state <> 'pending' AND finished_at IS NOT NULL AND resends_asked <= resends_made";
  const r = await db.raw<{ rows: unknown[] }>(
    `DELETE FROM webhook_deliveries
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE ${finished} AND finished_at < ? ORDER BY finished_at LIMIT ?)
        AND ${finished}
      RETURNING id`,
    [before, limit],
  );
  return r.rows.length;
}
