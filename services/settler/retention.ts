/**
 * Retention (docs/webhooks.md "Retention", docs/mcp.md "Tasks"): after HOLON_DELIVERY_RETENTION_DAYS,
 * the settler deletes the delivery log of deliveries that finished before then (delivered, gone, gave up: the row
 * and its attempts; never a pending one, nor one with a re-send still to make), the `mcp_tasks` rows created
 * before then whose call is final, and the event rows (`call_stream_events`) of final calls appended before then. Once at start, then every hour; the clock is the context's (`ctx.now()`), so
 * tests move it. Any number of settlers may sweep at once: a row deleted twice is deleted once. Counted in
 * `holon_sweeper_actions_total` as `deliveries_deleted`, `tasks_deleted` and `events_deleted`.
 */
import { deleteFinishedTasks } from '../../shared/calls/tasks.js';
import { deleteFinishedEventRows } from '../../shared/calls/events/rows.js';
import type { ServiceContext } from '../../shared/context.js';
import { countSweep } from '../../shared/platform/metrics.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import { deleteFinishedDeliveries } from '../../shared/webhooks/deliveries.js';

const RETENTION_SWEEP_INTERVAL_MS = 3_600_000;
/** Rows per DELETE: a long backlog goes in short statements, one after the other. */
const BATCH = 500;
const DAY_MS = 86_400_000;

type RetentionContext = Pick<ServiceContext, 'db' | 'log' | 'now' | 'metrics'>;

/** Deletes in batches until a batch comes back short: how many rows went. */
async function inBatches(remove: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await remove(BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

/** One sweep: what was older than `retentionDays` and finished, deleted. */
export async function sweepRetention(ctx: RetentionContext, retentionDays: number): Promise<{ deliveries: number; tasks: number; events: number }> {
  const before = new Date(ctx.now() - retentionDays * DAY_MS);
  const deliveries = await inBatches((limit) => deleteFinishedDeliveries(ctx.db, before, limit));
  const tasks = await inBatches((limit) => deleteFinishedTasks(ctx.db, before, limit));
  const events = await inBatches((limit) => deleteFinishedEventRows(ctx.db, before, limit));
  if (deliveries || tasks || events) {
    ctx.log.info({ deliveries, tasks, events, retention_days: retentionDays }, 'finished deliveries, tasks and call events past their retention deleted');
  }
  countSweep(ctx.metrics, 'deliveries_deleted', deliveries);
  countSweep(ctx.metrics, 'tasks_deleted', tasks);
  countSweep(ctx.metrics, 'events_deleted', events);
  return { deliveries, tasks, events };
}

/** Sweep now, then every `intervalMs` (an hour), one sweep at a time, until stopped. */
export function startRetentionSweep(ctx: RetentionContext, retentionDays: number, intervalMs = RETENTION_SWEEP_INTERVAL_MS): Periodic {
  return startPeriodic(ctx.log, () => sweepRetention(ctx, retentionDays), { everyMs: intervalMs, atStart: true, failure: 'retention sweep failed' });
}
