/**
 * The Agent Record counts only what the agent caused (shared/calls/call-outcome.ts NOT_THE_AGENTS_DOING): calls the
 * gateway closed itself — a gateway error, a restart, a cancellation — are recorded (receipt, call event) but count
 * neither as runs nor against the success rate, the cost per successful run or the ranking.
 */
import { expect, test } from 'vitest';
import { requestCancel } from '../../shared/calls/cancel.js';
import { unbilled } from '../../shared/calls/call-outcome.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import type { Schema, Answer } from '../support/http.js';

async function queuedCall(g: TestGateway): Promise<string> {
  const r = await g.post<Schema<'CallQueued'>>(
    '/v0/calls',
    { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } },
    { prefer: 'respond-async' },
  );
  expect(r.status).toBe(202);
  return r.body.call.id;
}

test("gateway errors, restarts and cancellations are recorded but are not the agent's runs", async () => {
  // No runner: calls stay queued until the gateway closes them, as it does after a failure or a restart.
  await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
    await g.mandate({});
    const { engine } = g.gw;
    const ids = [await queuedCall(g), await queuedCall(g), await queuedCall(g)];
    expect(await requestCancel(engine, ids[0]!)).toBe('cancelled');
    expect(await engine.close(ids[1]!, 'queued', unbilled('gateway_restarted'))).toBe(true);
    expect(await engine.close(ids[2]!, 'queued', unbilled('gateway_error'))).toBe(true);
    for (const id of ids) await poll(async () => (await g.get(`/v0/receipts/${id}`)).status === 200, { what: `receipt ${id}` });

    const events = await g.db.knex('call_events').where({ agent_id: 'examples/echo-upper' }).orderBy('error_code').pluck('error_code');
    expect(events).toEqual(['cancelled', 'gateway_error', 'gateway_restarted']);

    const one = await g.get<Answer<'describeAgent', 200>>('/v0/agents/examples/echo-upper');
    expect(one.body.record).toEqual({
      runs: 0,
      successes: 0,
      payers: 0,
      counted_payers: 0, // a dev gateway: every payer counts
      success_rate: null,
      latency_p50_ms: null,
      cost_per_successful_run: null,
      currency: null,
    });
    expect(one.body.records.agent.all_time).toMatchObject({ runs: 0, errors: {} });
    const search = await g.get<Answer<'searchAgents', 200>>('/v0/agents?q=echo');
    expect(search.body.agents.find((a: { id: string }) => a.id === 'examples/echo-upper')!.record.runs).toBe(0);
  });
});
