/**
 * The hard timeout holds whatever the garbage collector does, through the whole gateway. The runner used
 * AbortSignal.any([AbortSignal.timeout(ms), cancel]); on Node 20 a collection during the run could drop the timeout
 * (once the runner's code was optimised), and the chaos run saw agents that overran their 2 s timeout succeed and be
 * billed. tests/unit/run-deadline.test.ts pins the mechanism (it fails on the old construction); this is the path.
 */
import { expect } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { forceGc } from '../support/force-gc.js';
import { poll } from '../support/poll.js';
import type { Schema } from '../support/http.js';

test('calls that overrun a 1 s timeout while collections run all end failed / timeout, and one within it succeeds', async ({ gateway: g }) => {
  await g.mandate({});
  const ask = (ms: number) =>
    g.post<Schema<'CallQueued'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/short-fuse', input: { ms } }, { prefer: 'respond-async' });
  const overruns = await Promise.all(Array.from({ length: 6 }, () => ask(2_500)));
  const within = await ask(50);
  for (const r of [...overruns, within]) expect(r.status).toBe(202);

  const ids = overruns.map((r) => r.body.call.id as string);
  const receipts = new Map<string, any>();
  // Collections run between the reads (forceGc): what used to drop a run's deadline timer.
  await poll(
    async () => {
      forceGc();
      for (const id of [...ids, within.body.call.id as string]) {
        if (receipts.has(id)) continue;
        const r = await g.get(`/v0/receipts/${id}`);
        if (r.status === 200) receipts.set(id, r.body);
      }
      return receipts.size >= ids.length + 1;
    },
    { what: 'every receipt', timeoutMs: 15_000, intervalMs: 50, orUndefined: true }, // the expectations below say which is missing
  );
  for (const id of ids) expect(receipts.get(id), id).toMatchObject({ status: 'failed', error: 'timeout' });
  expect(receipts.get(within.body.call.id)).toMatchObject({ status: 'succeeded', billed: true });
});
