import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import type { TestGateway } from '../support/gateway.js';
import type { Answer, Schema } from '../support/http.js';
import { readBalance } from '../../shared/ledger/accounts.js';

const ASK_ABOVE = { approval: { above: '0.005' } };

/** The answers these tests expect, as the OpenAPI document defines them. */
type Held = Schema<'CallHeld'>;
type Ran = Schema<'CallSucceeded'>;
type Approval = Schema<'Approval'>;
type Refused = Schema<'Error'>;

async function storedInput(g: TestGateway, id: string): Promise<unknown> {
  return (await g.db.knex('approvals').where({ id }).first('input')).input;
}

async function counterFile(): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-approvals-')), 'calls.log');
  await writeFile(file, '');
  return file;
}

describe('approvals', () => {
  test('approval.above holds the call; {} approves and runs it like the call would have', async ({ gateway: g }) => {
    await g.mandate(ASK_ABOVE);
    const held = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'please' } });
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'pending_approval', approval: { status: 'pending', agent: 'examples/echo-upper@1.0.0', worst_case: '0.01' } });
    expect(held.body.receipt).toMatchObject({ status: 'pending_approval', billed: false, approval: held.body.approval.id });
    const id = held.body.approval.id;
    const list = await g.get<Answer<'listApprovals', 200>>('/v0/approvals');
    expect(list.body.approvals).toHaveLength(1);
    expect(list.body.approvals[0]).toMatchObject({ id, input: { text: 'please' } });
    const ran = await g.post<Ran>(`/v0/approvals/${id}`, {});
    expect(ran.status).toBe(200);
    expect(ran.body.output).toEqual({ text: 'PLEASE' });
    expect(ran.body.receipt).toMatchObject({ status: 'succeeded', billed: true, approval: id });
    expect(await storedInput(g, id)).toBeNull();
    expect((await g.get<Approval>(`/v0/approvals/${id}`)).body).toMatchObject({ status: 'used', call: ran.body.receipt.id });
    expect((await g.get<Approval>(`/v0/approvals/${id}`)).body.input).toBeUndefined();
    expect((await g.post(`/v0/approvals/${id}`, {})).status).toBe(409);
    expect((await g.get<Answer<'listApprovals', 200>>('/v0/approvals')).body.approvals).toEqual([]);
  });

  test('{"run": false} grants: the same input and max_cost with `approval` runs once; anything else is denied', async ({ gateway: g }) => {
    await g.mandate(ASK_ABOVE);
    const call = { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 2, mode: 'ok' }, max_cost: '0.10' };
    const held = await g.post<Held>('/v0/calls', call);
    const id = held.body.approval.id;
    const granted = await g.post<Approval>(`/v0/approvals/${id}`, { run: false });
    expect(granted.body).toMatchObject({ id, status: 'approved' });
    expect(await storedInput(g, id)).toBeNull();
    const otherInput = await g.post<Refused>('/v0/calls', { ...call, input: { units: 3, mode: 'ok' }, approval: id });
    expect(otherInput.status).toBe(403);
    expect(otherInput.body.receipt!.reasons.join(' ')).toMatch(/another input/);
    const otherCap = await g.post('/v0/calls', { ...call, max_cost: '0.20', approval: id });
    expect(otherCap.status).toBe(403);
    const ok = await g.post<Ran>('/v0/calls', { ...call, approval: id });
    expect(ok.status).toBe(200);
    expect(ok.body.receipt).toMatchObject({ approval: id, cost: { own: '0.02' } });
    // A spent grant is its own answer (409 approval_used, as documented), still with a `denied` receipt saying why.
    const again = await g.post<Refused>('/v0/calls', { ...call, approval: id });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('approval_used');
    expect(again.body.receipt).toMatchObject({ status: 'denied', reasons: [`approval ${id} was already used`] });
  });

  test('reject: nothing runs, the input is gone, it cannot be decided again', async ({ gateway: g }) => {
    await g.mandate(ASK_ABOVE);
    const held = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'no' } });
    const id = held.body.approval.id;
    const rejected = await g.post<Approval>(`/v0/approvals/${id}`, { decision: 'reject' });
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    expect(await storedInput(g, id)).toBeNull();
    expect((await g.post(`/v0/approvals/${id}`, {})).status).toBe(409);
    expect((await g.post(`/v0/approvals/${id}`, { decision: 'maybe' })).status).toBe(400);
    expect((await g.post('/v0/approvals/a_missing', {})).status).toBe(404);
    expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(5_000_000n);
    expect(await g.db.knex('calls')).toEqual([]);
  });

  test('a pending approval expires after 7 days and its input is deleted', async ({ gateway: g }) => {
    await g.mandate(ASK_ABOVE);
    const held = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'later' } });
    const id = held.body.approval.id;
    const row = await g.db.knex('approvals').where({ id }).first('created_at', 'expires_at');
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBeGreaterThanOrEqual(7 * 24 * 3600 * 1000 - 5000);
    await g.db
      .knex('approvals')
      .where({ id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expect((await g.get<Approval>(`/v0/approvals/${id}`)).body).toMatchObject({ status: 'expired' });
    expect(await storedInput(g, id)).toBeNull();
    expect((await g.post(`/v0/approvals/${id}`, {})).status).toBe(409);
  });

  test('the same approval approved twice at once runs once', async ({ gateway: g }) => {
    await g.mandate({ approval: { agents: ['fixtures/counter'] } });
    const file = await counterFile();
    const held = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
    expect(held.status).toBe(202);
    const id = held.body.approval.id;
    const both = await Promise.all([g.post(`/v0/approvals/${id}`, {}), g.post(`/v0/approvals/${id}`, {}), g.post(`/v0/approvals/${id}`, {})]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(4_990_000n);
  });

  test('approval.first_use asks once per agent version; an invalid input is refused, never stored', async ({ gateway: g }) => {
    await g.mandate({ approval: { first_use: true } });
    const bad = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { wrong: 1 } });
    expect(bad.status).toBe(422);
    expect(await g.db.knex('approvals')).toEqual([]);
    const first = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'a' } });
    expect(first.status).toBe(202);
    expect((await g.post(`/v0/approvals/${first.body.approval.id}`, {})).status).toBe(200);
    const second = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'b' } });
    expect(second.status).toBe(200);
  });

  test('approving re-checks the budget at that moment', async ({ gateway: g }) => {
    await g.mandate({ approval: { agents: ['fixtures/units'] }, budget: { total: '0.55', currency: 'EUR' } });
    const held = await g.post<Held>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/units', input: { units: 1, mode: 'ok' } });
    expect(held.status).toBe(202);
    // the budget is spent meanwhile: 0.49 left, the held call's worst case is 0.50
    for (let i = 0; i < 6; i++)
      expect((await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } })).status).toBe(200);
    const r = await g.post<Refused>(`/v0/approvals/${held.body.approval.id}`, {});
    expect(r.status).toBe(403);
    expect(r.body.receipt!.reasons[0]).toMatch(/worst case is 0.50/);
  });
});
