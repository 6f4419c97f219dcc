/**
 * Settling calls (gateway.md §1 step 7, DESIGN.md §1): ONE transaction writes each call's journal entry
 * `settle:<receipt id>`, its receipt, its ended hold, the mandate's `spent`/`reserved`, the `call_events` row, the
 * call's final status and, for a call with a `callback_url`, its webhook delivery's first row (the outbox: the
 * settler's dispatcher finds it even when the process died right after the commit; shared/webhooks/deliveries.ts).
 * A second delivery finds the call no longer `settling` and does nothing.
 *
 * The steps, each in its own file: `prepare` (before the transaction: the royalty chain, rows created), in the
 * transaction `lockCalls` (rows.ts), `ownRowsFirst` (holds ended, entries recorded, what the plan reads),
 * `planSettlement` (pure), `writeSettlement` (answers what it wrote); after the commit `afterSettled`.
 */
import type { ServiceContext } from '../../context.js';
import { batchSettlementMoneyCall, oneSettlementMoneyCall } from '../../ledger/money-functions.js';
import { afterSettled, type HeardHere, type Settled, settledOf } from './after-commit.js';
import { ownRowsFirst } from './own-rows.js';
import { planSettlement } from './plan.js';
import { type Prepared, prepare } from './prepare.js';
import { LOCK_BATCH, LOCK_ONE, lockCalls, openChildren, PRE_COLUMNS, type SettlingCall } from './rows.js';
import { writeSettlement } from './write.js';
import type { CallOutcome } from '../call-outcome.js';
import { closeCallRow } from '../transitions.js';
import { CALLS_DONE_CHANNEL, callsDoneNotice } from '../wire.js';

export async function settleCall(ctx: ServiceContext, callId: string, heard?: HeardHere): Promise<'settled' | 'noop' | 'deferred'> {
  const pre = await ctx
    .db('calls')
    .where({ id: callId })
    .first(...PRE_COLUMNS);
  if (pre?.status !== 'settling') return 'noop';
  // The last child to settle hands its parent to the settler again.
  if (pre.sub_mandate_id && (await openChildren(ctx.db, callId)) > 0) return 'deferred';
  const prepared = await prepare(ctx, pre);
  const done = await ctx.db.transaction(async (trx): Promise<Settled | 'deferred' | null> => {
    const {
      calls: [call],
      at,
    } = await lockCalls(trx, LOCK_ONE, [callId]);
    if (call?.status !== 'settling') return null;
    const { inputs, deferred } = await ownRowsFirst(trx, [call], () => prepared);
    if (deferred.length > 0) return 'deferred';
    const plan = planSettlement(inputs);
    const planned = plan.calls[0]!;
    // The hot rows last, in the lock order (docs/ledger.md), in the receipts' statement: mandates up the tree, the
    // parent hold, the balances (shared/calls/sql/holon_settle_shared.sql).
    const written = await writeSettlement(trx, plan, { money: oneSettlementMoneyCall(planned.moves), at, key: ctx.signingKey });
    return settledOf(planned, written);
  });
  if (!done) return 'noop';
  if (done === 'deferred') return 'deferred';
  await afterSettled(ctx, callId, done, { ...(heard ? { heard } : {}) });
  return 'settled';
}

/**
 * A call closed in its settlement's own transaction: a top-level call without a sub-mandate, run in this process,
 * whose run hands its outcome and its row's facts over in memory (`CallEngine.close`). Its row stays `running` until
 * the transaction that settles it commits, so neither the close's own commit nor the settlement's read of the row
 * before its transaction is needed; a process that dies before that commit leaves a `running` row, which the sweeper
 * closes past its deadline, unbilled, as for any run that dies.
 */
export interface Closing {
  outcome: CallOutcome;
  facts: { agentId: string; agentVersion: string; payer: string; currency: string };
  /** When the run handed it over (the settle-lag metric's start). */
  at: Date;
}

/** A call to settle: `settling` already, or closed in the settlement's transaction (`closing`). */
export interface SettleRequest {
  callId: string;
  closing?: Closing;
}

/** A call id alone asks to settle a call already `settling`. */
export const requestOf = (r: string | SettleRequest): SettleRequest => (typeof r === 'string' ? { callId: r } : r);

type PreRow = Record<(typeof PRE_COLUMNS)[number], string | null>;

/** What settlement reads before its transaction: the row for a call already `settling`, the facts for one it closes. */
async function preRows(ctx: ServiceContext, requests: readonly SettleRequest[]): Promise<Map<string, PreRow>> {
  const read = [...new Set(requests.filter((r) => !r.closing).map((r) => r.callId))];
  const pres =
    read.length > 0
      ? ((await ctx
          .db('calls')
          .whereIn('id', read)
          .select(...PRE_COLUMNS)) as PreRow[])
      : [];
  const byId = new Map(pres.map((p) => [String(p.id), p]));
  for (const { callId, closing } of requests) {
    if (!closing || byId.has(callId)) continue;
    const { agentId, agentVersion, payer, currency } = closing.facts;
    byId.set(callId, {
      id: callId,
      status: 'settling',
      agent_id: agentId,
      agent_version: agentVersion,
      payer,
      currency,
      sub_mandate_id: null,
      parent_id: null,
    });
  }
  return byId;
}

/** A locked row as the settlement takes it: a call it closes must still be `running` (no one else closed it). */
function closedNow(call: SettlingCall, closing: Closing | undefined): SettlingCall {
  if (!closing || call.status !== 'running') return closing ? { ...call, status: 'closed-elsewhere' } : call;
  return { ...call, status: 'settling', outcome: closing.outcome, settleEnqueuedAt: closing.at, closedHere: true };
}

/**
 * Group commit (docs/PERFORMANCE.md): many top-level calls settled in ONE transaction. Each call's own
 * rows are written exactly as `settleCall` writes them (its entry keeps its own idempotency key, its receipt is in
 * the same transaction as its entry); the hot rows — the calls' root mandates, the balance rows, the platform's
 * among them — are changed once for the whole batch with the sums (shared/calls/sql/holon_settle_batch.sql), last,
 * in the lock order. Only calls without a parent and without children take this path: a delegation tree's
 * settlements move a parent hold and its ancestors' mandates in an order of their own, so they are answered `single`
 * and the caller settles them one by one with `settleCall`. A batch that fails as a whole changes nothing; the caller
 * then settles its calls one by one (each finds its own way, as after a restart: `settleOne`).
 */
export async function settleBatch(
  ctx: ServiceContext,
  asked: ReadonlyArray<string | SettleRequest>,
  heard?: HeardHere,
): Promise<Map<string, 'settled' | 'noop' | 'single'>> {
  const requests = asked.map(requestOf);
  const out = new Map<string, 'settled' | 'noop' | 'single'>();
  const byId = await preRows(ctx, requests);
  const closingOf = new Map(requests.flatMap((r) => (r.closing ? [[r.callId, r.closing] as const] : [])));
  const batch: string[] = [];
  const prepared = new Map<string, Prepared>();
  for (const { callId: id } of requests) {
    if (out.has(id) || batch.includes(id)) continue;
    const pre = byId.get(id);
    if (pre?.status !== 'settling') out.set(id, 'noop');
    else if (pre.sub_mandate_id || pre.parent_id) out.set(id, 'single');
    else {
      batch.push(id);
      prepared.set(id, await prepare(ctx, pre as Parameters<typeof prepare>[1]));
    }
  }
  if (batch.length === 0) return out;
  // Own rows first, in the order of the call ids (no other transaction locks two calls' rows).
  batch.sort();
  const settled = await ctx.db.transaction(async (trx) => {
    const { calls: locked, at } = await lockCalls(trx, LOCK_BATCH, [batch]);
    const plain = locked
      .map((call) => closedNow(call, closingOf.get(call.id)))
      .filter((call) => call.status === 'settling' && !call.subMandateId && !call.parentId);
    // No call here has a sub-mandate, so none has children: none is deferred.
    const { inputs } = await ownRowsFirst(trx, plain, (id) => prepared.get(id)!);
    const plan = planSettlement(inputs);
    const money = batchSettlementMoneyCall(plan.calls.map((c) => c.moves));
    const written = await writeSettlement(trx, plan, { money, at, key: ctx.signingKey });
    return new Map(plan.calls.map((c) => [c.id, settledOf(c, written)]));
  });
  for (const id of batch) out.set(id, settled.has(id) ? 'settled' : 'noop');
  // Every settled call's after-commit work at once, not one Redis round trip after another: their waiters here hear
  // them in this tick and their notices go to Redis together. One that fails fails the batch (after all were tried):
  // its calls then go one by one, and each finds itself settled.
  const after = await Promise.allSettled(
    batch.flatMap((id) => {
      const done = settled.get(id);
      return done ? [afterSettled(ctx, id, done, { ...(heard ? { heard } : {}), answeredHere: closingOf.has(id) })] : [];
    }),
  );
  const failed = after.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return out;
}

/**
 * Whether the call's row shows this outcome (its status and error code): closed with it and still `settling`, or
 * settled with it (`final`); null when it is not closed, or closed with another outcome (by someone else: the sweeper).
 */
export async function closedWith(db: ServiceContext['db'], callId: string, outcome: CallOutcome): Promise<'settling' | 'final' | null> {
  const row = (await db('calls').where({ id: callId }).first('status', 'error_code')) as { status: string; error_code: string | null } | undefined;
  if (!row || row.error_code !== (outcome.code ?? null)) return null;
  if (row.status === 'settling') return 'settling';
  return row.status === (outcome.kind === 'success' ? 'succeeded' : 'failed') ? 'final' : null;
}

/**
 * One request on its own (a batch that failed as a whole, or a call of a delegation tree): a call to close is closed
 * by its own UPDATE first, then settled. Its close may already have committed with a batch whose answer was lost:
 * found ended with this very outcome's code, it is this settlement's, and its waiters are told.
 */
export async function settleOne(ctx: ServiceContext, { callId, closing }: SettleRequest, heard?: HeardHere): Promise<'settled' | 'noop' | 'deferred'> {
  if (!closing) return settleCall(ctx, callId, heard);
  if (await closeCallRow(ctx.db, callId, 'running', closing.outcome)) return settleCall(ctx, callId, heard);
  const found = await closedWith(ctx.db, callId, closing.outcome);
  if (found === 'settling') return settleCall(ctx, callId, heard);
  if (found !== 'final') return 'noop';
  heard?.(callId, undefined);
  await ctx.messaging.notifier.publish(CALLS_DONE_CHANNEL, callsDoneNotice(callId));
  return 'settled';
}
