import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test as base } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { startTestGateway } from '../support/gateway.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { audit } from '../../shared/ledger/audit.js';
import type { Schema, Answer, RefusalWithProblems } from '../support/http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mandates and demo credit', () => {
  test('POST /v0/mandates validates, stores, credits the issuer once; a conflicting document is refused', async ({ gateway: g }) => {
    const bad = await g.post<RefusalWithProblems>('/v0/mandates', {
      id: 'Bad Id',
      issuer: 'alice',
      grantee: 'bob/x',
      budget: { total: 5, currency: 'eur' },
      depth: 3,
    });
    expect(bad.status).toBe(400);
    const paths = bad.body.error.problems.map((p: { path: string }) => p.path);
    for (const p of ['$.id', '$.grantee', '$.budget.total', '$.budget.currency', '$.depth']) expect(paths).toContain(p);
    const doc = { id: 'carol/main', issuer: 'carol', grantee: 'carol/bot', allow: { agents: ['examples/*'] }, budget: { total: '2.00', currency: 'EUR' } };
    expect((await g.post('/v0/mandates', doc)).status).toBe(201);
    expect((await g.post('/v0/mandates', doc)).status).toBe(200);
    expect((await g.post('/v0/mandates', { ...doc, budget: { total: '3.00', currency: 'EUR' } })).status).toBe(409);
    await g.post('/v0/mandates', { ...doc, id: 'carol/second' });
    expect((await readBalance(g.db.knex, 'carol', 'EUR')).balance).toBe(5_000_000n);
    expect(await g.db.knex('journal_entries').where({ key: 'signup:carol' })).toHaveLength(1);
    expect((await g.get<Schema<'MandateView'>>('/v0/mandates/carol/main')).body.budget).toEqual({
      currency: 'EUR',
      total: '2.00',
      spent: '0.00',
      reserved: '0.00',
      remaining: '2.00',
    });
    expect((await g.get<Schema<'Error'>>('/v0/mandates/carol/none')).status).toBe(404);
  });

  test('POST /v0/admin/credit adds demo credit, once per Idempotency-Key', async ({ gateway: g }) => {
    await g.mandate({});
    const first = await g.post('/v0/admin/credit', { account: 'alice', amount: '1.50' }, { 'idempotency-key': 'topup-1' });
    expect(first.status).toBe(201);
    const again = await g.post<Answer<'giveDemoCredit', 200>>('/v0/admin/credit', { account: 'alice', amount: '1.50' }, { 'idempotency-key': 'topup-1' });
    expect(again.status).toBe(200);
    expect(again.body.replayed).toBe(true);
    expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(6_500_000n);
    expect(
      (await g.post<Answer<'giveDemoCredit', 200>>('/v0/admin/credit', { account: 'alice', amount: '1.50' }, { 'idempotency-key': 'topup-1' })).body
        .accounts[0]!.balance,
    ).toBe('6.50');
    const conflict = await g.post('/v0/admin/credit', { account: 'alice', amount: '2.00' }, { 'idempotency-key': 'topup-1' });
    expect(conflict.status).toBe(409);
    expect((await g.post('/v0/admin/credit', { account: 'nobody', amount: '1' })).status).toBe(404);
    expect((await g.post('/v0/admin/credit', { account: 'alice', amount: 1 })).status).toBe(400);
    expect((await g.post('/v0/admin/credit', { account: 'alice', amount: '-1' })).status).toBe(400);
    expect((await g.post('/v0/admin/credit', { account: 'holon', amount: '1' })).status).toBe(400);
  });
});

describe('bounded waits and result lifetimes', () => {
  base('past the synchronous bound the answer is 202 {call}; the output expires after HOLON_RESULT_TTL_S', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-wait-'));
    const file = path.join(dir, 'calls.log');
    await writeFile(file, '');
    const g = await startTestGateway({ config: { syncWaitS: 1, resultTtlS: 1 } });
    try {
      await g.mandate({});
      const r = await g.post<Schema<'CallQueued'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file, ms: 2500 } });
      expect(r.status).toBe(202);
      expect(r.body.call.status).toBe('running');
      let got;
      for (let i = 0; i < 100; i++) {
        got = await g.get<Schema<'CallState'>>(`/v0/calls/${r.body.call.id}`);
        if (got.body.receipt) break;
        await sleep(100);
      }
      expect(got!.body.receipt!.status).toBe('succeeded');
      expect(got!.body.output).toEqual({ ok: true });
      // a second async call whose output is never picked up in time
      const late = await g.post<Schema<'CallQueued'>>(
        '/v0/calls',
        { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'gone' } },
        { prefer: 'respond-async' },
      );
      for (let i = 0; i < 50 && !(await g.db.knex('receipts').where({ id: late.body.call.id }).first()); i++) await sleep(50);
      await sleep(2200);
      const expired = await g.get<Schema<'CallState'>>(`/v0/calls/${late.body.call.id}`);
      expect(expired.body.receipt!.status).toBe('succeeded');
      expect(expired.body.output).toBeNull();
      expect((await audit(g.db.knex)).problems).toEqual([]);
    } finally {
      await g.stop();
    }
  });
});
