/**
 * Group commit for the settle worker (docs/PERFORMANCE.md): settle jobs that arrive while a batch is being
 * committed wait for it, then go together in the next one (at most `maxBatch`); a job that arrives when nothing is in
 * flight is settled at once, so an idle gateway adds no latency. The batch is `settleBatch`
 * (shared/settlement/settle.ts); calls of a delegation tree are settled one by one with `settleCall`, and so is every
 * call of a batch that failed as a whole (each then finds its own way: a settled one is a no-op).
 */
import type { ServiceContext } from '../../shared/context.js';
import { settleBatch, settleCall } from '../../shared/settlement/settle.js';

type Result = 'settled' | 'noop' | 'deferred';

interface Waiting {
  callId: string;
  resolve(r: Result): void;
  reject(e: unknown): void;
}

export interface SettleBatcher {
  settle(callId: string): Promise<Result>;
}

export function createSettleBatcher(ctx: ServiceContext, options: { maxBatch: number }): SettleBatcher {
  let waiting: Waiting[] = [];
  let inFlight = false;

  const one = (w: Waiting): void => {
    settleCall(ctx, w.callId).then(w.resolve, w.reject);
  };

  const flush = async (): Promise<void> => {
    inFlight = true;
    while (waiting.length > 0) {
      const items = waiting.slice(0, options.maxBatch);
      waiting = waiting.slice(items.length);
      let results: Map<string, 'settled' | 'noop' | 'single'> | undefined;
      try {
        results = await settleBatch(
          ctx,
          items.map((w) => w.callId),
        );
      } catch (err) {
        ctx.log.warn({ calls: items.length, err: { message: (err as Error)?.message } }, 'a settlement batch failed: its calls are settled one by one');
      }
      for (const w of items) {
        const r = results?.get(w.callId) ?? 'single';
        if (r === 'single') one(w);
        else w.resolve(r);
      }
    }
    inFlight = false;
  };

  return {
    settle(callId) {
      return new Promise<Result>((resolve, reject) => {
        waiting.push({ callId, resolve, reject });
        if (!inFlight) void flush();
      });
    },
  };
}
