/**
 * The sweeper: no hold is ever stuck (DESIGN.md §3.5).
 * - A call still `queued` or `running` well past its deadline is closed `failed / gateway_restarted`, unbilled
 *   (a runner died with it, or its job was lost).
 * - A call `settling` whose settle job was handed out long ago is handed to the settler again (idempotent).
 */
import { unbilled } from '../../shared/calls/outcome.js';
import { closeCall, enqueueSettle } from '../../shared/calls/transitions.js';
import { expireApprovals } from '../../shared/admission/approvals.js';
import type { ServiceContext } from '../../shared/context.js';

export interface SweepOptions {
  /** How far past its deadline a call must be before it is closed (default 30 s). */
  graceMs?: number;
  /** How long a settle job may take before it is handed out again (default 60 s). */
  resettleAfterMs?: number;
  /** Most calls handled per sweep (default 500). */
  batch?: number;
}

export async function sweep(ctx: ServiceContext, options: SweepOptions = {}): Promise<{ closed: number; resettled: number }> {
  const now = new Date(ctx.now());
  const grace = options.graceMs ?? 30_000;
  const batch = options.batch ?? 500;
  const overdue = await ctx
    .db('calls')
    .whereIn('status', ['queued', 'running'])
    .where('deadline_at', '<', new Date(now.getTime() - grace))
    .limit(batch)
    .select('id', 'status');
  let closed = 0;
  for (const c of overdue) {
    if (await closeCall(ctx, c.id, c.status, unbilled('gateway_restarted'))) closed++;
  }
  const stale = await ctx
    .db('calls')
    .where({ status: 'settling' })
    .where((q) => q.whereNull('settle_enqueued_at').orWhere('settle_enqueued_at', '<', new Date(now.getTime() - (options.resettleAfterMs ?? 60_000))))
    .limit(batch)
    .select('id');
  for (const c of stale) await enqueueSettle(ctx, c.id, ctx.now());
  // Pending approvals past 7 days expire, and their stored input is deleted with them.
  await expireApprovals(ctx.db, ctx.now());
  return { closed, resettled: stale.length };
}

/** Sweep every `intervalMs` until stopped. */
export function startSweeper(ctx: ServiceContext, intervalMs = 10_000, options: SweepOptions = {}): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweep(ctx, options).catch((e) => ctx.log.error({ err: { message: (e as Error).message } }, 'sweep failed'));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
