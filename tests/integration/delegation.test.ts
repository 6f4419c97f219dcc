import { createServer } from 'node:http';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test as base } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { audit } from '../../shared/ledger/audit.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import type { Schema } from '../support/http.js';

const MANDATE = {
  allow: { agents: ['fixtures/*', 'examples/*'], capabilities: ['text.*', 'test.*'] },
  budget: { total: '5.00', currency: 'EUR' },
  delegation: { max_depth: 2 },
};

const micros = (s: string) => BigInt(Math.round(Number(s) * 1e6));

/** A receipt and its children: the tree of a delegated call. */
type Tree = Schema<'Receipt'>;

function checkTree(t: Tree): void {
  expect(micros(t.cost.total)).toBe(micros(t.cost.own) + micros(t.cost.downstream));
  for (const c of t.children) checkTree(c);
}

async function alice(g: TestGateway): Promise<bigint> {
  return (await readBalance(g.db.knex, 'alice', 'EUR')).balance;
}

async function settled(g: TestGateway, id: string): Promise<Tree> {
  return poll(
    async () => {
      const r = await g.get<Tree>(`/v0/receipts/${id}`);
      return r.status === 200 && (r.body.status === 'succeeded' || r.body.status === 'failed') ? r.body : undefined;
    },
    { what: `receipt ${id} to settle`, timeoutMs: 10_000, intervalMs: 50 },
  );
}

describe('delegation', () => {
  test('a passthrough orchestrator: children paid from the caller hold, a receipt tree that adds up', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/pipeline', input: { text: 'hi' } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ text: 'HI', units: 3 });
    const tree: Tree = r.body.receipt;
    expect(tree).toMatchObject({ agent: 'fixtures/pipeline@1.0.0', sub_mandate: `alice/test.${tree.id}`, billed: true });
    expect(tree.children.map((c) => c.agent).sort()).toEqual(['examples/echo-upper@1.0.0', 'fixtures/units@1.0.0']);
    expect(tree.cost).toEqual({ own: '0.05', downstream: '0.04', total: '0.09' });
    checkTree(tree);
    expect(await alice(g)).toBe(5_000_000n - 90_000n);
    expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.09', reserved: '0.00' });
    const sub = (await g.get<Schema<'MandateView'>>(`/v0/mandates/alice/test.${tree.id}`)).body;
    expect(sub.mandate).toMatchObject({ issuer: 'alice/assistant', grantee: 'fixtures/pipeline' });
    expect(sub.budget).toMatchObject({ total: '0.30', spent: '0.04', reserved: '0.00' });
  });

  test('a three-level chain conserves money and its tree adds up', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/chain-top', input: { text: 'deep' } });
    expect(r.status).toBe(200);
    const tree: Tree = r.body.receipt;
    checkTree(tree);
    expect(tree.cost.total).toBe('0.11');
    expect(tree.children[0]!.children).toHaveLength(2);
    expect(await alice(g)).toBe(5_000_000n - 110_000n);
  });

  test('a looping orchestrator never exceeds its cap', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/looper', input: { times: 12 } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ ok: 5, refused: 7 });
    expect(r.body.receipt.cost).toEqual({ own: '0.01', downstream: '0.05', total: '0.06' });
    expect(await alice(g)).toBe(5_000_000n - 60_000n);
  });

  test('concurrent ctx.calls race for the cap: exactly what the cap allows is paid', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const runs = await Promise.all(
      [0, 1, 2].map(() =>
        g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/looper', input: { times: 12, parallel: true } }),
      ),
    );
    for (const r of runs) {
      expect(r.status).toBe(200);
      expect(r.body.output).toEqual({ ok: 5, refused: 7 });
      expect(r.body.receipt.cost.total).toBe('0.06');
      checkTree(r.body.receipt);
    }
    expect(await alice(g)).toBe(5_000_000n - 3n * 60_000n);
    expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
  });

  test('included: the orchestrator author pays its children with its own hold', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/fork', input: { text: 'x' } });
    expect((await g.post('/v0/admin/credit', { account: 'fixtures', amount: '1.00' })).status).toBe(201);
    const before = (await readBalance(g.db.knex, 'fixtures', 'EUR')).balance;
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/included', input: { text: 'inc' } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ text: 'INC' });
    expect(r.body.receipt.cost).toEqual({ own: '0.05', downstream: '0.00', total: '0.05' });
    expect(r.body.receipt.children[0]).toMatchObject({ payer: 'fixtures', cost: { total: '0.01' } });
    // fixtures earned 90% of 0.05 and paid 0.01 for its child
    expect((await readBalance(g.db.knex, 'fixtures', 'EUR')).balance - before).toBe(45_000n - 10_000n);
  });

  test('an orchestrator timing out with a child in flight settles after it: child paid, parent unbilled', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-deleg-')), 'calls.log');
    await writeFile(file, '');
    const r = await g.post<Schema<'CallQueued'>>(
      '/v0/calls',
      { mandate: 'alice/test', agent: 'fixtures/slow-parent', input: { file } },
      { prefer: 'respond-async' },
    );
    const tree = await settled(g, r.body.call.id);
    expect(tree).toMatchObject({ status: 'failed', billed: false });
    expect(tree.children).toHaveLength(1);
    expect(tree.children[0]).toMatchObject({ status: 'succeeded', billed: true, cost: { total: '0.01' } });
    expect(tree.cost).toEqual({ own: '0.00', downstream: '0.01', total: '0.01' });
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    expect(await alice(g)).toBe(5_000_000n - 10_000n);
    expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
  });

  test('inside a delegated run nobody can approve: approve becomes deny', async ({ gateway: g }) => {
    await g.mandate({ ...MANDATE, approval: { agents: ['examples/echo-upper'] } });
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/looper', input: { times: 2 } });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ ok: 0, refused: 2 });
    for (const child of r.body.receipt.children as Array<{ status: string; reasons: string[] }>) {
      expect(child.status).toBe('denied');
      expect(child.reasons.join(' ')).toMatch(/nobody can approve inside a delegated run/);
    }
    expect(await g.db.knex('approvals')).toEqual([]);
    expect(await alice(g)).toBe(5_000_000n - 10_000n);
  });

  test('approval.first_use counts the whole mandate tree: a version approved once runs in delegated calls', async ({ gateway: g }) => {
    await g.mandate({ ...MANDATE, approval: { first_use: true } });
    const direct = await g.post<Schema<'CallHeld'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'first' } });
    expect(direct.status).toBe(202);
    expect((await g.post(`/v0/approvals/${direct.body.approval.id}`, {})).status).toBe(200);
    const held = await g.post<Schema<'CallHeld'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/looper', input: { times: 2 } });
    expect(held.status).toBe(202);
    const ran = await g.post<Schema<'CallSucceeded'>>(`/v0/approvals/${held.body.approval.id}`, {});
    expect(ran.status).toBe(200);
    expect(ran.body.output).toEqual({ ok: 2, refused: 0 });
  });

  test('max_depth 0: no sub-mandate, no ctx.call; a call outside the declared slots is denied', async ({ gateway: g }) => {
    await g.mandate({ ...MANDATE, delegation: { max_depth: 0 } });
    const r = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/pipeline', input: { text: 'x' } });
    expect(r.status).toBe(502);
    expect(r.body.receipt).toMatchObject({ billed: false, sub_mandate: null, error: 'agent_error' });
    expect(await alice(g)).toBe(5_000_000n);
  });
});

describe('delegation by remote agents', () => {
  base('a webhook orchestrator calls back with its delegation token; the token dies with the run', async () => {
    let gatewayUrl = '';
    let seenToken = '';
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', async () => {
        seenToken = String(req.headers['x-holon-delegation'] ?? '');
        const post = (payload: unknown) =>
          fetch(`${gatewayUrl}/v0/calls`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-holon-delegation': seenToken },
            body: JSON.stringify(payload),
          }).then(async (r) => ({ status: r.status, body: await r.json() }));
        const child = await post({ agent: 'examples/echo-upper', input: { text: JSON.parse(body).text } });
        const outside = await post({ agent: 'fixtures/fork', input: { text: 'no' } });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ text: child.body.output?.text ?? null, outside: outside.status }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-remote-deleg-'));
    await mkdir(path.join(dir, 'hook'));
    await writeFile(
      path.join(dir, 'hook', 'holon.yaml'),
      [
        'id: hooks/orchestrator',
        'version: 1.0.0',
        'summary: a webhook that hires',
        'capabilities: [test.hook]',
        'license: MIT',
        'interface: { input: { type: object }, output: { type: object } }',
        'pricing: { model: per_run, currency: EUR, amount: "0.02" }',
        'calls: [{ agent: "examples/echo-upper", max_cost: "0.01" }]',
        'downstream: { mode: passthrough, cap: "0.01" }',
        `runtime: { kind: webhook, endpoint: "http://127.0.0.1:${port}/", limits: { timeout_s: 10 } }`,
        '',
      ].join('\n'),
    );
    const g = await startTestGateway({ config: { registryDirs: ['examples', 'tests/fixtures/registry', dir] } });
    gatewayUrl = g.url;
    try {
      await g.mandate({ ...MANDATE, allow: { agents: ['hooks/*', 'examples/*', 'fixtures/*'] } });
      const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'hooks/orchestrator', input: { text: 'remote' } });
      expect(r.status).toBe(200);
      expect(r.body.output).toEqual({ text: 'REMOTE', outside: 403 });
      expect(seenToken).toMatch(/^hld_/);
      const tree: Tree = r.body.receipt;
      checkTree(tree);
      expect(tree.cost).toEqual({ own: '0.02', downstream: '0.01', total: '0.03' });
      expect(tree.children.map((c) => `${c.agent}:${c.status}`).sort()).toEqual(['examples/echo-upper@1.0.0:succeeded', 'fixtures/fork:denied']);
      // the run is over: its token no longer works
      const late = await g.post('/v0/calls', { agent: 'examples/echo-upper', input: { text: 'late' } }, { 'x-holon-delegation': seenToken });
      expect(late.status).toBe(403);
      expect((await g.post('/v0/calls', { agent: 'examples/echo-upper', input: {} }, { 'x-holon-delegation': 'hld_forged' })).status).toBe(403);
      expect(await alice(g)).toBe(5_000_000n - 30_000n);
      expect((await audit(g.db.knex)).problems).toEqual([]);
    } finally {
      await g.stop();
      server.close();
    }
  });
});

describe('max_cost and delegation', () => {
  test("a caller's max_cost leaves the children what the cap leaves after the orchestrator's own price", async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    // pipeline: own 0.05; with max_cost 0.07 its children get 0.02: echo-upper (0.01) fits, units (0.20) does not
    const r = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/pipeline', input: { text: 'x' }, max_cost: '0.07' });
    expect(r.status).toBe(502);
    expect(r.body.receipt).toMatchObject({ error: 'child_failed', billed: false, worst_case: '0.07' });
    const sub = (await g.get<Schema<'MandateView'>>(`/v0/mandates/alice/test.${r.body.receipt.id}`)).body;
    expect(sub.budget.total).toBe('0.02');
    const units = (r.body.receipt as Tree).children.find((c) => c.agent === 'fixtures/units@1.0.0')!;
    expect(units.status).toBe('denied');
    expect(await alice(g)).toBe(5_000_000n - 10_000n);
  });
});

describe('the examples', () => {
  test('examples/invoice-pipeline hires text.count and text.translate; examples/invoice-digest pays its hire itself', async ({ gateway: g }) => {
    await g.mandate({ ...MANDATE, delegation: { max_depth: 1 } });
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', {
      mandate: 'alice/test',
      agent: 'examples/invoice-pipeline',
      input: { text: 'Invoice 42: 3 widgets', to: 'fr' },
    });
    expect(r.status).toBe(200);
    expect(r.body.output).toEqual({ words: 4, translation: 'stegdiw 3 :24 eciovnI' });
    const tree: Tree = r.body.receipt;
    checkTree(tree);
    expect(tree.children.map((c) => c.agent).sort()).toEqual(['examples/quote-translate@1.0.0', 'examples/word-count@1.0.0']);
    expect(tree.cost).toEqual({ own: '0.10', downstream: '0.0061', total: '0.1061' });
    expect(await alice(g)).toBe(5_000_000n - 106_100n);
    // the included orchestrator: its author needs money of its own to hire
    await g.post('/v0/mandates', {
      id: 'examples/house',
      issuer: 'examples',
      grantee: 'examples/digest',
      allow: { agents: ['examples/*'] },
      budget: { total: '1.00', currency: 'EUR' },
    });
    const d = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/invoice-digest', input: { text: 'invoice 42' } });
    expect(d.status).toBe(200);
    expect(d.body.output).toEqual({ digest: 'INVOICE 42' });
    expect(d.body.receipt.cost.total).toBe('0.05');
    expect(d.body.receipt.children[0]).toMatchObject({ payer: 'examples', billed: true });
  });
});
