/**
 * The receipt log's order is the commit order (docs/receipts.md "The log"): 64 concurrent calls through two API
 * processes, two runners and a settler, as separate processes on one Postgres — paid calls settled by the settler's
 * group commit, refusals written by the APIs — give a log with no gap and no duplicate, every receipt once. While
 * they run, every snapshot of the leaves is a prefix 0 … n−1: a later leaf never becomes visible before an earlier
 * one, which is what appending in commit order means. Each process signs with a key of its own (no
 * HOLON_SIGNING_KEY), and the key set lists every one of them: each receipt verifies independently.
 */
import { afterEach, expect, onTestFailed, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { startTestGateway, startTestCluster } from '../support/gateway.js';
import { verifyReceiptProof, verifyReceiptTree, type KeySet } from '../support/independent-verifier.js';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: await res.json() };
}

test('64 concurrent calls across two APIs and a settler: the log is the commit order, no gap, no duplicate', async () => {
  const t = await startTestCluster();
  stop = t.stop;
  onTestFailed(() => console.error(`service output:\n${t.cluster.describe()}`));
  await t.cluster.start('settler');
  const [a, b] = await Promise.all([t.cluster.start('api'), t.cluster.start('api'), t.cluster.start('runner'), t.cluster.start('runner')]);
  const made = await json(`${a!.url}/v0/mandates`, {
    method: 'POST',
    body: JSON.stringify({
      id: 'alice/log',
      issuer: 'alice',
      grantee: 'alice/assistant',
      allow: { agents: ['examples/*'] },
      budget: { total: '5.00', currency: 'EUR' },
    }),
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);

  // Snapshots of the leaves while the calls run: each must be exactly 0 … n−1.
  let sampling = true;
  const snapshots: number[] = [];
  const sampler = (async () => {
    while (sampling) {
      const r = await t.db.knex.raw<{ rows: Array<{ n: string | number; top: string | number | null }> }>(
        'SELECT count(*) AS n, max(idx) AS top FROM receipt_log_leaves',
      );
      const { n, top } = r.rows[0]!;
      expect(top === null ? 0 : Number(top) + 1, `a snapshot of ${n} leaves has a hole`).toBe(Number(n));
      snapshots.push(Number(n));
    }
  })();
  const calls = Array.from({ length: 64 }, (_, i) => {
    const api = i % 2 === 0 ? a! : b!;
    // One in eight is refused (an unknown agent): its receipt is written by the API, not the settler.
    const agent = i % 8 === 7 ? 'examples/no-such-agent' : 'examples/echo-upper';
    return json(`${api.url}/v0/calls`, { method: 'POST', body: JSON.stringify({ mandate: 'alice/log', agent, input: { text: `call ${i}` } }) });
  });
  const answers = await Promise.all(calls);
  sampling = false;
  await sampler;
  expect(answers.map((x) => x.status).sort()).toEqual([...Array(56).fill(200), ...Array(8).fill(404)]);
  expect(snapshots.length).toBeGreaterThan(1);

  const leaves = (await t.db.knex('receipt_log_leaves').orderBy('idx').select('idx', 'receipt_id')) as Array<{ idx: string | number; receipt_id: string }>;
  const receipts = (await t.db.knex('receipts').select('id')) as Array<{ id: string }>;
  expect(leaves.map((l) => Number(l.idx))).toEqual(receipts.map((_, i) => i));
  expect(new Set(leaves.map((l) => l.receipt_id)).size).toBe(leaves.length);
  expect(leaves.map((l) => l.receipt_id).sort()).toEqual(receipts.map((r) => r.id).sort());
  expect(new Set(answers.map((x) => x.body.receipt.id))).toEqual(new Set(receipts.map((r) => r.id)));

  // Every process signed with a key of its own; the key set lists them all, so every receipt and proof verifies.
  const keySet = (await json(`${b!.url}/.well-known/jwks.json`)).body as KeySet;
  const kids = await t.db.knex('signing_keys').pluck('kid');
  expect(kids.length).toBeGreaterThanOrEqual(3);
  expect(keySet.keys.map((k) => k.kid)).toEqual(expect.arrayContaining(kids));
  for (const { body } of answers) {
    expect(await verifyReceiptTree(body.receipt, keySet)).toEqual({ ok: true });
  }
  const last = answers[answers.length - 1]!.body.receipt;
  const proof = await json(`${a!.url}/v0/receipts/${last.id}/proof`);
  expect(await verifyReceiptProof({ receipt: last, proof: proof.body, keySet })).toEqual({ ok: true });
  expect(await audit(t.db.knex)).toEqual({ ok: true, problems: [] });
});

test('one process: appends from concurrent settlements and refusals never interleave inside a transaction', async () => {
  const g = await startTestGateway();
  stop = () => g.stop();
  await g.mandate({ allow: { agents: ['examples/*'] } });
  const answers = await Promise.all(
    Array.from({ length: 64 }, (_, i) =>
      g.post('/v0/calls', { mandate: 'alice/test', agent: i % 4 === 3 ? 'examples/nope' : 'examples/echo-upper', input: { text: String(i) } }),
    ),
  );
  expect(answers.filter((x) => x.status === 200)).toHaveLength(48);
  // A settle batch's receipts sit side by side in the log, in the batch's order: the leaves of one transaction are contiguous.
  const rows = (
    await g.db.knex.raw<{ rows: Array<{ xmin: string; idx: string | number }> }>(
      'SELECT r.xmin::text AS xmin, l.idx FROM receipt_log_leaves l JOIN receipts r ON r.id = l.receipt_id ORDER BY l.idx',
    )
  ).rows;
  const seen = new Set<string>();
  let previous: string | undefined;
  for (const row of rows) {
    if (row.xmin !== previous) {
      expect(seen.has(row.xmin), `transaction ${row.xmin}'s leaves are not contiguous`).toBe(false);
      seen.add(row.xmin);
      previous = row.xmin;
    }
  }
  expect(rows).toHaveLength(64);
  expect(await audit(g.db.knex)).toEqual({ ok: true, problems: [] });
});
