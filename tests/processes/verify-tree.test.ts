import { expect } from 'vitest';
import { holonCli } from '../support/backup-checks.js';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import type { TestGateway } from '../support/gateway.js';
import { verifyMandateView, verifyReceiptTree, type KeySet } from '../support/independent-verifier.js';
import { inDir } from '../support/temp-files.js';
import type { Schema } from '../support/http.js';

const MANDATE = {
  allow: { agents: ['fixtures/*', 'examples/*'], capabilities: ['text.*', 'test.*'] },
  budget: { total: '5.00', currency: 'EUR' },
  delegation: { max_depth: 2 },
};

async function call(g: TestGateway, agent: string, input: unknown): Promise<any> {
  const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent, input });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.receipt;
}

const jwksOf = async (g: TestGateway) => (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as KeySet;

test('every tree shape the gateway makes verifies, in holon verify and the independent verifier', async ({ gateway: g }) => {
  await g.mandate(MANDATE);
  await g.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/fork', input: { text: 'x' } });
  expect((await g.post('/v0/admin/credit', { account: 'fixtures', amount: '1.00' })).status).toBe(201);
  const trees = [
    await call(g, 'examples/invoice-pipeline', { text: 'Invoice 7', to: 'fr' }), // passthrough, two children
    await call(g, 'fixtures/chain-top', { text: 'deep' }), // passthrough, two levels
    await call(g, 'fixtures/included', { text: 'inc' }), // included: downstream 0, the author pays its child
    (await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/looper', input: { times: 12 } })).body.receipt, // children refused past the cap
  ];
  expect(trees.map((t) => t.children.length > 0)).toEqual([true, true, true, true]);
  expect(trees[2].cost.downstream).toBe('0.00');
  const jwks = await jwksOf(g);
  await inDir(async (file) => {
    const k = await file('jwks.json', jwks);
    for (const [i, tree] of trees.entries()) {
      const r = await holonCli(['verify', await file(`tree-${i}.json`, tree), '--jwks', k]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/✓ tree: each child under its parent/);
      expect(await verifyReceiptTree(tree, jwks)).toEqual({ ok: true });
    }
  });
});

test('children replaced, emptied or listed twice: NOT verified, naming the child and the rule', async ({ gateway: g }) => {
  await g.mandate(MANDATE);
  const receipt = await call(g, 'examples/invoice-pipeline', { text: 'Invoice 7', to: 'fr' });
  const other = await call(g, 'examples/invoice-pipeline', { text: 'Invoice 8', to: 'fr' });
  expect(other.payer).toBe(receipt.payer);
  expect(receipt.cost.downstream).not.toBe('0.00');
  const [c0, c1] = receipt.children;
  const jwks = await jwksOf(g);
  const tampered = {
    // Every child signed and of the same payer, but another call's: same costs, so only the parent rule sees it.
    replaced: { tree: { ...receipt, children: other.children }, rule: /✗ tree: parent \(r_\w+\): child r_\w+ names parent r_\w+, but is shown under r_\w+/ },
    emptied: {
      tree: { ...receipt, children: [] },
      rule: /✗ tree: downstream \(r_\w+\): the children shown under r_\w+ total 0\.00, but its signed cost\.downstream is/,
    },
    twice: { tree: { ...receipt, children: [c0, c0, c1] }, rule: new RegExp(`✗ tree: distinct \\(${c0.id}\\): receipt ${c0.id} appears more than once`) },
    swapped: { tree: { ...receipt, children: [c0, other.children[1]] }, rule: new RegExp(`✗ tree: parent \\(${other.children[1].id}\\)`) },
  };
  await inDir(async (file) => {
    const k = await file('jwks.json', jwks);
    for (const [name, { tree, rule }] of Object.entries(tampered)) {
      const r = await holonCli(['verify', await file(`${name}.json`, tree), '--jwks', k]);
      expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stdout, name).toMatch(rule);
      // Every signature still verifies: only the tree's rules catch it.
      expect(r.stdout, name).not.toMatch(/✗ signature/);
      expect(r.stdout, name).toMatch(/NOT verified: tree: /);
      const independent = await verifyReceiptTree(tree, jwks);
      expect(independent.ok, name).toBe(false);
    }
  });
  expect(await verifyReceiptTree(tampered.replaced.tree, jwks)).toEqual({ ok: false, reason: 'children[0]: parent' });
  expect(await verifyReceiptTree(tampered.emptied.tree, jwks)).toEqual({ ok: false, reason: 'downstream' });
  expect(await verifyReceiptTree(tampered.twice.tree, jwks)).toEqual({ ok: false, reason: 'children[1]: duplicate id' });
});

test('a mandate view whose unsigned mandate differs from its statement is NOT verified; revoked aside', async ({ gateway: g }) => {
  await g.mandate(MANDATE);
  const view = (await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body;
  const jwks = await jwksOf(g);
  const inflated = { ...view, mandate: { ...view.mandate, budget: { ...view.mandate.budget, total: '999.00' } } };
  const revoked = { ...view, mandate: { ...view.mandate, revoked: true } };
  await inDir(async (file) => {
    const k = await file('jwks.json', jwks);
    const ok = await holonCli(['verify', await file('view.json', view), '--jwks', k]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/✓ document of alice\/test: the view shows the signed document/);
    expect((await holonCli(['verify', await file('revoked.json', revoked), '--jwks', k])).code).toBe(0);
    const bad = await holonCli(['verify', await file('inflated.json', inflated), '--jwks', k]);
    expect(bad.code, bad.stdout).toBe(1);
    expect(bad.stdout).toMatch(/✓ signature of alice\/test/);
    expect(bad.stdout).toMatch(
      /✗ document of alice\/test: the view's mandate differs from the signed statement at \$\.budget\.total: only the statement was signed/,
    );
  });
  expect(await verifyMandateView(view, jwks)).toEqual({ ok: true });
  expect(await verifyMandateView(revoked, jwks)).toEqual({ ok: true });
  expect(await verifyMandateView(inflated, jwks)).toEqual({ ok: false, reason: 'mandate differs from statement' });
});

test('a key set with a malformed key or a retired_at that does not parse is exit 2 with a sentence, never a stack trace', async ({ gateway: g }) => {
  await g.mandate(MANDATE);
  const receipt = await call(g, 'examples/echo-upper', { text: 'hi' });
  const jwks = await jwksOf(g);
  const key = jwks.keys[0]!;
  const damaged: Record<string, { keys: unknown[] }> = {
    'short x': { keys: [{ ...key, x: key.x.slice(0, 20) }] },
    'wrong curve': { keys: [{ ...key, crv: 'P-256' }] },
    'no kid': { keys: [{ ...key, kid: undefined }] },
    'retired yesterday': { keys: [{ ...key, retired_at: 'yesterday' }] },
    'retired a number': { keys: [{ ...key, retired_at: 1_700_000_000 }] },
    'a key that is not an object': { keys: [key, 'oops'] },
  };
  await inDir(async (file) => {
    const r = await file('receipt.json', receipt);
    for (const [name, set] of Object.entries(damaged)) {
      const out = await holonCli(['verify', r, '--jwks', await file(`${name}.json`, set)]);
      expect(out.code, `${name}: ${out.stdout}${out.stderr}`).toBe(2);
      expect(out.stderr, name).toMatch(/^holon verify: key \d of the key set .* the key set is damaged, fetch it again\n$/);
      expect(out.stderr, name).not.toMatch(/\n\s+at /);
      expect(out.stdout, name).toBe('');
    }
  });
  expect(await verifyReceiptTree(receipt, { keys: [{ ...key, retired_at: 'yesterday' }] } as KeySet)).toEqual({ ok: false, reason: 'key retired_at' });
});
