/**
 * Uploaded files are deleted 24 hours after upload (gateway.md §7 "Files"): every minute, and once at start so that
 * a restart deletes at once what expired while the settlers were down. Uploads abandoned mid-way (a process killed
 * while streaming) go too. The clock is the context's (`ctx.now()`), so tests move it. Any number of settlers may
 * sweep at once: deleting a row twice deletes it once. Counted in `holon_sweeper_actions_total{action="files_deleted"}`.
 */
import type { ServiceContext } from '../../shared/context.js';
import { deleteExpiredFiles } from '../../shared/files/store.js';
import { countSweep } from '../../shared/platform/metrics.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';

const FILE_SWEEP_INTERVAL_MS = 60_000;

type FileSweepContext = Pick<ServiceContext, 'db' | 'log' | 'now' | 'metrics'>;

/** One sweep: how many files were deleted. */
export async function sweepFiles(ctx: FileSweepContext): Promise<number> {
  const deleted = await deleteExpiredFiles(ctx.db, ctx.now());
  if (deleted > 0) ctx.log.info({ deleted }, 'expired files deleted');
  countSweep(ctx.metrics, 'files_deleted', deleted);
  return deleted;
}

/** Sweep now, then every `intervalMs`, one sweep at a time, until stopped. */
export function startFileSweeper(ctx: FileSweepContext, intervalMs = FILE_SWEEP_INTERVAL_MS): Periodic {
  return startPeriodic(ctx.log, () => sweepFiles(ctx), { everyMs: intervalMs, atStart: true, failure: 'file sweep failed' });
}
