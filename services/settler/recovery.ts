/**
 * Restarts (gateway.md §7): calls that were in flight when the gateway stopped are closed `failed /
 * gateway_restarted`, never billed; their holds and reservations are released by the settler. Delegated calls that
 * had finished stay paid and count against the mandate (their own settlement is final; the parent settles after).
 *
 * With the in-process queue (`holon serve` without REDIS_URL) the queue died with the process, so at start-up
 * every queued or running call is orphaned and closed here, and every call left `settling` is handed to the
 * settler again. With Redis, queued jobs survive and a running call's job is redelivered after its runner's lock
 * expires (the redelivery closes it, shared/calls/run/run-call.ts); the sweeper is the backstop for both.
 *
 * The Idempotency-Keys of interrupted calls answer 409 from then on (shared/calls/submit/idempotency.ts). Counted in
 * `holon_sweeper_actions_total` as `restart_closed` and `restart_resettled`.
 */
import { unbilled } from '../../shared/calls/call-outcome.js';
import { markInterrupted } from '../../shared/calls/submit/idempotency.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import { enqueueSettle } from '../../shared/calls/transitions.js';
import { callsIn } from '../../shared/calls/unfinished.js';
import { countSweep } from '../../shared/platform/metrics.js';

export async function recoverOrphanedCalls(engine: CallEngine): Promise<{ closed: number; resettled: number }> {
  const ctx = engine.resources;
  const orphaned = await callsIn(ctx.db, ['queued', 'running'] as const);
  const closed: string[] = [];
  for (const c of orphaned) {
    const ok = await engine.close(c.id, c.status, unbilled('gateway_restarted'));
    if (ok) closed.push(c.id);
  }
  await markInterrupted(ctx.db, closed);
  const settling = await callsIn(ctx.db, ['settling'] as const);
  for (const c of settling) if (!closed.includes(c.id)) await enqueueSettle(ctx, c.id, ctx.now());
  const done = { closed: closed.length, resettled: settling.length - closed.length };
  if (closed.length || settling.length) ctx.log.warn(done, 'recovered calls interrupted by the last stop');
  countSweep(ctx.metrics, 'restart_closed', done.closed);
  countSweep(ctx.metrics, 'restart_resettled', done.resettled);
  return done;
}
