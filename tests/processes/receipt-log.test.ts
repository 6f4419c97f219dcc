/**
 * Signed receipts and the receipt log, checked from the outside (docs/receipts.md): with real traffic — paid calls,
 * billed and unbilled failures, a delegation tree, refusals — every receipt the API answers carries a signature that
 * an independent verifier (tests/support/independent-verifier.ts: jose, node:crypto and the RFC 8785 reference, none
 * of the project's code) accepts against /.well-known/jwks.json, and so are its children; every receipt's inclusion
 * proof verifies against a signed C2SP checkpoint; the tree rebuilt from the receipts is the checkpointed one; a
 * consistency proof joins an earlier checkpoint to a later one — across a restart and a restore too. Changing any
 * field, any amount by one micro-unit, the order of two leaves, or the key makes a check fail. Bad queries are 4xx.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { emptyPostgres, holonCli } from '../support/backup-checks.js';
import { createTestDatabase } from '../support/db.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { gatewayTest } from '../support/gateway-fixture.js';
import { poll, sleep } from '../support/poll.js';
import {
  decodeBase64,
  merkleRoot,
  receiptLeafHash,
  verifyCheckpointNote,
  verifyConsistency,
  verifyInclusion,
  verifyKeySet,
  verifyReceiptProof,
  verifyReceiptSignature,
  verifyReceiptTree,
  type KeySet,
} from '../support/independent-verifier.js';
import type { Schema, Answer, RefusalWithReceipt, CallRan } from '../support/http.js';

const MANDATE = { allow: { agents: ['examples/*'], capabilities: ['text.*'] }, delegation: { max_depth: 1 } };

interface Proof {
  receipt: string;
  leaf_index: number;
  leaf_hash: string;
  inclusion: string[];
  checkpoint: { origin: string; size: number; root_hash: string; note: string; created_at: string };
}

/** An amount string one micro-unit more ("0.01" → "0.010001"). */
function plusMicro(amount: string): string {
  const [whole, frac = ''] = amount.split('.');
  const micros = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
  const next = micros + 1n;
  return `${next / 1_000_000n}.${String(next % 1_000_000n).padStart(6, '0')}`;
}

/** Every receipt of a tree, the root first. */
function flatten(receipt: any): any[] {
  return [receipt, ...(receipt.children as any[]).flatMap(flatten)];
}

async function keySetOf(g: TestGateway): Promise<KeySet> {
  const res = await fetch(`${g.url}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  const keySet = (await res.json()) as KeySet;
  expect(await verifyKeySet(keySet)).toEqual({ ok: true });
  return keySet;
}

async function proofOf(g: TestGateway, id: string, query = ''): Promise<Proof> {
  const r = await g.get(`/v0/receipts/${id}/proof${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Proof;
}

/** Calls of every kind; the receipts they answered (trees). */
async function traffic(g: TestGateway, mandate: string): Promise<any[]> {
  const answers = [
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/echo-upper', input: { text: 'signed' } }),
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/flaky', input: { mode: 'declared_billed' } }),
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/flaky', input: { mode: 'crash' } }),
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/invoice-pipeline', input: { text: 'Invoice 42', to: 'fr' } }),
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/no-such-agent', input: {} }),
    await g.post<CallRan | RefusalWithReceipt>('/v0/calls', { mandate, agent: 'examples/echo-upper', input: { wrong: true } }),
  ];
  expect(answers.map((a) => a.status)).toEqual([200, 502, 502, 200, 404, 422]);
  return answers.map((a) => a.body.receipt);
}

describe('signed receipts and the receipt log', () => {
  gatewayTest('every receipt verifies independently, in a tree the checkpoints sign; tampering fails', async ({ gateway: g }) => {
    await g.mandate(MANDATE);
    const keySet = await keySetOf(g);
    const answered = await traffic(g, 'alice/test');
    const receipts = answered.flatMap(flatten);
    expect(receipts).toHaveLength(8); // the pipeline's two children
    const proofs = new Map<string, Proof>();
    for (const top of answered) {
      const stored = await g.get(`/v0/receipts/${top.id}`);
      expect(stored.body).toEqual(top);
      expect(await verifyReceiptTree(top, keySet)).toEqual({ ok: true });
    }
    for (const r of receipts) {
      expect(r.signature).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
      const proof = await proofOf(g, r.id);
      expect(await verifyReceiptProof({ receipt: r, proof, keySet })).toEqual({ ok: true });
      proofs.set(r.id, proof);
    }

    // The log holds exactly these receipts, each once: the tree rebuilt from them is the checkpointed tree.
    const latest = await proofOf(g, receipts[receipts.length - 1]!.id);
    const byIndex = [...proofs.values()].sort((a, b) => a.leaf_index - b.leaf_index);
    expect(byIndex.map((p) => p.leaf_index)).toEqual(receipts.map((_, i) => i));
    const leaves = byIndex.map((p) => receiptLeafHash(receipts.find((r) => r.id === p.receipt))!);
    expect(latest.checkpoint.size).toBe(receipts.length);
    expect(merkleRoot(leaves).toString('base64')).toBe(latest.checkpoint.root_hash);

    // Tampering: any field, any amount by one micro-unit, a child, the key.
    const paid = answered[0];
    expect(paid.billed).toBe(true);
    for (const changed of [
      { ...paid, status: 'failed' },
      { ...paid, cost: { ...paid.cost, own: plusMicro(paid.cost.own) } },
      { ...paid, cost: { ...paid.cost, total: plusMicro(paid.cost.total) } },
      { ...paid, splits: paid.splits.map((s: any, i: number) => (i === 0 ? { ...s, amount: plusMicro(s.amount) } : s)) },
      { ...paid, created_at: '2026-01-01T00:00:00.000Z' },
      { ...paid, approval: 'ap_forged' },
    ]) {
      expect(await verifyReceiptSignature(changed, keySet)).toMatchObject({ ok: false });
      expect(await verifyReceiptProof({ receipt: changed, proof: proofs.get(paid.id)!, keySet })).toMatchObject({ ok: false });
    }
    const pipeline = answered[3];
    const forgedChild = {
      ...pipeline,
      children: [{ ...pipeline.children[0], cost: { ...pipeline.children[0].cost, own: plusMicro(pipeline.children[0].cost.own) } }, pipeline.children[1]],
    };
    expect(await verifyReceiptTree(forgedChild, keySet)).toMatchObject({ ok: false });
    const otherX = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    const otherKeys: KeySet = { keys: keySet.keys.map((k) => ({ ...k, x: otherX })) };
    expect(await verifyReceiptSignature(paid, otherKeys)).toMatchObject({ ok: false });
    expect(verifyCheckpointNote(latest.checkpoint.note, otherKeys)).toMatchObject({ ok: false });

    // Two leaves swapped: neither proves at the other's place.
    const [a, b] = [proofs.get(receipts[1]!.id)!, proofs.get(receipts[2]!.id)!].map((p) => ({ p, leaf: decodeBase64(p.leaf_hash)! }));
    const at = (p: Proof) => (p.checkpoint.size === latest.checkpoint.size ? p : undefined);
    const pa = at(a!.p) ?? (await proofOf(g, a!.p.receipt, `?checkpoint=${latest.checkpoint.size}`));
    const pb = at(b!.p) ?? (await proofOf(g, b!.p.receipt, `?checkpoint=${latest.checkpoint.size}`));
    const root = decodeBase64(latest.checkpoint.root_hash)!;
    const path = (p: Proof) => p.inclusion.map((h) => decodeBase64(h)!);
    expect(verifyInclusion(a!.leaf, pa.leaf_index, pa.checkpoint.size, path(pa), root)).toBe(true);
    expect(verifyInclusion(a!.leaf, pb.leaf_index, pb.checkpoint.size, path(pb), root)).toBe(false);
    expect(verifyInclusion(b!.leaf, pa.leaf_index, pa.checkpoint.size, path(pa), root)).toBe(false);
    expect(merkleRoot([leaves[0]!, leaves[2]!, leaves[1]!, ...leaves.slice(3)]).equals(root)).toBe(false);

    // A later checkpoint extends the earlier one: the consistency proof verifies, and not against another root.
    const first = proofs.get(receipts[0]!.id)!.checkpoint;
    await traffic(g, 'alice/test');
    const later = (await g.get('/v0/log/checkpoint')).body as Proof['checkpoint'];
    const newest =
      later.size >= first.size + 8
        ? later
        : (await proofOf(g, (await g.get<Answer<'listReceipts', 200>>('/v0/receipts?limit=1')).body.receipts[0]!.id)).checkpoint;
    expect(verifyCheckpointNote(newest.note, keySet)).toMatchObject({ ok: true, size: newest.size, origin: newest.origin });
    const c = await g.get<Answer<'readLogConsistency', 200>>(`/v0/log/consistency?from=${first.size}&to=${newest.size}`);
    expect(c.status).toBe(200);
    const proof = (c.body.proof as string[]).map((h) => decodeBase64(h)!);
    const [r1, r2] = [decodeBase64(first.root_hash)!, decodeBase64(newest.root_hash)!];
    expect(verifyConsistency(first.size, newest.size, proof, r1, r2)).toBe(true);
    expect(verifyConsistency(first.size, newest.size, proof, r2, r1)).toBe(false);

    // Bad queries are refused, never a 5xx; a receipt that does not exist has no proof.
    for (const q of ['from=abc&to=1', 'from=1', 'from=3&to=2', `from=0&to=${newest.size + 1}`, 'from=-1&to=2', 'from=01&to=2', 'from=1&from=2&to=3']) {
      const r = await g.get<Schema<'Error'>>(`/v0/log/consistency?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
    expect((await g.get(`/v0/receipts/${paid.id}/proof?checkpoint=999999`)).status).toBe(400);
    expect((await g.get(`/v0/receipts/${receipts[7]!.id}/proof?checkpoint=1`)).status).toBe(400);
    expect((await g.get(`/v0/receipts/${paid.id}/proof?checkpoint=x`)).status).toBe(400);
    expect((await g.get('/v0/receipts/r_nope/proof')).status).toBe(404);
  });

  test('the settler signs a checkpoint every HOLON_CHECKPOINT_S while receipts arrive, and none while the log is quiet', async () => {
    const g = await startTestGateway({ config: { checkpointS: 1 } });
    try {
      await g.mandate(MANDATE);
      const sizes = async () => (await g.db.knex('receipt_log_checkpoints').orderBy('size').pluck('size')).map(Number);
      const receipts = (await traffic(g, 'alice/test')).flatMap(flatten);
      // Nobody asked for a proof or a checkpoint: the settler's timer signs the one covering every receipt.
      await poll(async () => (await sizes()).includes(receipts.length), { what: 'a checkpoint of every receipt', timeoutMs: 10_000 });
      const quiet = await sizes();
      await sleep(2_500);
      expect(await sizes()).toEqual(quiet);
      const newest = (await g.get('/v0/log/checkpoint')).body as Proof['checkpoint'];
      expect(newest.size).toBe(receipts.length);
      expect(verifyCheckpointNote(newest.note, await keySetOf(g))).toMatchObject({ ok: true, size: receipts.length });
      expect(await audit(g.db.knex)).toEqual({ ok: true, problems: [] });
    } finally {
      await g.stop();
    }
  });

  test('a proof uses the newest checkpoint when it covers the receipt: asking again signs nothing new', async () => {
    const g = await startTestGateway({ config: { checkpointS: 3600 } });
    try {
      await g.mandate(MANDATE);
      const count = async () => Number((await g.db.knex('receipt_log_checkpoints').count({ n: '*' }))[0]!.n);
      const [first] = await traffic(g, 'alice/test');
      const covering = (await proofOf(g, first.id)).checkpoint;
      await traffic(g, 'alice/test');
      const before = await count();
      const again = await proofOf(g, first.id);
      expect(again.checkpoint).toEqual(covering);
      expect(await count()).toBe(before);
      expect(await verifyReceiptProof({ receipt: first, proof: again, keySet: await keySetOf(g) })).toEqual({ ok: true });
      // A receipt the newest checkpoint does not hold gets a new one, of the whole log.
      const newest = (await g.get<Answer<'listReceipts', 200>>('/v0/receipts?limit=1')).body.receipts[0]!;
      expect((await proofOf(g, newest.id)).checkpoint.size).toBe(covering.size + 8);
      expect(await count()).toBe(before + 1);
    } finally {
      await g.stop();
    }
  });

  test('checkpoints before and after a restart and a restore are consistent; the restored log audits', async () => {
    const db = await createTestDatabase('postgres');
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-log-'));
    const target = await emptyPostgres();
    const gateways: TestGateway[] = [];
    const start = async (url: string) => {
      const g = await startTestGateway({ databaseUrl: url });
      gateways.push(g);
      return g;
    };
    const checkpointAfter = async (g: TestGateway, receipts: any[]) => (await proofOf(g, receipts[receipts.length - 1].id)).checkpoint;
    const consistent = async (g: TestGateway, from: Proof['checkpoint'], to: Proof['checkpoint']) => {
      const c = await g.get<Answer<'readLogConsistency', 200>>(`/v0/log/consistency?from=${from.size}&to=${to.size}`);
      expect(c.status).toBe(200);
      const proof = (c.body.proof as string[]).map((h) => decodeBase64(h)!);
      return verifyConsistency(from.size, to.size, proof, decodeBase64(from.root_hash)!, decodeBase64(to.root_hash)!);
    };
    try {
      const g1 = await start(db.url!);
      await g1.mandate(MANDATE);
      const before = await checkpointAfter(g1, await traffic(g1, 'alice/test'));
      await g1.stop();

      const g2 = await start(db.url!);
      const restarted = await checkpointAfter(g2, await traffic(g2, 'alice/test'));
      expect(restarted.size).toBe(before.size + 8);
      expect(await consistent(g2, before, restarted)).toBe(true);
      const keys = await keySetOf(g2);
      expect(verifyCheckpointNote(restarted.note, keys)).toMatchObject({ ok: true });
      await g2.stop();

      const file = path.join(dir, 'backup.jsonl');
      const backup = await holonCli(['backup', '--out', file], { DATABASE_URL: db.url! });
      expect(backup.code, backup.stderr).toBe(0);
      const restored = await holonCli(['restore', '--in', file], { DATABASE_URL: target.url });
      expect(restored.code, restored.stderr).toBe(0);

      const g3 = await start(target.url);
      const after = await checkpointAfter(g3, await traffic(g3, 'alice/test'));
      expect(after.size).toBe(restarted.size + 8);
      expect(await consistent(g3, before, after)).toBe(true);
      expect(await consistent(g3, restarted, after)).toBe(true);
      // The restored log's receipts still prove against the checkpoint signed before the backup.
      const old = await proofOf(
        g3,
        (await g3.get<Answer<'listReceipts', 200>>('/v0/receipts?limit=200')).body.receipts.at(-1)!.id,
        `?checkpoint=${before.size}`,
      );
      expect(await verifyReceiptProof({ receipt: (await g3.get(`/v0/receipts/${old.receipt}`)).body, proof: old, keySet: await keySetOf(g3) })).toEqual({
        ok: true,
      });
      await g3.stop();
      const restoredDb = await target.open();
      try {
        expect(await audit(restoredDb.knex)).toEqual({ ok: true, problems: [] });
      } finally {
        await restoredDb.close();
      }
    } finally {
      for (const g of gateways) await g.stop().catch(() => undefined);
      await target.drop();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
