/**
 * The call engine is built by the composition root before any role starts (services/compose.ts;
 * shared/calls/engine.ts `createCallEngine`), and every role gets that one engine: whatever order a process's roles
 * are named in, a call admitted there runs there with no run job (shared/calls/run/run-here.ts) and is settled there
 * with no settle job, exactly once. A runner in a process without a settler hands its calls to the settle queue
 * instead, and an API without a runner queues its calls' runs.
 */
import { describe, expect, test } from 'vitest';
import type { Role } from '../../services/compose.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, sampleValue, type Sample } from '../support/prometheus.js';
import { poll } from '../support/poll.js';
import type { Schema } from '../support/http.js';

function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((first, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

async function scrape(g: TestGateway): Promise<Sample[]> {
  const r = await fetch(`${g.url}/metrics`);
  expect(r.status).toBe(200);
  return parsePrometheus(await r.text());
}

async function paidCall(g: TestGateway): Promise<void> {
  const r = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'in order' } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ status: 'succeeded', output: { text: 'IN ORDER' }, receipt: { billed: true, cost: { own: '0.01' } } });
}

describe('the roles of one process, in every order', () => {
  for (const roles of orders<Role>(['api', 'runner', 'settler']).map((o) => [...o, 'evaluator' as const])) {
    test(`${roles.join(', ')}: run and settled in the process, once, with no run job and no settle job`, async () => {
      await useAudited(await startTestGateway({ roles }), async (g) => {
        await g.mandate({});
        await paidCall(g);
        const m = await scrape(g);
        expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'run' }) ?? 0).toBe(0);
        expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'settle' }) ?? 0).toBe(0);
        expect(sampleValue(m, 'holon_calls_total', { status: 'succeeded', error_code: 'none', agent: 'examples/echo-upper' })).toBe(1);
        expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.01', reserved: '0.00' });
      });
    });
  }

  test('an API without a runner queues its calls, and a runner without a settler hands them to the settle queue', async () => {
    await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
      const runner = await startTestGateway({ beside: g, roles: ['runner'] });
      try {
        await g.mandate({});
        await paidCall(g);
        const m = await poll(
          async () => {
            const samples = await scrape(g);
            return sampleValue(samples, 'holon_queue_wait_seconds_count', { queue: 'settle' }) ? samples : undefined;
          },
          { what: 'the settle job of the call the other process ran', timeoutMs: 10_000, intervalMs: 50 },
        );
        expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'settle' })).toBe(1);
        // The run job was the runner process's (its own metrics); the API's process ran nothing.
        expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'run' }) ?? 0).toBe(0);
      } finally {
        await runner.stop();
      }
    });
  });
});
