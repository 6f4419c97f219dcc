/**
 * Group commit for the settle worker (docs/PERFORMANCE.md; shared/db/group-commit.ts): settle jobs that arrive while a
 * batch is being committed wait for it, then go together in the next one (at most `maxBatch`); a job that arrives
 * when nothing is in flight is settled at once, so an idle gateway adds no latency. The batch is `settleBatch`
 * (shared/calls/settle/settle.ts); calls of a delegation tree are settled one by one with `settleCall`, and so is every
 * call of a batch that failed as a whole (each then finds its own way: a settled one is a no-op).
 */
import type { ServiceContext } from '../../context.js';
import { groupCommit } from '../../db/group-commit.js';
import type { HeardHere } from './after-commit.js';
import { requestOf, type SettleRequest, settleBatch, settleOne } from './settle.js';

type Result = 'settled' | 'noop' | 'deferred';

export interface SettleBatcher {
  /** A call id (a call already `settling`), or a request that closes it too (settle.ts `Closing`). */
  settle(request: string | SettleRequest): Promise<Result>;
}

export function createSettleBatcher(ctx: ServiceContext, options: { maxBatch: number; heard?: HeardHere }): SettleBatcher {
  const { heard } = options;
  const grouped = groupCommit<SettleRequest, 'settled' | 'noop' | 'single' | Result>({
    maxBatch: options.maxBatch,
    batch: async (requests) => {
      const results = await settleBatch(ctx, requests, heard);
      return requests.map((r) => results.get(r.callId) ?? 'single');
    },
    one: (request) => settleOne(ctx, request, heard),
    onBatchError: (err, size) =>
      ctx.log.warn({ calls: size, err: { message: (err as Error)?.message } }, 'a settlement batch failed: its calls are settled one by one'),
  });
  return {
    settle: async (asked) => {
      const request = requestOf(asked);
      const r = await grouped(request);
      return r === 'single' ? settleOne(ctx, request, heard) : r;
    },
  };
}
