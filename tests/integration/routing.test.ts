import { describe, expect } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { insertRuns } from '../support/synthetic-runs.js';
import type { RefusalWithReceipt, Schema, CallRan } from '../support/http.js';

describe('capability routing', () => {
  test('picks the cheapest per successful run, and switches once records say so', async ({ gateway: g }) => {
    await g.mandate({ allow: { capabilities: ['text.transform'], agents: [] } });
    const call = () => g.post<CallRan>('/v0/calls', { mandate: 'alice/test', capability: 'text.transform', input: { text: 'x' } });
    // no records: the prior ranks by price (examples/echo-upper 0.01 < fixtures/fork 0.035)
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.body.receipt.agent).toBe('examples/echo-upper@1.0.0');
    // echo-upper now measured at 1 success in 40 runs of three payers, each billed: 0.40 per success beats nobody
    await insertRuns(
      g.db.knex,
      Array.from({ length: 40 }, (_, i) => ({
        agentId: 'examples/echo-upper',
        version: '1.0.0',
        status: i === 0 ? ('succeeded' as const) : ('failed' as const),
        ...(i === 0 ? {} : { code: 'agent_error' }),
        latency: 5,
        cost: 10_000,
        payer: `payer-${i % 3}`,
      })),
    );
    const second = await call();
    expect(second.status).toBe(200);
    expect(second.body.receipt.agent).toBe('fixtures/fork@1.0.0');
    const ranking = await g.get<Schema<'MandateSearch'>>('/v0/agents?capability=text.transform&mandate=alice/test');
    expect(ranking.body.agents.map((a: { id: string }) => a.id)).toEqual(['fixtures/fork', 'examples/echo-upper']);
  });

  test('candidates the mandate does not allow are skipped, with reasons when none is left', async ({ gateway: g }) => {
    await g.mandate({ allow: { capabilities: ['text.transform'], agents: [] }, deny: { agents: ['examples/*', 'fixtures/*'] } });
    const r = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', capability: 'text.transform', input: { text: 'x' } });
    expect(r.status).toBe(403);
    expect(r.body.receipt.reasons.some((x: string) => x.startsWith('examples/echo-upper@1.0.0:'))).toBe(true);
    expect(r.body.receipt.reasons.some((x: string) => x.startsWith('fixtures/fork@1.0.0:'))).toBe(true);
    const ranking = await g.get<Schema<'MandateSearch'>>('/v0/agents?capability=text.transform&mandate=alice/test');
    expect(ranking.body.agents).toEqual([]);
    expect(ranking.body.denied.length).toBe(2);
  });
});
