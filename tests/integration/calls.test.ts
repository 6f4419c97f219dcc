import { createServer } from 'node:http';
import { describe, expect } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import type { TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { Webhook } from 'standardwebhooks';
import type { Schema, Answer, RefusalWithReceipt, CallRan, RefusalWithProblems } from '../support/http.js';

async function balance(g: TestGateway, account: string): Promise<bigint> {
  return (await readBalance(g.db.knex, account, 'EUR')).balance;
}

async function budget(g: TestGateway, id = 'alice/test') {
  return (await g.get<Schema<'MandateView'>>(`/v0/mandates/${id}`)).body.budget;
}

async function noLiveHolds(g: TestGateway): Promise<void> {
  expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
}

describe('a paid call, end to end', () => {
  test('succeeds, is billed, split, and leaves a receipt and a call event', async ({ gateway: g }) => {
    await g.mandate({});
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'hi' } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ text: 'HI' });
    expect(r.body.receipt).toMatchObject({
      status: 'succeeded',
      billed: true,
      agent: 'examples/echo-upper@1.0.0',
      payer: 'alice',
      worst_case: '0.01',
      cost: { own: '0.01', downstream: '0.00', total: '0.01' },
      splits: [
        { to: 'holon', amount: '0.001' },
        { to: 'examples', amount: '0.009' },
      ],
    });
    expect(await balance(g, 'alice')).toBe(4_990_000n);
    expect(await budget(g)).toEqual({ currency: 'EUR', total: '5.00', spent: '0.01', reserved: '0.00', remaining: '4.99' });
    const event = await g.db.knex('call_events').where({ call_id: r.body.receipt.id }).first();
    expect(event).toMatchObject({ agent_id: 'examples/echo-upper', agent_version: '1.0.0', status: 'succeeded', delegated: false });
    expect(BigInt(event.cost)).toBe(10_000n);
    const entry = await g.db
      .knex('journal_entries')
      .where({ key: `settle:${r.body.receipt.id}` })
      .first();
    expect(entry).toBeDefined();
    // the receipt is readable on its own, and never holds the input or the output
    const again = await g.get<Schema<'Receipt'>>(`/v0/receipts/${r.body.receipt.id}`);
    expect(again.body).toEqual(r.body.receipt);
    expect(JSON.stringify(again.body)).not.toContain('HI');
    await noLiveHolds(g);
  });

  test('the worked fork example settles exactly: platform 0.0035, acme 0.004725, lena 0.026775', async ({ gateway: g }) => {
    await g.mandate({});
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/fork', input: { text: 'x' } });
    expect(r.status).toBe(200);
    expect(r.body.receipt.splits).toEqual([
      { to: 'holon', amount: '0.0035' },
      { to: 'fixtures', amount: '0.026775' },
      { to: 'examples', amount: '0.004725' },
    ]);
    expect(await balance(g, 'alice')).toBe(5_000_000n - 35_000n);
  });

  describe('the billing table (gateway.md §2)', () => {
    const rows: Array<[string, string, number, boolean, string | undefined]> = [
      ['ok', 'output valid', 200, true, undefined],
      ['declared_billed', 'declared error billed:true under attempt', 502, true, 'partial'],
      ['declared_unbilled', 'declared error billed:false', 502, false, 'not_found'],
      ['undeclared', 'undeclared error', 502, false, 'mystery'],
      ['crash', 'crash', 502, false, 'agent_error'],
      ['invalid_output', 'invalid output', 502, false, 'invalid_output'],
    ];
    for (const [mode, what, status, billed, code] of rows) {
      test(`${what}: ${billed ? 'billed' : 'never billed'}`, async ({ gateway: g }) => {
        await g.mandate({});
        const r = await g.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode } });
        expect(r.status).toBe(status);
        expect(r.body.receipt.billed).toBe(billed);
        expect(r.body.receipt.status).toBe(status === 200 ? 'succeeded' : 'failed');
        if (code) expect(r.body.receipt.error).toBe(code);
        expect(r.body.receipt.cost.total).toBe(billed ? '0.01' : '0.00');
        expect(await balance(g, 'alice')).toBe(billed ? 4_990_000n : 5_000_000n);
        await noLiveHolds(g);
      });
    }

    test('declared billed error under charge_on success is not billed', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/success-only', input: { fail: true } });
      expect(r.status).toBe(502);
      expect(r.body.receipt).toMatchObject({ billed: false, error: 'partial' });
    });

    test('per_unit: units × price; declared billed error charges the units reported before it', async ({ gateway: g }) => {
      await g.mandate({});
      const ok = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 7, mode: 'ok' } });
      expect(ok.body.receipt).toMatchObject({ billed: true, worst_case: '0.50', cost: { own: '0.07' } });
      const partial = await g.post<Schema<'CallFailed'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'fixtures/units',
        input: { units: 3, mode: 'declared_billed' },
      });
      expect(partial.body.receipt).toMatchObject({ billed: true, error: 'partial', cost: { own: '0.03' } });
      const capped = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 90, mode: 'ok' } });
      expect(capped.body.receipt.cost.own).toBe('0.50');
      expect(await budget(g)).toMatchObject({ spent: '0.60', reserved: '0.00' });
    });

    test('quote: charged the quote, capped at max', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/quote', input: { quote: '0.123456' } });
      expect(r.body.receipt).toMatchObject({ billed: true, cost: { own: '0.123456' } });
      const over = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/quote', input: { quote: '3.00' } });
      expect(over.body.receipt.cost.own).toBe('1.00');
      const bad = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/quote', input: { quote: '1e3' } });
      expect(bad.status).toBe(502);
      expect(bad.body.receipt).toMatchObject({ billed: false, error: 'agent_error' });
    });
  });

  describe('max_cost (gateway.md §2)', () => {
    test('lowers the worst case and caps the charge; the agent absorbs the overrun', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'fixtures/units',
        input: { units: 40, mode: 'ok' },
        max_cost: '0.20',
      });
      expect(r.status).toBe(200);
      expect(r.body.receipt).toMatchObject({ worst_case: '0.20', cost: { own: '0.20' } });
    });

    test('the agent receives the cap and may refuse with over_budget, unbilled', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<Schema<'CallFailed'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'fixtures/units',
        input: { units: 40, mode: 'over_budget_check' },
        max_cost: '0.20',
      });
      expect(r.status).toBe(502);
      expect(r.body.receipt).toMatchObject({ error: 'over_budget', billed: false });
    });

    test('a per_run price above max_cost is denied, never bought for less', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'a' }, max_cost: '0.009' });
      expect(r.status).toBe(403);
      expect(r.body.receipt.status).toBe('denied');
      expect(r.body.receipt.reasons.join(' ')).toMatch(/max_cost/);
      expect(await balance(g, 'alice')).toBe(5_000_000n);
    });

    test('max_cost lets a call under the approval threshold run without asking', async ({ gateway: g }) => {
      await g.mandate({ approval: { above: '0.30' } });
      const asks = await g.post<Schema<'CallHeld'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' } });
      expect(asks.status).toBe(202);
      expect(asks.body.receipt.status).toBe('pending_approval');
      const runs = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' }, max_cost: '0.20' });
      expect(runs.status).toBe(200);
    });

    test('fx: a USD price converts at the mandate rate, rounded up; no rate is a deny', async ({ gateway: g }) => {
      await g.mandate({ allow: { agents: ['fixtures/*'] }, budget: { total: '5.00', currency: 'EUR', fx: { USD: '0.923456789' } } });
      const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/usd', input: {} });
      expect(r.body.receipt).toMatchObject({ worst_case: '0.092346', cost: { own: '0.092346' } });
      await g.mandate({ id: 'alice/nofx', allow: { agents: ['fixtures/*'] } });
      const denied = await g.post('/v0/calls', { mandate: 'alice/nofx', agent: 'fixtures/usd', input: {} });
      expect(denied.status).toBe(403);
    });
  });

  test('a timeout aborts the agent and bills nothing', async ({ gateway: g }) => {
    await g.mandate({});
    const r = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/slow', input: { ms: 5000 } });
    expect(r.status).toBe(502);
    expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'timeout', billed: false });
    expect(await balance(g, 'alice')).toBe(5_000_000n);
    await noLiveHolds(g);
  });

  describe('refusals get receipts and cost nothing', () => {
    test('rejected input lists every schema problem (422)', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<RefusalWithReceipt & RefusalWithProblems>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'fixtures/units',
        input: { units: -1, mode: 'nope', extra: 1 },
      });
      expect(r.status).toBe(422);
      expect(r.body.receipt.status).toBe('rejected_input');
      expect(r.body.error.problems.length).toBeGreaterThanOrEqual(2);
      expect(Number((await g.db.knex('calls').count({ n: '*' }).first())!.n)).toBe(0);
    });

    test('denied by the mandate (403) with reasons; unknown agent and mandate (404)', async ({ gateway: g }) => {
      await g.mandate({ allow: { agents: ['fixtures/*'] } });
      const denied = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } });
      expect(denied.status).toBe(403);
      expect(denied.body.receipt.reasons[0]).toMatch(/examples\/echo-upper/);
      const unknownAgent = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'nobody/nothing', input: {} });
      expect(unknownAgent.status).toBe(404);
      expect(unknownAgent.body.receipt.status).toBe('denied');
      const unknownMandate = await g.post('/v0/calls', { mandate: 'ghost/none', agent: 'examples/echo-upper', input: {} });
      expect(unknownMandate.status).toBe(404);
      expect((await g.get<Answer<'listReceipts', 200>>('/v0/receipts?limit=10')).body.receipts).toHaveLength(3);
    });

    test('a budget that cannot cover the worst case says what was short', async ({ gateway: g }) => {
      await g.mandate({ budget: { total: '0.30', currency: 'EUR' } });
      const r = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' } });
      expect(r.status).toBe(403);
      expect(r.body.receipt.reasons[0]).toMatch(/worst case/);
    });

    test('a payer balance that cannot cover the worst case says what was short', async ({ gateway: g }) => {
      await g.mandate({ budget: { total: '50.00', currency: 'EUR' } });
      const big = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' } });
      expect(big.status).toBe(200);
      // drain alice through real entries: spend until less than 0.50 is left
      for (let i = 0; i < 9; i++) await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 50, mode: 'ok' } });
      const r = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' } });
      expect(r.status).toBe(403);
      expect(r.body.receipt.reasons[0]).toMatch(/account alice has 0.49 EUR available/);
    });
  });

  describe('bad input', () => {
    test('malformed JSON, wrong types, unknown fields, NUL, huge bodies: 4xx, nothing reserved', async ({ gateway: g }) => {
      await g.mandate({});
      expect((await g.post('/v0/calls', '{"mandate": ')).status).toBe(400);
      const types = await g.post<RefusalWithProblems>('/v0/calls', { mandate: 5, agent: ['x'], input: {}, max_cost: 0.5, surprise: 1 });
      expect(types.status).toBe(400);
      expect(types.body.error.problems.map((p: { path: string }) => p.path).sort()).toEqual(['$.agent', '$.mandate', '$.max_cost', '$.surprise']);
      const both = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', capability: 'text.transform', input: {} });
      expect(both.status).toBe(400);
      const nul = await g.post<RefusalWithProblems>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'a\u0000b' } });
      expect(nul.status).toBe(400);
      expect(nul.body.error.problems[0]).toEqual({ path: '$.input.text', message: 'contains a NUL character' });
      const huge = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x'.repeat(2_000_000) } });
      expect(huge.status).toBe(413);
      expect(await g.db.knex('holds')).toEqual([]);
      expect(await balance(g, 'alice')).toBe(5_000_000n);
    });
  });

  test('200 concurrent calls against a budget for 50: at most 50 billed, spent ≤ total, no hold left', async ({ gateway: g }) => {
    await g.mandate({ budget: { total: '0.50', currency: 'EUR' } });
    const results = await Promise.all(
      Array.from({ length: 200 }, () => g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const denied = results.filter((r) => r.status === 403).length;
    expect(ok).toBeLessThanOrEqual(50);
    expect(ok + denied).toBe(200);
    expect(ok).toBeGreaterThan(0);
    const b = await budget(g);
    expect(b.reserved).toBe('0.00');
    expect(BigInt(Math.round(Number(b.spent) * 1e6))).toBe(BigInt(ok) * 10_000n);
    expect(await balance(g, 'alice')).toBe(5_000_000n - BigInt(ok) * 10_000n);
    await noLiveHolds(g);
  });

  describe('async and callbacks', () => {
    test('Prefer: respond-async answers 202 at once; GET reads the output, as often as asked', async ({ gateway: g }) => {
      await g.mandate({});
      const r = await g.post<Schema<'CallQueued'>>(
        '/v0/calls',
        { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'later' } },
        { prefer: 'respond-async' },
      );
      expect(r.status).toBe(202);
      const id = r.body.call.id;
      let got: any;
      await poll(
        async () => {
          got = await g.get(`/v0/calls/${id}`);
          return got.body.receipt;
        },
        { what: 'the receipt', timeoutMs: 5_000, intervalMs: 50, orUndefined: true },
      );
      expect(got!.body).toMatchObject({ call: { id, status: 'succeeded' }, output: { text: 'LATER' } });
      const second = await g.get<Schema<'CallState'>>(`/v0/calls/${id}`);
      expect(second.body.output).toEqual({ text: 'LATER' });
      expect(second.body.receipt!.id).toBe(id);
      expect((await g.get('/v0/calls/r_nope')).status).toBe(404);
    });

    test('callback_url receives {type, call, status, output, receipt}, signed the Standard Webhooks way, retried', async ({ gateway: g }) => {
      await g.mandate({});
      const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
      let failFirst = true;
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          if (failFirst) {
            failFirst = false;
            res.writeHead(503).end();
            return;
          }
          received.push({ headers: req.headers, body });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      try {
        const r = await g.post<Schema<'CallQueued'>>(
          '/v0/calls',
          { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'cb' }, callback_url: `http://127.0.0.1:${port}/hook` },
          { prefer: 'respond-async' },
        );
        expect(r.status).toBe(202);
        await poll(() => received.length > 0, { what: 'the callback', timeoutMs: 10_000, intervalMs: 50, orUndefined: true });
        expect(received).toHaveLength(1);
        const { headers, body } = received[0]!;
        // A receiver verifies with the standardwebhooks library and the gateway's one dev secret.
        const receiver = new Webhook(g.gw.webhookSecret!.secret);
        const signed = { ...(headers as Record<string, string>) };
        expect(receiver.verify(body, signed)).toMatchObject({ type: 'call.completed', version: 1 });
        expect(() => receiver.verify(body.replace('CB', 'XX'), signed)).toThrow();
        expect(JSON.parse(body)).toMatchObject({ call: { id: r.body.call.id }, status: 'succeeded', output: { text: 'CB' }, receipt: { billed: true } });
      } finally {
        server.close();
      }
    });
  });

  test('reads: receipts paged, agents ranked with a mandate, one agent with versions', async ({ gateway: g }) => {
    await g.mandate({});
    for (let i = 0; i < 3; i++) await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } });
    const page1 = await g.get<Answer<'listReceipts', 200>>('/v0/receipts?mandate=alice/test&limit=2');
    expect(page1.body.receipts).toHaveLength(2);
    const page2 = await g.get<Answer<'listReceipts', 200>>(`/v0/receipts?mandate=alice/test&limit=2&before=${page1.body.next}`);
    expect(page2.body.receipts).toHaveLength(1);
    expect(page2.body.next).toBeUndefined();
    const agents = await g.get<Schema<'MandateSearch'>>('/v0/agents?capability=text.transform&mandate=alice/test');
    expect(agents.body.agents.map((a: { id: string }) => a.id)).toContain('examples/echo-upper');
    const one = await g.get('/v0/agents/examples/echo-upper');
    expect(one.body).toMatchObject({ id: 'examples/echo-upper', version: '1.0.0', record: { runs: 3, successes: 3 } });
    expect((await g.get('/v0/agents/examples/echo-upper@^2')).status).toBe(404);
  });
});
