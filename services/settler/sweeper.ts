/**
 * The sweeper: no hold is ever stuck (DESIGN.md §3.5).
 * - A reserved call still `queued` after a short grace with no run job waiting for it (its API died between the
 *   reserve and the queue, or every delivery of its job failed) is handed to the runners once more; if it is
 *   stranded again it is closed `failed / gateway_error`, unbilled. Either way its hold is gone within seconds.
 * - A call still `queued` or `running` well past its deadline is closed `failed / gateway_restarted`, unbilled
 *   (a runner died with it, or its job was lost).
 * - A call `settling` whose settle job was handed out long ago is handed to the settler again (idempotent).
 * - Pending approvals past their 7 days expire.
 * - Budget leases past their expiry (their process stopped renewing them: it died) are returned to their mandates
 *   (docs/ledger.md, "Budget leases").
 * Each action counts in `holon_sweeper_actions_total` (requeued, abandoned, closed, resettled, approvals_expired).
 */
import { unbilled } from '../../shared/calls/call-outcome.js';
import { callStatus, enqueueRun, enqueueSettle, runJobPending } from '../../shared/calls/transitions.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import { pastDeadline, queuedSince, settlingSince } from '../../shared/calls/unfinished.js';
import { expireApprovals } from '../../shared/calls/submit/approvals.js';
import { countSweep } from '../../shared/platform/metrics.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import { expireLeases } from '../../shared/ledger/leases/sql.js';

export interface SweepOptions {
  /** How long a queued call may go without a run job before it is handed out again (default 10 s). */
  strandedAfterMs?: number;
  /** How far past its deadline a call must be before it is closed (default 30 s). */
  graceMs?: number;
  /** How long a settle job may take before it is handed out again (default 60 s). */
  resettleAfterMs?: number;
  /** Most calls handled per sweep (default 500). */
  batch?: number;
}

/** A stranded call handed out again carries this mark for an hour: stranded twice, it is closed. */
const requeuedKey = (callId: string): string => `requeued:${callId}`;
const REQUEUED_MARK_TTL_S = 3600;

/** Reserved calls that never reached a runner: handed out once more, then closed. */
async function requeueStranded(engine: CallEngine, before: Date, batch: number): Promise<{ requeued: number; abandoned: number }> {
  const ctx = engine.resources;
  const stranded = await queuedSince(ctx.db, before, batch);
  let requeued = 0;
  let abandoned = 0;
  for (const id of stranded) {
    if ((await runJobPending(ctx, id)) || (await callStatus(ctx.db, id)) !== 'queued') continue;
    if ((await ctx.messaging.store.peek(requeuedKey(id))) === undefined) {
      await ctx.messaging.store.put(requeuedKey(id), '1', REQUEUED_MARK_TTL_S);
      await enqueueRun(ctx, id, { requeue: true });
      requeued++;
    } else if (await engine.close(id, 'queued', unbilled('gateway_error'))) abandoned++;
  }
  if (requeued || abandoned) ctx.log.warn({ requeued, abandoned }, 'reserved calls had no run job');
  return { requeued, abandoned };
}

export async function sweep(
  engine: CallEngine,
  options: SweepOptions = {},
): Promise<{ closed: number; resettled: number; requeued: number; abandoned: number }> {
  const ctx = engine.resources;
  const now = new Date(ctx.now());
  const grace = options.graceMs ?? 30_000;
  const batch = options.batch ?? 500;
  const stranded = await requeueStranded(engine, new Date(now.getTime() - (options.strandedAfterMs ?? 10_000)), batch);
  const overdue = await pastDeadline(ctx.db, new Date(now.getTime() - grace), batch);
  let closed = 0;
  for (const c of overdue) {
    if (await engine.close(c.id, c.status, unbilled('gateway_restarted'))) closed++;
  }
  const stale = await settlingSince(ctx.db, new Date(now.getTime() - (options.resettleAfterMs ?? 60_000)), batch);
  for (const id of stale) await enqueueSettle(ctx, id, ctx.now());
  // Pending approvals past 7 days expire, and their stored input is deleted with them.
  countSweep(ctx.metrics, 'approvals_expired', await expireApprovals(ctx.db, ctx.now()));
  const leased = await expireLeases(ctx.db, now);
  if (leased > 0n) ctx.log.warn({ returned: leased.toString() }, 'expired budget leases returned');
  const done = { closed, resettled: stale.length, ...stranded };
  for (const [action, n] of Object.entries(done)) countSweep(ctx.metrics, action as keyof typeof done, n);
  return done;
}

/** Sweep every `intervalMs` until stopped (one sweep at a time: a slow one, on a busy database, is not overtaken). */
export function startSweeper(engine: CallEngine, intervalMs = 5_000, options: SweepOptions = {}): Periodic {
  return startPeriodic(engine.resources.log, () => sweep(engine, options), { everyMs: intervalMs, failure: 'sweep failed' });
}
