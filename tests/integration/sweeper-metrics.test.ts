/**
 * Every action of the settler's background sweeps counts in holon_sweeper_actions_total (shared/platform/metrics.ts,
 * docs/operating.md "Metrics"): the sweeper's (a reserved call handed out again, then abandoned; a call closed past
 * its deadline; a settlement handed out again; an approval expired), restart recovery's, the file sweep's and the
 * delivery sweep's, each forced here and read back from GET /metrics as exactly what the sweep said it did. (Retention's
 * deletes: retention.test.ts; the evaluator's recovery sweep: evaluator-metrics.test.ts.) The gateway runs the API and
 * a runner but no settler, so no sweep runs on its own; the sweeps run on its context with the clock moved (`ctx.now`)
 * and, where a job must be lost, with that queue's jobs dropped (lost-jobs.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { recoverDeliveries } from '../../services/settler/callbacks.js';
import { sweepFiles } from '../../services/settler/file-sweeper.js';
import { recoverOrphanedCalls } from '../../services/settler/recovery.js';
import { sweep } from '../../services/settler/sweeper.js';
import { CALLBACK_QUEUE, RUN_QUEUE } from '../../shared/calls/wire.js';
import type { ServiceContext } from '../../shared/context.js';
import { FILE_TTL_MS } from '../../shared/files/store.js';
import { settleCall } from '../../shared/calls/settle/settle.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { losingJobs } from '../support/lost-jobs.js';
import { poll } from '../support/poll.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import type { Schema } from '../support/http.js';

const DAY_MS = 86_400_000;

/** The counter of one sweeper action, read from GET /metrics (0 before it happened). */
async function actions(g: TestGateway): Promise<(action: string) => number> {
  const r = await fetch(`${g.url}/metrics`);
  expect(r.status).toBe(200);
  const samples = parsePrometheus(await r.text());
  return (action) => sampleValue(samples, 'holon_sweeper_actions_total', { action }) ?? 0;
}

/** A call reserved whose run job never reached the queue (its API died between the reserve and the add). */
async function strandedCall(ctx: ServiceContext, text: string): Promise<string> {
  const submitted = await createCallEngine(losingJobs(ctx, RUN_QUEUE, 'drop')).submit({
    mandateId: 'alice/test',
    agent: 'examples/echo-upper',
    input: { text },
  });
  if (submitted.kind !== 'queued') throw new Error(`not queued: ${submitted.kind}`);
  return submitted.callId;
}

test('each sweep action moves its counter by what the sweep did', async () => {
  await useAudited(await startTestGateway({ roles: ['api', 'runner'] }), async (g) => {
    await g.mandate({});
    await g.mandate({ id: 'alice/ask', approval: { above: '0.005' } });
    const ctx = g.gw.context;
    const at = (ms: number, base: ServiceContext = ctx): ServiceContext => ({ ...base, now: () => Date.now() + ms });
    const noRunJobs = losingJobs(ctx, RUN_QUEUE, 'drop');
    const quiet = { strandedAfterMs: 0, resettleAfterMs: DAY_MS };

    // Stranded: handed out again once (its job is lost again here), then abandoned.
    await strandedCall(ctx, 'stranded');
    expect(await sweep(createCallEngine(noRunJobs), quiet)).toMatchObject({ requeued: 1, abandoned: 0, closed: 0, resettled: 0 });
    expect((await actions(g))('requeued')).toBe(1);
    expect(await sweep(createCallEngine(noRunJobs), quiet)).toMatchObject({ requeued: 0, abandoned: 1 });
    expect((await actions(g))('abandoned')).toBe(1);

    // Eight days on: a queued call long past its deadline is closed, settlements nobody finished are handed out
    // again (the abandoned call is `settling`: no settler runs here), a pending approval expires.
    await strandedCall(ctx, 'overdue');
    const held = await g.post<Schema<'CallHeld'>>('/v0/calls', { mandate: 'alice/ask', agent: 'examples/echo-upper', input: { text: 'ask me' } });
    expect(held.body.status).toBe('pending_approval');
    const late = await sweep(createCallEngine(at(8 * DAY_MS)), { strandedAfterMs: 9 * DAY_MS });
    expect(late).toMatchObject({ requeued: 0, abandoned: 0, closed: 1 });
    expect(late.resettled).toBeGreaterThan(0);
    let count = await actions(g);
    expect(count('closed')).toBe(1);
    expect(count('resettled')).toBe(late.resettled);
    expect(count('approvals_expired')).toBe(1);

    // Restart recovery: a call left queued is closed, the settlements left are handed to the settler again.
    await strandedCall(ctx, 'interrupted');
    const recovered = await recoverOrphanedCalls(g.gw.engine);
    expect(recovered.closed).toBe(1);
    count = await actions(g);
    expect(count('restart_closed')).toBe(1);
    expect(count('restart_resettled')).toBe(recovered.resettled);

    // The file sweep: an upload, 25 hours on.
    const up = await fetch(`${g.url}/v0/files`, { method: 'POST', body: randomBytes(1000) });
    expect(up.status).toBe(201);
    expect(await sweepFiles(at(FILE_TTL_MS + 3_600_000))).toBe(1);
    expect((await actions(g))('files_deleted')).toBe(1);

    // The delivery sweep: a delivery whose settler died before its wake-up is queued once; queued, it is not again.
    const r = await g.post<Schema<'CallQueued'>>(
      '/v0/calls',
      { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'hook' }, callback_url: 'http://127.0.0.1:9/hook' },
      { prefer: 'respond-async' },
    );
    const hooked = r.body.call.id as string;
    await poll(async () => (await g.db.knex('calls').where({ id: hooked }).first('status'))?.status === 'settling', { what: 'the call to be settling' });
    await expect(settleCall(losingJobs(ctx, CALLBACK_QUEUE, 'throw'), hooked)).rejects.toThrow('the process died');
    expect(await recoverDeliveries(ctx)).toBe(1);
    expect(await recoverDeliveries(ctx)).toBe(0);
    expect((await actions(g))('deliveries_requeued')).toBe(1);

    // What is left settling is settled, so that the audit sees a finished ledger.
    for (const id of await g.db.knex('calls').where({ status: 'settling' }).pluck('id')) await settleCall(ctx, String(id));
  });
});
