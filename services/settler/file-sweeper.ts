/**
 * Uploaded files are deleted 24 hours after upload (gateway.md §7 "Files"): every minute, and once at start so that
 * a restart deletes at once what expired while the settlers were down. Uploads abandoned mid-way (a process killed
 * while streaming) go too. The clock is the context's (`ctx.now()`), so tests move it. Any number of settlers may
 * sweep at once: deleting a row twice deletes it once.
 */
import type { ServiceContext } from '../../shared/context.js';
import { deleteExpiredFiles } from '../../shared/files/store.js';

const FILE_SWEEP_INTERVAL_MS = 60_000;

/** One sweep: how many files were deleted. */
export async function sweepFiles(ctx: Pick<ServiceContext, 'db' | 'log' | 'now'>): Promise<number> {
  const deleted = await deleteExpiredFiles(ctx.db, ctx.now());
  if (deleted > 0) ctx.log.info({ deleted }, 'expired files deleted');
  return deleted;
}

/** Sweep now, then every `intervalMs`, one sweep at a time, until stopped. */
export function startFileSweeper(ctx: Pick<ServiceContext, 'db' | 'log' | 'now'>, intervalMs = FILE_SWEEP_INTERVAL_MS): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const tick = (): void => {
    if (running) return;
    running = sweepFiles(ctx)
      .catch((e) => ctx.log.error({ err: { message: (e as Error).message } }, 'file sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
